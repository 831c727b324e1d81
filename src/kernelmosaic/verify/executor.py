"""Where a batch of verifications runs: the executor interface, and the local pool that implements it by default.

An executor turns (problem, candidate) pairs into (index, verdict) pairs, yielded as each verdict is decided. The
local one is the verifier service when one answers, else an in-process `Verifier` (compiles ahead on a CPU pool,
one long-lived slot per device). `verify/ray/executor.py` adds one on Ray, for many GPUs and many machines.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.config import VerifyConfig

__all__ = ["VerifyExecutor", "LocalVerifyExecutor"]

log = logging.getLogger(__name__)


@runtime_checkable
class VerifyExecutor(Protocol):
    """Judges pairs under one config; yields (index into `pairs`, verdict) in the order verdicts are decided."""

    name: str

    def verify_many(self, config: VerifyConfig, pairs: Sequence[tuple[Path, Path]], *,
                    seeded: bool = False) -> Iterator[tuple[int, Verdict]]:
        """`seeded`: the config's seed was chosen by the caller (a service then judges with it, not its own)."""
        ...


class LocalVerifyExecutor:
    """This machine: the local verifier service when one runs (and `use_service`), else an in-process Verifier."""

    name = "local"

    def __init__(self, devices: list[str] | None = None) -> None:
        self.devices = devices

    def verify_many(self, config: VerifyConfig, pairs: Sequence[tuple[Path, Path]], *,
                    seeded: bool = False) -> Iterator[tuple[int, Verdict]]:
        from kernelmosaic.verify.service_client import remote_verify_many, service_available
        from kernelmosaic.verify.service_errors import ServiceDeclined, ServiceGone
        from kernelmosaic.verify.verifier import Verifier

        left = list(range(len(pairs)))  # indices into `pairs` not judged yet
        if config.use_service and self.devices is None and service_available(config.cache_dir):
            try:  # a refusal comes before any verdict: then nothing was judged there
                yield from remote_verify_many(config, list(pairs), seeded=seeded)
                return
            except ServiceDeclined as exc:
                log.warning("judging in this process: %s", exc)
            except ServiceGone as exc:  # what it answered is kept; the rest is judged here
                log.warning("judging the rest in this process: %s", exc)
                left = [i for i in left if i not in exc.done]
        with Verifier(config, self.devices) as verifier:  # compiles run ahead of judgement (verify/lookahead.py)
            for k, verdict in verifier.verify_many([pairs[i] for i in left]):
                yield left[k], verdict

    def close(self) -> None:
        """Nothing outlives a call."""

    def __enter__(self) -> LocalVerifyExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
