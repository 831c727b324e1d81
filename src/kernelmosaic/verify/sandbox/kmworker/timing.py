"""Timing one callable the same way for candidate, eager and `torch.compile` subjects.

Each timed call gets fresh inputs, a flushed L2 (a buffer of at least twice the device's L2 is rewritten), and
is bracketed by CUDA events around a device-wide synchronisation, so work a candidate pushes to side streams is
inside the measured window. Repetitions are chosen by time, as Triton's `do_bench` does.
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
    def __init__(self, device: str, l2_bytes: int) -> None:
        self.device = device
        self.cuda = device.startswith("cuda")
        flush_bytes = max(2 * l2_bytes, 64 << 20) if self.cuda else 32 << 20
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        self.flush_bytes = flush_bytes
        self.l2_reset = _reset_persisting_l2() if self.cuda else False

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def one(self, fn, inputs: list) -> tuple[float, float, object]:
        """Time one call; returns (device or host ms, host ms, output)."""
        self.flush.fill_(1)
        self._sync()
        if not self.cuda:
            t0 = time.perf_counter()
            out = fn(*inputs)
            ms = (time.perf_counter() - t0) * 1e3
            return ms, ms, out
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        out = fn(*inputs)
        torch.cuda.synchronize()
        end.record()
        end.synchronize()
        host_ms = (time.perf_counter() - t0) * 1e3
        return start.elapsed_time(end), host_ms, out

    def measure(self, fn, draw, budget_ms: float, check_at: int = -1) -> dict:
        """Warm up, pick repetitions from the measured cost, and time every call with fresh inputs from `draw()`.

        `check_at`: index of the timed call whose inputs and output are returned for checking by the parent.
        """
        if self.cuda:
            self.l2_reset = _reset_persisting_l2() or self.l2_reset
        warm_ms, warm_calls = 0.0, 0
        wall0 = time.perf_counter()
        while warm_calls < 3 or (warm_ms < 25.0 and warm_calls < 50):
            ms, _, _ = self.one(fn, draw())
            warm_ms += ms
            warm_calls += 1
        est = max(warm_ms / warm_calls, 1e-3)
        # a call's wall cost includes drawing fresh inputs and flushing L2: bound the wall time too
        wall = max((time.perf_counter() - wall0) * 1e3 / warm_calls, est)
        reps = int(min(max(min(budget_ms / est, 4 * budget_ms / wall), _MIN_REPS), _MAX_REPS))
        samples, host = [], []
        checked = None
        check_at = check_at % reps if check_at >= 0 else -1
        for i in range(reps):
            inputs = draw()
            ms, host_ms, out = self.one(fn, inputs)
            samples.append(ms)
            host.append(host_ms)
            if i == check_at:  # copied at once: work still running after forward returned shows as a mismatch
                checked = ([x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs], package_outputs(out))
        return {"samples": samples, "host": host, "checked": checked}
