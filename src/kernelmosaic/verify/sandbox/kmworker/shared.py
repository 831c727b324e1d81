"""Tensors handed from one worker to another without crossing the socket (large-output mode).

A tensor is exported as a small descriptor that the parent relays as data: on a GPU a CUDA IPC handle of its storage
(the importer maps the exporter's device memory; nothing touches the host), on the CPU a sealed memfd holding a copy
(the descriptor names it by its position among the descriptors the message carries, `protocol.Channel`). The
exporter keeps every exported tensor alive until `release()`: its importer reads it in place.

Trust: the importer is the more trusted side when outputs move (the reference reads the candidate's), so it checks
what it maps: a memfd must be a regular file of exactly the described size, sealed against shrinking, growing and
writing (a file shrunk under the mapping would kill the reader with SIGBUS; a written one could change under the
comparison); a CUDA storage must hold the described extent. The reference exports only copies made for export (the
trial's inputs), never memory that holds its own outputs.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import stat
import warnings
from dataclasses import dataclass, field

import torch

__all__ = ["MAILBOX", "Mailbox", "export_tensors", "import_tensors", "package_in_place", "release", "nbytes_of", "SEALS",
           "same_bits", "written_inputs"]

SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
"""What a memfd must be sealed against before its reader maps it."""


@dataclass
class Mailbox:
    """The descriptors of the request being served (`incoming`, closed after it) and of its reply (`outgoing`, sent
    with it and closed after); `kmworker.__main__` moves them between the channel and here."""

    incoming: list[int] = field(default_factory=list)
    outgoing: list[int] = field(default_factory=list)


MAILBOX = Mailbox()
_KEPT: list[torch.Tensor] = []
"""Exported tensors, alive until `release()`."""


def release() -> None:
    """Let go of everything exported (an importer still holding a CUDA mapping keeps the memory by its ref count)."""
    _KEPT.clear()


def _dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"not a dtype: {name!r}")
    return dtype


_PLAIN = (int, float, bool, str, type(None))


def same_bits(a: torch.Tensor, b) -> bool:
    """Whether `b` is a tensor holding exactly `a`'s bytes (NaN and -0.0 included: no arithmetic comparison)."""
    if not isinstance(b, torch.Tensor) or b.shape != a.shape or b.dtype != a.dtype or b.device != a.device:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def written_inputs(before: list, after: list) -> list[int]:
    """Which tensor inputs forward wrote into: those of `after` (the inputs it was given) that no longer hold
    `before`'s bytes (a NaN input left as it was is unchanged; `torch.equal` calls it changed)."""
    return [i for i, (b, a) in enumerate(zip(before, after, strict=True))
            if isinstance(b, torch.Tensor) and not same_bits(b, a)]


def nbytes_of(items) -> int:
    """Bytes of the tensors among `items` (a tensor, or a tuple/list of values)."""
    items = items if isinstance(items, (tuple, list)) else [items]
    return sum(x.numel() * x.element_size() for x in items if isinstance(x, torch.Tensor))


def package_in_place(out, copy: bool = False) -> dict:
    """`common.package_outputs`' description of a return value with its tensors left where they are (no host copy).
    `copy`: each tensor copied on its own device, so what the caller writes into its outputs afterwards does not
    reach the description (a timed call's snapshot, `timing.Timer.measure`)."""
    items = list(out) if isinstance(out, tuple) else [out]
    tensors, meta = [], []
    for x in items:
        if type(x) is not torch.Tensor:
            meta.append({"type": type(x).__name__})
            tensors.append(torch.empty(0))
            continue
        meta.append({"type": "Tensor", "dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape),
                     "device": x.device.type})
        x = x.detach()
        tensors.append(x.clone(memory_format=torch.contiguous_format) if copy else x.contiguous())
    return {"tuple": isinstance(out, tuple), "meta": meta, "tensors": tensors}


