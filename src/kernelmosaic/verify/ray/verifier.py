"""The Verifier's interface over the cluster's judges, for the agent's tools and evaluation: `verify`, `compile`,
`profile`, `device_peaks`, as a local `Verifier` offers them, each call a job of the `Dispatcher`."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

from kernelmosaic.contracts.results import CompileResult, DevicePeaks, ProfileReport
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.config import Policy, TimingProfile, VerifyConfig
from kernelmosaic.verify.ray.dispatch import Dispatcher
from kernelmosaic.verify.ray.inputs import read_sources
from kernelmosaic.verify.robustness import Alternative

__all__ = ["RayVerifier", "RayVerifierSet"]


class RayVerifier:
    """Judges on the cluster under `config`. Calls about one problem go to one judge (its reference worker keeps
    that problem set up), chosen by the problem's path."""

    def __init__(self, config: VerifyConfig, dispatcher: Dispatcher) -> None:
        self.config, self.dispatcher = config, dispatcher

    @property
    def device_count(self) -> int:
        return self.dispatcher.judge_count

    def _affinity(self, problem: Path) -> int:
        return zlib.crc32(str(Path(problem).resolve()).encode())

    def verify(self, problem: Path, candidate: Path, *, timing: bool | None = None, sanitize: bool | None = None,
               policy: Policy | None = None, alternatives: Sequence[Alternative] = (),
               timing_profile: TimingProfile | None = None) -> Verdict:
        options = {k: v for k, v in (("timing", timing), ("sanitize", sanitize), ("policy", policy),
                                     ("timing_profile", timing_profile)) if v is not None}
        sources = read_sources(problem, candidate, list(alternatives))
        return self.dispatcher.verify(self.config, sources, options, self._affinity(problem))

    def compile(self, candidate: Path) -> CompileResult:
        return self.dispatcher.compile(self.config, read_sources(candidate, candidate))

    def profile(self, problem: Path, candidate: Path) -> ProfileReport:
        return self.dispatcher.call("profile", self.config, read_sources(problem, candidate),
                                    affinity=self._affinity(problem))

    def device_peaks(self) -> DevicePeaks:
        return self.dispatcher.call("device_peaks", self.config)

    def close(self) -> None:
        """The judges belong to the cluster run, not to this view of them."""


class RayVerifierSet:
    """`verifiers(precision)` as `agent.verifiers.VerifierSet` offers it, every precision on the same judges."""

    def __init__(self, base: VerifyConfig, dispatcher: Dispatcher) -> None:
        self.base, self.dispatcher = base, dispatcher
        self._by_precision: dict[str, RayVerifier] = {}
        self._lock = threading.Lock()

    def __call__(self, precision: str) -> RayVerifier:
        with self._lock:
            if precision not in self._by_precision:
                config = self.base.model_copy(update={"precision": precision})
                self._by_precision[precision] = RayVerifier(config, self.dispatcher)
            return self._by_precision[precision]

    def device_peaks(self) -> DevicePeaks:
        return self("fp32").device_peaks()

    def reseeded(self, seed: int) -> RayVerifierSet:
        """The same settings under another base seed, on the same judges."""
        return RayVerifierSet(self.base.model_copy(update={"seed": seed}), self.dispatcher)

    def close(self) -> None:
        self._by_precision.clear()

    def __enter__(self) -> RayVerifierSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
