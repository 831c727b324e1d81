"""One shared Verifier per task precision (the verifier's precision is part of its config), created on first use."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.verify.config import VerifyConfig

if TYPE_CHECKING:
    from kernelmosaic.verify.verifier import Verifier

__all__ = ["VerifierSet"]


class VerifierSet:
    """Callable as `verifiers(precision)`; every episode of that precision shares the same worker processes."""

    def __init__(self, base: VerifyConfig) -> None:
        self.base = base
        self._by_precision: dict[str, Verifier] = {}
        self._lock = threading.Lock()
        self._reseeded: list[VerifierSet] = []

    def __call__(self, precision: str) -> Verifier:
        from kernelmosaic.verify import Verifier

        with self._lock:
            if precision not in self._by_precision:
                self._by_precision[precision] = Verifier(self.base.model_copy(update={"precision": precision}))
            return self._by_precision[precision]

    def device_peaks(self) -> DevicePeaks:
        """The device's peaks, measured once by the fp32 verifier."""
        return self("fp32").device_peaks()

    def reseeded(self, seed: int) -> VerifierSet:
        """The same settings under another base seed (a second judgement of the same candidates), closed with this
        set."""
        other = VerifierSet(self.base.model_copy(update={"seed": seed}))
        with self._lock:
            self._reseeded.append(other)
        return other

    def close(self) -> None:
        with self._lock:
            for verifier in self._by_precision.values():
                verifier.close()
            self._by_precision.clear()
            others, self._reseeded = self._reseeded, []
        for other in others:
            other.close()

    def __enter__(self) -> VerifierSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
