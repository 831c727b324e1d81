"""The device's lock held by the reference worker itself around the first `torch.compile` call, let go of while
Dynamo and Inductor compile.

The verifier holds a GPU shared around every worker call that may run kernels, so that no kernel lands in another
judgement's timing phase, which holds it alone (`verify/devlock.py`). Building the `torch.compile` baseline is one
call that compiles for seconds to minutes (host work, no kernel) and then runs the compiled graphs: held shared for
its whole length, it kept every other judgement's timing waiting (up to 265 s for one L3 problem on the H100). Here
the reference worker, trusted code, takes the same lock file shared itself, and Dynamo's compile callbacks let go of
it from the start of each compile (after the kernels queued so far have finished) to its end. Inputs, eager code
between graph breaks and the compiled graphs' runs (Triton's first-launch autotuning included) all run held.

Imports only the standard library and torch; without Dynamo's callbacks the lock is held throughout, as before.
"""

from __future__ import annotations

import fcntl
import os
import time

import torch

__all__ = ["CompileShare"]


class CompileShare:
    """`with CompileShare(path, device) as share:` the lock file `path` held shared (nothing when `path` is None)
    except while Dynamo compiles; `share.unheld_s` is how long it was let go of, `share.compiles` how many times."""

    def __init__(self, path: str | None, device: str) -> None:
        self.path, self.device = path, device
        self.unheld_s, self.compiles = 0.0, 0
        self._fd: int | None = None
        self._since: float | None = None
        self._handler = None

    def __enter__(self) -> CompileShare:
        if self.path is None:
            return self
        self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        fcntl.flock(self._fd, fcntl.LOCK_SH)
        try:
            from torch._dynamo.callback import callback_handler
        except ImportError:  # an older torch: held throughout
            return self
        self._handler = callback_handler
        callback_handler.register_start_callback(self._let_go)
        callback_handler.register_end_callback(self._take)
        return self

    def __exit__(self, *exc) -> None:
        if self._handler is not None:
            self._handler.remove_start_callback(self._let_go)
            self._handler.remove_end_callback(self._take)
            self._handler = None
        if self._fd is None:
            return
        try:
            if self._since is None and self.device.startswith("cuda"):
                torch.cuda.synchronize()  # the last kernels ran while held
        finally:
            os.close(self._fd)  # lets go of the lock
            self._fd = None

    def _let_go(self, _args) -> None:
        if self._fd is None or self._since is not None:
            return
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._since = time.perf_counter()
        self.compiles += 1

    def _take(self, _args) -> None:
        if self._fd is None or self._since is None:
            return
        self.unheld_s += time.perf_counter() - self._since
        self._since = None
        fcntl.flock(self._fd, fcntl.LOCK_SH)
