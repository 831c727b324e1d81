"""What "the device held alone" means inside one Verifier: no other judgement of it on the device, and no memory of
its other slots there.

The device lock (`devlock`) keeps other work off the device during a call, but between calls every judgement in
flight keeps its memory: its candidate worker's tensors and its reference worker's problem (inputs, outputs, the
trials). Idle slots keep theirs too, so that the next judgement of the same problem skips the set-up. A judgement that
must hold the device alone (it does not fit beside the others, or it ran out of memory beside them) would otherwise
run beside all of that: on the H200 (2026-12-04) an honest L1-norm kernel at KernelBench's size (8 GiB inputs) was
judged `resource_error` with 82 GiB held by another slot's reference worker.

So every judgement enters its device's `AloneGate` shared for as long as it holds a slot, and one that must be alone
enters it exclusively: it waits for the judgements in flight to end (new ones wait for it), and then the idle slots of
the device give their reference workers up (`SlotPool.release_idle`). Other processes are outside this: what they
hold is told apart from the candidate's need by the driver's figures (`device_memory.crowded_by_others`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["AloneGate"]


class AloneGate:
    """Many shared holders or one exclusive holder; a waiting exclusive holder goes before new shared ones (a steady
    stream of judgements never starves the one that must be alone)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0

    def _wait(self) -> None:
        from kernelmosaic.verify.pool import stopping_death
        from kernelmosaic.verify.stopping import stop_requested

        if stop_requested():  # Ctrl-C: a judgement still waiting for the device never starts
            raise stopping_death()
        self._cond.wait(0.2)

    @contextlib.contextmanager
    def hold(self, exclusive: bool) -> Iterator[None]:
        with self._cond:
            if exclusive:
                self._waiting += 1
                try:
                    while self._exclusive or self._shared:
                        self._wait()
                finally:
                    self._waiting -= 1
                self._exclusive = True
            else:
                while self._exclusive or self._waiting:
                    self._wait()
                self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                if exclusive:
                    self._exclusive = False
                else:
                    self._shared -= 1
                self._cond.notify_all()
