"""The free device slots of one Verifier, and which one a judgement takes.

A judgement takes the free slot that saves it the most: one whose reference worker already has its problem set up
(no set-up, no reference trials), then one with a live spare candidate worker, then the one idle longest. A busy
slot is never waited for while another is free, so affinity never leaves a GPU idle.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kernelmosaic.verify.slot import DeviceSlot

__all__ = ["SlotPool"]


class SlotPool:
    def __init__(self, slots: Sequence[DeviceSlot]) -> None:
        self._free: list[DeviceSlot] = list(slots)  # idle longest first
        self._changed = threading.Condition()

    def take(self, problem_sha: str = "") -> DeviceSlot:
        """The best free slot for a judgement of `problem_sha` ("" = any), waiting for one to come free."""
        from kernelmosaic.verify.pool import stopping_death
        from kernelmosaic.verify.stopping import stop_requested

        with self._changed:
            while not self._free:
                if stop_requested():  # Ctrl-C: a judgement still waiting for a slot never starts
                    raise stopping_death()
                self._changed.wait(0.2)
            best = max(self._free, key=lambda s: (s.holds(problem_sha), s.has_spare()))  # ties: the first, idle longest
            self._free.remove(best)
            return best

    def release_idle(self, device: str) -> int:
        """The idle slots of `device` give their reference workers up (their device memory with them; the next
        judgement there sets its problem up again): a judgement that must hold the device alone (`verify/alone.py`).
        Returns how many went."""
        with self._changed:
            idle = [s for s in self._free if s.device == device and s.ref is not None]
            for slot in idle:
                slot.release_reference()
        return len(idle)

    def put(self, slot: DeviceSlot) -> None:
        with self._changed:
            self._free.append(slot)
            self._changed.notify()
