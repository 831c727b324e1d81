"""The `torch.compile` baseline of a problem: built in its reference worker, timed with the device held alone, kept
on disk (`baselines.py`), and built once per key in a process.

Every timed verdict of a problem compares against the same baseline samples, so the baseline is timed in a block of
its own rather than interleaved with one candidate's rounds. A build holds a device slot and a host core busy (24-33 s
on the H200), so judgements of one problem on several device slots build it once: the second waits for the first and
reads its samples. `Verifier.prepare` calls it ahead of a batch's judgements.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.baselines import CompileBaseline, load_baseline, save_baseline
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Exclusive, Stop
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError
from kernelmosaic.verify.replies import timing_reply

__all__ = ["ROUND_SEEDS", "Hold", "CompileBaselineRun", "baseline_call", "compile_baseline"]

ROUND_SEEDS = 100_000
"""Each round's calls draw inputs from seeds base + i; rounds and subjects start this far apart."""

Hold = Callable[[], AbstractContextManager[object]]
"""Entered around each baseline timing request: the candidate's process tree held still (`freeze.held_still`)."""

_GUARD = threading.Lock()
_BUILDING: dict[str, threading.Lock] = {}


@dataclass(frozen=True)
class CompileBaselineRun:
    """What `compile_baseline` found."""

    baseline: CompileBaseline | None
    """The samples; None when there are none."""
    cached: bool
    """They came from the disk cache (built by an earlier judgement or `Verifier.prepare`)."""
    error: str
    """Why there are none ("disabled", the build's or the timing's error)."""


def baseline_call(ref: Worker, op: str, config: VerifyConfig, what: str, lend_device: bool = False,
                  **args) -> tuple[dict | None, str]:
    """One call for the `torch.compile` baseline: (result, "") or (None, why it failed). A baseline that fails
    costs the baseline, not the verdict; a reference worker that dies is `bad_problem`."""
    try:
        return ref.call(op, config.timing_timeout_s, lend_device=lend_device, **args), ""
    except WorkerError as exc:
        return None, f"{exc.error.get('type')}: {exc.error.get('message', '')[:300]}"
    except WorkerDied as exc:
        raise Stop(Status.bad_problem, f"the reference worker died while {what}: {exc.detail}") from exc


def compile_baseline(ref: Worker, l2_bytes: int, config: VerifyConfig, key: str | None,
                     exclusive: Exclusive, hold: Hold = contextlib.nullcontext) -> CompileBaselineRun:
    """The baseline's samples for this problem (set up in `ref`): from the disk cache under `key`, else built and
    timed here and saved under it (`key` None: the cache is off, nothing is kept). One build per key at a time in
    this process: a second caller waits and reads the first one's samples. `hold()` is entered around each timing
    request (the candidate held still, `freeze.py`). Raises Stop when `ref` dies."""
    if not config.compile_baseline:
        return CompileBaselineRun(None, False, "disabled")
    if not key:
        return _build_and_time(ref, l2_bytes, config, exclusive, hold)
    with _GUARD:
        building = _BUILDING.setdefault(key, threading.Lock())
    with building:
        if (cached := load_baseline(config.cache_dir, key)) is not None:
            return CompileBaselineRun(cached, True, "")
        run = _build_and_time(ref, l2_bytes, config, exclusive, hold)
        if run.baseline is not None:
            save_baseline(config.cache_dir, key, run.baseline)
        return run


def _build_and_time(ref: Worker, l2_bytes: int, config: VerifyConfig, exclusive: Exclusive,
                    hold: Hold) -> CompileBaselineRun:
    """Build (host work, the device shared) then time every round with the device alone."""
    base = config.seed + 1_000_000
    # the reference worker holds the device itself, except while Dynamo and Inductor compile (host work that kept
    # every other judgement's timing waiting for minutes when held here)
    _, error = baseline_call(ref, "prepare_compile", config, "building torch.compile", lend_device=True,
                             seed=base + 3 * ROUND_SEEDS)
    if error:
        return CompileBaselineRun(None, False, error)
    rounds, budget = config.timing_plan()
    samples: list[float] = []
    host: list[float] = []
    with exclusive():
        for r in range(rounds):
            with hold():
                res, error = baseline_call(ref, "time", config, "timing torch.compile", kind="compile", budget_ms=budget,
                                           seed=base + 10 * r * ROUND_SEEDS + 2 * ROUND_SEEDS, l2_bytes=l2_bytes,
                                           lead_us=config.timing_lead_us, wall_ms=config.timing_wall_ms())
            if error:
                return CompileBaselineRun(None, False, error)
            got = timing_reply(res, "timing torch.compile")
            samples += got.samples
            host += got.host_samples
    if not samples:
        return CompileBaselineRun(None, False, "no samples")
    return CompileBaselineRun(CompileBaseline(samples=samples, host_samples=host), False, "")
