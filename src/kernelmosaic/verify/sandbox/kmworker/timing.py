"""Timing one callable the same way for candidate, eager and `torch.compile` subjects.

Each timed call gets fresh inputs and a flushed L2 (a buffer of at least twice the device's L2 is rewritten).
Two events bracket it on the current stream, which in the worker is torch's default stream, the legacy NULL
stream: `start`, and `stream_end` when the call returns. The reported time is start→stream_end (no host round trip
in it). An event on the legacy stream waits for all earlier work of every blocking stream, so a kernel launched
with no stream argument (`kernel<<<grid, block>>>`), on `getCurrentCUDAStream()`, on the per-thread default stream
or on a stream made by plain `cudaStreamCreate` is inside that window. Only a non-blocking stream (torch's pool,
`cudaStreamNonBlocking`) can leave work running past it: once the host has seen `stream_end` complete, the time a
device-wide synchronisation still takes, less the same around a no-op, is the work that escaped the window, which
the parent turns into `timing_anomaly`. That figure starts on the host after `stream_end` completed, so neither the
host's wake-up after it nor another process's time slice on the GPU lands in it. Repetitions are chosen by time,
as Triton's `do_bench` does.

On CUDA, a spin kernel ("lead") runs before the start event, so the device is busy while the host enqueues
the call: the window holds device time, not the host's launch latency (which moves with host load). The lead
covers at least `lead_us` and twice the 90th percentile of the host's enqueue time measured during warm-up.
A share of the calls, shuffled among the others, runs without the lead on an idle device: start→stream_end then
holds the host's launch cost too (host-inclusive call time, what KernelBench's event timing measures). On the
CPU both figures are the same host time.

On the CPU the window also reads one byte of every memory page each output spans (`touch_pages`), for every subject
alike: a call that returns before its output is computed, and computes it when the output is first read (pages
mapped without access, filled by a fault handler), does that work inside the window.

Every call, warm-up included, draws its inputs from its own seed and has its output fingerprinted after the
window closes, so the parent can check any call afterwards; warm-up and timed calls look the same to the callee.
"""

from __future__ import annotations

import ctypes
import mmap
import random
import statistics
import time
from typing import NamedTuple

import torch

from .common import package_outputs

__all__ = ["BURST_SETS", "Timer", "burst", "host_snapshot", "LARGE_BURST_SETS", "repetitions", "lead_short", "touch_pages"]

_MIN_REPS, _MAX_REPS = 5, 2000
_MAX_LEAD_US = 20_000.0
_GUESS_CYCLES_PER_US = 2000.0  # until calibrated: ~2 GHz, the H100/H200 boost clock


def _reset_persisting_l2() -> bool:
    """Undo any persisting-L2 window a candidate may have set up; True when the runtime call was found."""
    try:
        lib = ctypes.CDLL(None)
        fn = lib.cudaCtxResetPersistingL2Cache
    except (AttributeError, OSError):
        return False
    return fn() == 0


class Sample(NamedTuple):
    stream_ms: float
    """start → the call's stream is done (what is reported)."""
    trailing_ms: float
    """Host time a device-wide synchronisation took once the call's stream was done: this process's work still
    running on other (non-blocking) streams, plus the synchronisation's own cost."""
    host_ms: float
    """Host wall time of the call and its synchronisation."""
    enqueue_ms: float
    """Host time to enqueue the call (start event to stream_end event)."""
    out: object