def export_tensors(items: list, host: bool = False) -> list[dict]:
    """One descriptor per item; memfds go to `MAILBOX.outgoing`. Plain values (numbers, strings) travel as values,
    other non-tensors as `{"kind": "none"}`. `host`: device tensors too are copied into memfds (the reference's
    inputs: no candidate ever maps the reference's device memory)."""
    return [_export(x, host) for x in items]


def _export(x, host: bool) -> dict:
    if type(x) is not torch.Tensor:
        return {"kind": "value", "value": x} if isinstance(x, _PLAIN) else {"kind": "none"}
    t = x.detach().contiguous()
    meta = {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
    nbytes = t.numel() * t.element_size()
    if nbytes == 0:
        return {"kind": "empty", **meta, "device": t.device.type}
    if t.is_cuda and not host:
        try:
            handle = t.untyped_storage()._share_cuda_()
        except RuntimeError:  # memory not from torch's allocator (an extension's own cudaMalloc): share a copy
            t = t.clone()
            handle = t.untyped_storage()._share_cuda_()
        _KEPT.append(t)  # the importer maps this very storage
        return {"kind": "cuda", **meta, "handle": list(handle), "offset": t.storage_offset()}
    fd = os.memfd_create("km-tensor", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, nbytes)
        with mmap.mmap(fd, nbytes) as mm:
            dst = torch.frombuffer(mm, dtype=torch.uint8)
            dst.copy_(t.reshape(-1).view(torch.uint8))
            del dst
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS | fcntl.F_SEAL_SEAL)
    except BaseException:
        os.close(fd)
        raise
    MAILBOX.outgoing.append(fd)
    return {"kind": "fd", **meta, "index": len(MAILBOX.outgoing) - 1, "nbytes": nbytes}


def import_tensors(descs: list[dict], fds: list[int], device: str) -> list:
    """The tensors the descriptors name, mapped in place (read them; never write them). `fds`: the descriptors that
    came with the message. Raises ValueError for a descriptor that does not hold what it describes."""
    return [_import(d, fds, device) for d in descs]


def _import(d: dict, fds: list[int], device: str):
    kind = d.get("kind")
    if kind == "none":
        return None
    if kind == "value":
        return d.get("value")
    shape, dtype = [int(s) for s in d["shape"]], _dtype(str(d["dtype"]))
    numel = 1
    for s in shape:
        if s < 0:
            raise ValueError(f"negative size in {shape}")
        numel *= s
    nbytes = numel * dtype.itemsize
    if kind == "empty":
        if nbytes:
            raise ValueError(f"an `empty` descriptor of shape {shape}")
        return torch.empty(shape, dtype=dtype, device=device)
    if kind == "cuda":
        handle = tuple(d["handle"])
        storage = torch.UntypedStorage._new_shared_cuda(*handle)
        offset = int(d["offset"])
        if offset < 0 or (offset + numel) * dtype.itemsize > storage.nbytes():
            raise ValueError(f"a shared device storage of {storage.nbytes()} bytes cannot hold shape {shape} at {offset}")
        return torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, shape)
    if kind != "fd":
        raise ValueError(f"unknown descriptor kind {kind!r}")
    index = int(d["index"])
    if not 0 <= index < len(fds):
        raise ValueError(f"descriptor {index} did not come with the message ({len(fds)} did)")
    fd = fds[index]
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size != nbytes:
        raise ValueError(f"shared file of {st.st_size} bytes for shape {shape} {dtype} ({nbytes} bytes)")
    if fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS != SEALS:
        raise ValueError("shared file not sealed against shrinking, growing and writing")
    mm = mmap.mmap(fd, nbytes, prot=mmap.PROT_READ)
    with warnings.catch_warnings():  # read-only by design: torch warns that the buffer is not writable
        warnings.simplefilter("ignore")
        flat = torch.frombuffer(mm, dtype=torch.uint8)
    return flat.view(dtype).reshape(shape)
