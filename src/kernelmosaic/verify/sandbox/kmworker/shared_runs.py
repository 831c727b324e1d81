"""Large-output mode of the candidate role: one trial at a time, inputs mapped in and outputs handed out in place.

The parent relays the reference's memfds of one trial's inputs (`kmworker/shared.py`); the candidate copies them
into its own tensors on its device, runs forward (twice on the first trial: the repeat check) and exports its
outputs as shared descriptors (CUDA IPC handles on a GPU, sealed memfds on the CPU) that the reference worker
compares in place (`kmworker/held.py`). Exported outputs stay alive until the next run here. Trial 0's inputs are
kept in host memory (`retained`): later requests that name inputs by `meta` placeholders (census, peak memory,
kernel probes) run on a fresh copy of them, as they would on trial 0's inputs sent whole.
"""

from __future__ import annotations

import torch

from . import integrity
from .inputs import InputTemplate
from .shared import MAILBOX, export_tensors, import_tensors, package_in_place, release, same_bits

__all__ = ["SharedRuns"]


def _copy(items: list, device: str) -> list:
    return [x.to(device, copy=True) if isinstance(x, torch.Tensor) else x for x in items]


def _unchanged(given: torch.Tensor, now) -> bool:
    """`now` (forward's input, on its device) still holds `given`'s bytes (the host copy it was made from; a NaN
    left as it was is unchanged), compared in passes of 64M elements so no device copy of the whole input is made."""
    if not isinstance(now, torch.Tensor) or now.shape != given.shape or now.dtype != given.dtype:
        return False
    if now.device == given.device:
        return same_bits(given, now)
    flat_given, flat_now = given.reshape(-1), now.reshape(-1)
    step = 1 << 26
    return all(same_bits(flat_given[k:k + step].to(now.device), flat_now[k:k + step])
               for k in range(0, flat_given.numel(), step))


class SharedRuns:
    """Mixed into `CandidateRole`, which provides `model`, `device`, `before`, `threads`, `_poison` and
    `_uninitialised_reads_nan`."""

    retained: list | None = None
    """Trial 0's inputs, as the first `run_shared` received them, in host memory."""
    refill_buffers: list | None = None

    def _inputs(self, host_inputs: list) -> list:
        """`host_inputs` on this worker's device; `meta` placeholders (large-output mode) name trial 0's inputs."""
        if any(isinstance(x, torch.Tensor) and x.is_meta for x in host_inputs):
            if self.retained is None:
                raise RuntimeError("inputs named by placeholders, but no large-output trial ran here")
            return _copy(self.retained, self.device)
        from .inputs import to_device

        return to_device(host_inputs, self.device)

    def _received(self, inputs: list[dict]) -> list:
        """The trial's inputs from the parent's memfds, copied onto this worker's device (writable, its own)."""
        return _copy(import_tensors(inputs, MAILBOX.incoming, "cpu"), self.device)

    def _forward(self, inputs: list, poison_sizes: list[int]):
        self._poison(poison_sizes)
        with self._uninitialised_reads_nan():
            out = self.model(*inputs)
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
        return out

    @staticmethod
    def _export(out) -> dict:
        packed = package_in_place(out)
        return {**packed, "tensors": export_tensors(packed["tensors"])}

    @torch.no_grad()
    def run_shared(self, inputs: list[dict], poison_sizes: list[int], repeat: bool) -> dict:
        """One trial: forward on a fresh copy of the inputs (and again on a second copy with `repeat`), outputs
        exported; which inputs forward wrote into; the integrity and thread checks of `run`.

        The reference's inputs stay mapped read-only in host memory, so they are the copy forward's inputs are
        checked against, and the source of the repeat run's, made once the first run's inputs are dropped: one
        input copy on the device at a time besides the outputs (three more copies of an 8 GiB input did not fit
        an 80 GB device beside the reference's trial). Trial 0's inputs are kept in host memory."""
        release()
        given = import_tensors(inputs, MAILBOX.incoming, "cpu")
        fresh = _copy(given, self.device)
        if self.retained is None:
            self.template = InputTemplate(fresh)
            self.retained = _copy(given, "cpu")
        out = self._forward(fresh, poison_sizes)
        result = {"outputs": self._export(out),
                  "mutated": [i for i, (g, a) in enumerate(zip(given, fresh, strict=True))
                              if isinstance(g, torch.Tensor) and not _unchanged(g, a)]}
        del fresh
        if repeat:
            result["repeat"] = self._export(self._forward(_copy(given, self.device), poison_sizes))
        return {**result, "integrity": integrity.diff(self.before),
                "extra_threads": integrity.thread_count() - self.threads}

    @torch.no_grad()
    def refill_shared(self, inputs: list[dict], poison_sizes: list[int], first: bool) -> dict:
        """`refill` for one trial: `first` makes the buffers from the inputs; later trials' inputs are written into
        those same buffers through `.data` (no version counter moves). Outputs exported."""
        release()
        received = self._received(inputs)
        if first or self.refill_buffers is None:
            self.refill_buffers = received
        else:
            for b, x in zip(self.refill_buffers, received, strict=True):
                if isinstance(b, torch.Tensor):
                    b.data.copy_(x)
        del received
        versions = [b._version for b in self.refill_buffers if isinstance(b, torch.Tensor)]
        out = self._forward(self.refill_buffers, poison_sizes)
        return {"outputs": self._export(out), "versions": versions, "integrity": integrity.diff(self.before)}

    def release_shared(self) -> dict:
        """Drop every exported output (the reference is done reading them): device memory back before the next
        trial's reference is computed on the same device."""
        release()
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()
        return {}