class Timer:
    def __init__(self, device: str, l2_bytes: int, lead_us: float = 0.0) -> None:
        self.device = device
        self.cuda = device.startswith("cuda")
        self.lead_us = float(lead_us) if self.cuda else 0.0
        self.lead_cycles = int(self.lead_us * _GUESS_CYCLES_PER_US)
        flush_bytes = max(2 * l2_bytes, 64 << 20) if self.cuda else 32 << 20
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        self.flush_bytes = flush_bytes
        self.l2_reset = _reset_persisting_l2() if self.cuda else False

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def one(self, fn, inputs: list, lead: bool = True) -> Sample:
        """Time one call (`lead=False`: on an idle device, host-inclusive). On the CPU every figure is host ms."""
        self.flush.fill_(1)
        self._sync()
        if not self.cuda:
            t0 = time.perf_counter()
            out = fn(*inputs)
            touch_pages(out)
            ms = (time.perf_counter() - t0) * 1e3
            return Sample(ms, 0.0, ms, ms, out)
        start, stream_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if self.lead_cycles and lead:
            torch.cuda._sleep(self.lead_cycles)  # the device is busy while the host enqueues the call below
        t0 = time.perf_counter()
        start.record()
        out = fn(*inputs)
        stream_end.record()
        enqueue_ms = (time.perf_counter() - t0) * 1e3
        stream_end.synchronize()
        t1 = time.perf_counter()
        torch.cuda.synchronize()  # every stream of this process: what is left ran outside the window
        t2 = time.perf_counter()
        return Sample(start.elapsed_time(stream_end), (t2 - t1) * 1e3, (t2 - t0) * 1e3, enqueue_ms, out)

    def _cycles_per_us(self) -> float:
        """The spin kernel's clock, measured now (after warm-up, so at the clock the timed calls run at)."""
        cycles = 2_000_000
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        return cycles / max(start.elapsed_time(end) * 1e3, 1.0)

    def _set_lead(self, enqueue_ms: list[float]) -> float:
        """Size the lead from the measured enqueue times; returns it in µs."""
        if not self.lead_us:
            return 0.0
        p90 = sorted(enqueue_ms)[int(0.9 * (len(enqueue_ms) - 1))] * 1e3
        lead_us = min(max(self.lead_us, 2 * p90), _MAX_LEAD_US)
        self.lead_cycles = int(lead_us * self._cycles_per_us())
        return lead_us

    def _bracket_ms(self, calls: int = 15) -> float:
        """Median trailing time around a call that does nothing: the synchronisation's own cost."""
        return statistics.median_high(self.one(lambda: None, []).trailing_ms for _ in range(calls))

    def measure(self, fn, draw, budget_ms: float, check_at: int = -1, escaped: bool = True, seed: int = 0,
                fingerprint=None, wall_ms: float | None = None, snapshot=None, record_at: int = -1,
                recording=None) -> dict:
        """Warm up, size the lead, pick repetitions from the measured cost, and time every call with fresh inputs.

        `draw(seed)`: a fresh input set for one call; call i uses seed `seed + i`.
        `check_at`: index of the timed call whose inputs and output are returned for checking by the parent.
        `escaped`: also measure the synchronisation's own cost and report the work that escaped the window (CUDA).
        `fingerprint(out)`: recorded with the call's seed for every call when given.
        `wall_ms`: host wall time the timed calls may take (default four times `budget_ms`; see `repetitions`).
        `snapshot(inputs, out)`: what is kept of the checked call, taken right after its window closes (default
        `host_snapshot`: both copied to the host; large-output mode keeps a copy of the outputs on the device).
        `record_at`, `recording`: one call more, at that index among the timed ones (modulo their count + 1), runs
        inside `recording()` (the run-time record of the operators forward dispatches), not a sample; the candidate
        cannot tell it from the calls around it (same inputs' draw, same flush and lead), so a forward that computes
        with PyTorch only when it is not checked is seen there.
        """
        snapshot = snapshot or host_snapshot
        if self.cuda:
            self.l2_reset = _reset_persisting_l2() or self.l2_reset
        calls: list[dict] = []

        def call(lead: bool = True, watched: bool = False) -> tuple[Sample, list]:
            s_in = seed + len(calls)
            inputs = draw(s_in)
            if watched:
                with recording():
                    s = self.one(fn, inputs, lead)
            else:
                s = self.one(fn, inputs, lead)
            calls.append({"seed": s_in, "fp": fingerprint(s.out) if fingerprint else []})
            return s, inputs

        warm_ms, warm_wall_ms, enqueue = 0.0, 0.0, []
        while len(enqueue) < 3 or (warm_ms < 25.0 and len(enqueue) < 50):
            t0 = time.perf_counter()
            s, inputs = call()
            warm_wall_ms += (time.perf_counter() - t0) * 1e3
            warm_ms += s.stream_ms
            enqueue.append(s.enqueue_ms)
            del s, inputs  # one call's inputs and outputs alive at a time (KernelBench's take gigabytes each)
        warm = len(enqueue)
        lead_us = self._set_lead(enqueue)
        est = max(warm_ms / warm, 1e-3)
        # a call's wall cost includes drawing fresh inputs, flushing L2 and the lead (warm-up ran the floor)
        wall = max(warm_wall_ms / warm + (lead_us - self.lead_us) / 1e3, est)
        reps = repetitions(budget_ms, 4 * budget_ms if wall_ms is None else wall_ms, est, wall)
        # host-inclusive calls (no lead) are shuffled among the device-time ones; on the CPU they are the same calls
        modes = [True] * reps + ([False] * max(_MIN_REPS, reps // 4) if self.cuda else [])
        random.Random(seed).shuffle(modes)
        samples, host_samples, host, trailing, enqueued = [], [], [], [], []
        checked, checked_seed = None, -1
        check_at = check_at % len(modes) if check_at >= 0 else -1
        if record_at >= 0 and recording is not None:  # one call more, among the others, watched and not a sample
            record_at %= len(modes) + 1
            modes.insert(record_at, True)
            check_at += check_at >= record_at
        else:
            record_at = -1
        for i, lead in enumerate(modes):
            s, inputs = call(lead, watched=i == record_at)
            sample = i != record_at  # the watched call's time holds the record's own cost
            if lead and sample:
                samples.append(s.stream_ms)
                trailing.append(s.trailing_ms)
                host.append(s.host_ms)
                enqueued.append(s.enqueue_ms)
            if sample and (not lead or not self.cuda):
                host_samples.append(s.stream_ms)
            if i == check_at:  # copied at once: work still running after forward returned shows as a mismatch
                checked, checked_seed = snapshot(inputs, s.out), calls[-1]["seed"]
            del s, inputs  # before the next call draws its own
        result = {"samples": samples, "host_samples": host_samples, "host": host, "checked": checked,
                  "checked_seed": checked_seed,
                  "lead_us": lead_us, "escaped_ms": None, "calls": calls, "warmup_calls": warm,
                  "lead_short": lead_short(enqueued, lead_us) if self.cuda else 0}
        if escaped:
            bracket = self._bracket_ms() if self.cuda else 0.0
            result["escaped_ms"] = max(statistics.median_high(trailing) - bracket, 0.0)
        return result


_PAGE = mmap.PAGESIZE
_FEW_PAGES = 32
"""Up to this many pages are read one at a time from Python; more through one strided copy in torch."""


def touch_pages(out) -> None:
    """Read one byte of every memory page each host tensor of `out` spans (a tuple's items too). Work a call defers
    to the first read of its output, by mapping the pages without access or leaving them missing behind a fault
    handler, then runs here, inside the timed window. ~0.5 µs a page for small outputs; ~5% of a 256 MiB ReLU on
    two cores."""
    for x in out if isinstance(out, tuple) else (out,):
        if type(x) is not torch.Tensor or x.device.type != "cpu" or x.layout != torch.strided or x.numel() == 0:
            continue  # anything else is refused or copied by the checks after the window
        span = (1 + sum((n - 1) * st for n, st in zip(x.shape, x.stride(), strict=True))) * x.element_size()
        start = x.data_ptr()
        first, last = start - start % _PAGE, start + span - 1
        if (last - first) // _PAGE < _FEW_PAGES:
            for addr in range(start, last + 1, _PAGE):
                ctypes.string_at(addr, 1)
            ctypes.string_at(last, 1)
            continue
        raw = torch.empty(0, dtype=torch.uint8).set_(x.untyped_storage(), x.storage_offset() * x.element_size(),
                                                     (span,), (1,))
        raw[::_PAGE].clone()
        raw[span - 1:].clone()


def host_snapshot(inputs: list, out) -> tuple[list, dict]:
    """The checked call's inputs and outputs copied to the host, to be sent whole (the ordinary mode)."""
    return [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs], package_outputs(out)


def lead_short(enqueue_ms: list[float], lead_us: float) -> int:
    """Device-time calls whose host enqueue outlasted the lead: the device may have gone idle before the call's
    kernels arrived, so their window can hold host time. The lead is sized from the warm-up's enqueue times; a
    host that gets busier afterwards (other processes starting, compiling) makes this count grow."""
    if lead_us <= 0:
        return 0
    return sum(1 for ms in enqueue_ms if ms * 1e3 > lead_us)


def repetitions(budget_ms: float, wall_ms: float, est_ms: float, call_wall_ms: float) -> int:
    """Timed calls for one subject: enough to measure `budget_ms` of its own time (`est_ms` a call), as long as
    they fit in `wall_ms` of host wall time (`call_wall_ms` a call, with fresh inputs, the L2 flush and the lead);
    never fewer than 5 nor more than 2000. Device-time-only calls add a quarter more on CUDA (host-inclusive ones)."""
    return int(min(max(min(budget_ms / est_ms, wall_ms / call_wall_ms), _MIN_REPS), _MAX_REPS))


BURST_SETS = 4
"""Draws a wall-clock burst's positional arguments rotate through (`burst_inputs.BurstInputs`); the other arguments
move window every call."""
LARGE_BURST_SETS = 2
"""The same in large-output mode, where one input set can take gigabytes of device memory (and the candidate's and
eager's sets may be alive at once). Two is the fewest that keeps consecutive calls from sharing input buffers."""


def burst(fn, inputs, calls: int, device: str, printer) -> float:
    """`calls` back-to-back calls, each on its own inputs (`inputs.call(k)`, views made in the loop) and each output
    projected by `printer` right after it (device work, no per-call sync); returns this process's own measurement
    of them (ms). The parent times the same request with its own clock: a clock rewritten inside the worker's
    process cannot shorten the parent's, and the projections answer for every call's result."""
    t0 = time.perf_counter()
    for k in range(calls):
        out = fn(*inputs.call(k))
        printer(k, out)
        del out
    printer.finish()  # inside the measurement, for both subjects: the parent's clock holds it too
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3
