"""Timing one callable the same way for candidate, eager and `torch.compile` subjects.

Each timed call gets fresh inputs and a flushed L2 (a buffer of at least twice the device's L2 is rewritten).
Three events bracket it: `start`, `stream_end` recorded on the current stream when the call returns, and
`end` recorded after a device-wide synchronisation. The reported time is start→stream_end (no host round
trip in it); start→end minus the same bracket around a no-op is the work that finished after the stream did
(side streams, deferred launches), which the parent turns into `timing_anomaly`. Repetitions are chosen by
time, as Triton's `do_bench` does.
"""

from __future__ import annotations

import ctypes
import time

import torch

from .common import package_outputs

__all__ = ["Timer"]

_MIN_REPS, _MAX_REPS = 5, 2000


def _reset_persisting_l2() -> bool:
    """Undo any persisting-L2 window a candidate may have set up; True when the runtime call was found."""
    try:
        lib = ctypes.CDLL(None)
        fn = lib.cudaCtxResetPersistingL2Cache
    except (AttributeError, OSError):
        return False
    return fn() == 0


class Timer:
    def __init__(self, device: str, l2_bytes: int, lead_cycles: int = 0) -> None:
        self.device = device
        self.cuda = device.startswith("cuda")
        self.lead_cycles = int(lead_cycles) if self.cuda else 0
        flush_bytes = max(2 * l2_bytes, 64 << 20) if self.cuda else 32 << 20
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        self.flush_bytes = flush_bytes
        self.l2_reset = _reset_persisting_l2() if self.cuda else False

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def one(self, fn, inputs: list) -> tuple[float, float, float, object]:
        """Time one call; returns (stream ms, device-wide ms, host ms, output). On the CPU all three are host ms."""
        self.flush.fill_(1)
        self._sync()
        if not self.cuda:
            t0 = time.perf_counter()
            out = fn(*inputs)
            ms = (time.perf_counter() - t0) * 1e3
            return ms, ms, ms, out
        start, stream_end, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        if self.lead_cycles:
            torch.cuda._sleep(self.lead_cycles)  # the device is busy while the host enqueues the call below
        t0 = time.perf_counter()
        start.record()
        out = fn(*inputs)
        stream_end.record()
        torch.cuda.synchronize()
        end.record()
        end.synchronize()
        host_ms = (time.perf_counter() - t0) * 1e3
        return start.elapsed_time(stream_end), start.elapsed_time(end), host_ms, out

    def _bracket_ms(self, calls: int = 15) -> float:
        """Median of (device-wide − stream) time around a call that does nothing: the bracket's own cost."""
        gaps = sorted(full - stream for stream, full, _, _ in (self.one(lambda: None, []) for _ in range(calls)))
        return gaps[len(gaps) // 2]

    def measure(self, fn, draw, budget_ms: float, check_at: int = -1) -> dict:
        """Warm up, pick repetitions from the measured cost, and time every call with fresh inputs from `draw()`.

        `check_at`: index of the timed call whose inputs and output are returned for checking by the parent.
        """
        if self.cuda:
            self.l2_reset = _reset_persisting_l2() or self.l2_reset
        warm_ms, warm_calls = 0.0, 0
        wall0 = time.perf_counter()
        while warm_calls < 3 or (warm_ms < 25.0 and warm_calls < 50):
            ms, _, _, _ = self.one(fn, draw())
            warm_ms += ms
            warm_calls += 1
        est = max(warm_ms / warm_calls, 1e-3)
        # a call's wall cost includes drawing fresh inputs and flushing L2: bound the wall time too
        wall = max((time.perf_counter() - wall0) * 1e3 / warm_calls, est)
        reps = int(min(max(min(budget_ms / est, 4 * budget_ms / wall), _MIN_REPS), _MAX_REPS))
        samples, host, trailing = [], [], []
        checked = None
        check_at = check_at % reps if check_at >= 0 else -1
        for i in range(reps):
            inputs = draw()
            ms, full_ms, host_ms, out = self.one(fn, inputs)
            samples.append(ms)
            trailing.append(full_ms - ms)
            host.append(host_ms)
            if i == check_at:  # copied at once: work still running after forward returned shows as a mismatch
                checked = ([x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs], package_outputs(out))
        trailing.sort()
        bracket = self._bracket_ms() if self.cuda else 0.0
        return {"samples": samples, "host": host, "checked": checked,
                "escaped_ms": max(trailing[len(trailing) // 2] - bracket, 0.0)}
