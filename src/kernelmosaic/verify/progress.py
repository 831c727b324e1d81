"""Progress on screen: a one-line display of one verification (spinner, worker phase, elapsed time), and one plain
line per finished item of a long command where the console is not a terminal.

The phase comes from the worker pool's per-request DEBUG records (`kernelmosaic.verify.pool.calls`), so the
verifier itself knows nothing about screens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kernelmosaic.commands import Console
from kernelmosaic.contracts.speedup import timing_speedups
from kernelmosaic.contracts.verdict import Timing
from kernelmosaic.verify.pool import calls_log

__all__ = ["PHASES", "DoneLines", "phase_progress", "time_line", "speed_detail"]

PHASES = {
    "compile": "compiling the candidate", "build": "compiling the candidate", "setup": "setting up the reference", "trials": "running the reference",
    "load": "loading the candidate", "init": "constructing ModelNew", "run": "checking correctness",
    "refill": "checking correctness on refilled buffers", "census": "counting kernels",
    "probe": "checking that the custom kernels' output is used", "prepare_compile": "building the torch.compile baseline",
    "time": "timing", "eager": "timing", "burst": "timing", "burst_inputs": "timing", "burst_check": "timing", "burst_release": "timing",
    "burst_print_cost": "timing", "burst_prints": "checking timed calls",
    "compute": "checking timed calls", "run_shared": "checking correctness", "refill_shared": "checking correctness",
    "release_shared": "checking correctness", "device_memory": "reading the device's free memory",
    "peak_memory": "measuring the candidate's memory", "check_given": "checking correctness",
    "compare_held": "checking correctness", "release_held": "checking correctness", "large_trial": "running the reference",
    "plan_large": "running the reference", "hold_probe": "checking that the custom kernels' output is used",
    "compare_probe": "checking that the custom kernels' output is used",
    "check_calls": "checking timed calls", "inputs_changed": "checking timed calls", "peaks": "measuring device peaks",
    "pch": "precompiling the torch header for this compiler's flags (once; later builds reuse it)",
}
"""What a worker request means to a person; a request not named here shows as its op."""


class _PhaseHandler(logging.Handler):
    def __init__(self, show) -> None:
        super().__init__(logging.DEBUG)
        self.show = show

    def emit(self, record: logging.LogRecord) -> None:
        role, _, op = record.getMessage().partition(" ")
        self.show(PHASES.get(op, op or role))


class _PhaseLines:
    """Where the console is not a terminal (a pipe, a log): one plain line each time the phase changes, with the
    seconds since the start, so a verification of minutes is not silent there."""

    def __init__(self, console: Console, label: str) -> None:
        self.console, self.label = console, label
        self.last = ""
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def __call__(self, phase: str) -> None:
        with self._lock:
            if phase == self.last:
                return
            self.last = phase
            line = f"{self.label}: {phase} ({time.monotonic() - self.started:.1f} s)"
        self.console.print(line, markup=False, highlight=False, soft_wrap=True, emoji=False)


@contextmanager
def phase_progress(console: Console, label: str) -> Iterator[None]:
    """Show `label: phase` with elapsed time on `console` while the block runs: a live line on a terminal (nothing
    is left on screen), one plain line per phase change elsewhere."""
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as bar:
        first = "checking and building the candidate"
        task = bar.add_task(f"{label}: {first}")
        if console.is_terminal:
            def show(phase: str) -> None:
                bar.update(task, description=f"{label}: {phase}", refresh=True)
        else:
            show = _PhaseLines(console, label)
            show(first)
        handler = _PhaseHandler(show)
        saved = (calls_log.level, calls_log.propagate)
        if not calls_log.isEnabledFor(logging.DEBUG):  # under --verbose the records also reach the log as usual
            calls_log.setLevel(logging.DEBUG)
            calls_log.propagate = False
        calls_log.addHandler(handler)
        try:
            yield
        finally:
            calls_log.removeHandler(handler)
            calls_log.setLevel(saved[0])
            calls_log.propagate = saved[1]


class DoneLines:
    """One line per finished item, `[12/42] ITEM  STATUS  18.4 s  (DETAIL)`, printed (and flushed) as it finishes.

    For consoles that are not a terminal (a log file, a pipe, a device call's captured output): there a rich live
    display draws nothing until it stops, so a long run would look stuck. Callers may be on several threads."""

    DETAIL_CHARS = 160
    """A longer detail (a compiler error, a traceback) is cut: the store holds the full text."""

    def __init__(self, console: Console, total: int, done: int = 0, enabled: bool | None = None) -> None:
        self.console, self.total, self.count = console, total, done
        self.enabled = not console.is_terminal if enabled is None else enabled
        """Whether lines are printed (default: only where the console is not a terminal)."""
        self._lock = threading.Lock()

    def skip(self) -> None:
        """Count an item finished before this run (a resume), without a line."""
        with self._lock:
            self.count += 1

    def say(self, item: str, status: str, seconds: float, detail: str = "", where: str = "") -> None:
        """`where`: a second, indented line (e.g. `time_line`), so a run stopped early still shows where time went."""
        if not self.enabled:
            return
        detail = " ".join(detail.split())
        if len(detail) > self.DETAIL_CHARS:
            detail = detail[: self.DETAIL_CHARS - 3] + "..."
        with self._lock:
            self.count += 1
            line = f"[{self.count}/{self.total}] {item}  {status}  {seconds:.1f} s" + (f"  ({detail})" if detail else "")
            # soft_wrap: one line whatever the width; rich flushes the file after each print outside a `with console`
            if where:
                line += "\n    " + where
            self.console.print(line, markup=False, highlight=False, soft_wrap=True, emoji=False)


def time_line(phase_seconds: dict[str, float], at_least_s: float = 0.5, most: int = 8) -> str:
    """`time: sanitize 21.0 s, judge 8.1 s, ...`: a verdict's recorded phases (verdict.phase_seconds) of at least
    `at_least_s`, the longest first. Phases nest (`timing` inside `judge`), so they do not add up to the total."""
    shown = sorted(((v, k) for k, v in phase_seconds.items() if v >= at_least_s), reverse=True)[:most]
    return ("time: " + ", ".join(f"{k} {v:.1f} s" for v, k in shown)) if shown else ""


def speed_detail(timing: Timing | None) -> str:
    """`1.01x vs eager (0.031 / 0.031 ms device; host 0.052 / 0.044 ms)` of a verdict's `Timing`, or `untimed`; an
    unreliable speedup says so after the number (`contracts.speedup`)."""
    if timing is None:
        return "untimed"
    caveat = timing_speedups(timing)["eager_device"].caveat()  # the number stays first, for a reader and grep
    on_host = timing.timer == "host"  # the CPU: one host time, no device time beside it
    text = (f"{timing.speedup_vs_eager:.2f}x vs eager{', ' + caveat if caveat else ''} ("
            f"{timing.candidate.median_ms:.4g} / {timing.eager.median_ms:.4g} ms{'' if on_host else ' device'}")
    if timing.candidate_host is not None and timing.eager_host is not None and not on_host:
        text += f"; host {timing.candidate_host.median_ms:.4g} / {timing.eager_host.median_ms:.4g} ms"
    if timing.lead_short_calls or timing.lead_short_calls_eager:
        text += f"; calls past the lead {timing.lead_short_calls} / {timing.lead_short_calls_eager}"
    return text + ")"
