"""Device memory of a judgement: who ran out, and when a judgement takes the device alone.

Several judgements share one GPU (`judges_per_gpu`); each holds the device shared around its calls and alone only to
time (devlock.py). Memory is not covered by that lock: another judgement's inputs, weights and allocator cache stay
on the device while it waits. So a judgement may run out of device memory because of its neighbours, which is neither
the candidate's fault nor the problem's. Two rules follow:

- **admission**: once the problem is set up, a judgement whose expected peak (`judgement_bytes`) does not fit in what
  the device has free (as the reference worker sees it, with its own allocator cache given back) takes the device
  alone for the rest of its length, instead of failing first;
- **retry**: a judgement that ran out of device memory (torch's `OutOfMemoryError`, from the reference or the
  candidate, in any phase, timing included) without holding the device alone from its start is judged again, once,
  with the device held alone from the start and the reference worker replaced (its cache and kept problems freed).
  Only an out-of-memory with the device held alone counts (`attribute`): the reference's while setting the problem up
  is the problem's (`bad_problem`: it does not fit on this device); the candidate's, or the reference's later in the
  judgement (it fit when set up, so what the candidate's process holds took its room), is the candidate's
  (`resource_error`).

"Alone" keeps other judgements' kernels off the device, not their resident memory. A candidate's out-of-memory with
the device alone that only that memory explains (its need fits the device, not beside the others: torch's message
gives the need, the driver what is in use once the candidate is gone) is no verdict at all (`DeviceCrowded`): the
caller reports the machine's failure and a later run judges it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable

from kernelmosaic.contracts.verdict import Status, Verdict
from kernelmosaic.verify.devlock import CpuHold, DeviceHold
from kernelmosaic.verify.judgement import Outcome, Stop
from kernelmosaic.verify.pool import DeviceCrowded, WorkerDied, WorkerError
from kernelmosaic.verify.reference_data import FreeMemoryReply, ReferenceData, reference_reply
from kernelmosaic.verify.sandbox.kmworker.timing import BURST_SETS
from kernelmosaic.verify.slot import DeviceSlot, nvidia_smi

__all__ = ["ADMIT_SHARE", "DeviceCrowded", "crowded_by_others", "device_usage", "judgement_bytes", "admission", "attribute", "retry_reason", "go_alone", "free_bytes"]

log = logging.getLogger(__name__)

ADMIT_SHARE = 0.9
"""A judgement shares the device when its expected peak is at most this share of the free memory (the rest is room
for the allocator's rounding and fragmentation)."""

_GIB = float(1 << 30)


def judgement_bytes(memory: dict, l2_bytes: int) -> int | None:
    """The judgement's expected device memory beyond what the reference worker already holds (its weights and
    problem), from the reference's first trial (`ReferenceData.memory`: W weights, I one input set, O one output set,
    P the forward's peak beyond inputs and weights) and the L2 flush buffer F = max(2·L2, 64 MiB):

    - the candidate's worker: W (its copy of the weights) + (BURST_SETS + 2)·I (the wall-clock bursts' input sets, a
      timed call's fresh set, the checked call's copy) + P + O (the checked call's outputs, kept) + F;
    - the reference's transients, the larger of its eager timing ((BURST_SETS + 1)·I + P + F) and its check of a
      timed call (I + P, and the float64 oracle: 2·(W + I + P)).

    None when the reference measured no peak (the CPU)."""
    if memory.get("peak_bytes") is None:
        return None
    w, i, o, p = (int(memory.get(k, 0)) for k in ("weight_bytes", "input_bytes", "output_bytes", "peak_bytes"))
    flush = max(2 * l2_bytes, 64 << 20)
    candidate = w + (BURST_SETS + 2) * i + p + o + flush
    reference = max((BURST_SETS + 1) * i + p + flush, i + p + 2 * (w + i + p))
    return candidate + reference


def admission(refdata: ReferenceData, free_bytes: int | None) -> str:
    """Why this judgement must hold the device alone ("" = it fits beside the others)."""
    need = judgement_bytes(refdata.memory, int(refdata.env.get("l2_bytes", 0)))
    if need is None or free_bytes is None or need <= ADMIT_SHARE * free_bytes:
        return ""
    return (f"expected peak {need / _GIB:.2f} GiB (candidate and reference, with the timing sets) does not fit beside "
            f"the other judgements: {free_bytes / _GIB:.2f} GiB free on the device")


def retry_reason(stop: Stop) -> str:
    """Why a judgement that stopped this way is judged again with the device alone ("" = it stands)."""
    if not stop.oom:
        return ""
    if stop.oom == "reference_host":
        return f"the reference worker was killed for host memory; judged again alone ({stop.message[:300]})"
    who = "the reference" if stop.oom.startswith("reference") else "the candidate"
    return f"{who} ran out of device memory with the device shared; judged again alone ({stop.message[:300]})"


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_SIZE = r"([\d.]+) (B|KiB|MiB|GiB|TiB)"
_TRIED = re.compile(rf"Tried to allocate {_SIZE}")
_THIS = re.compile(rf"this process has {_SIZE} memory in use")


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit])


def device_usage(device: str) -> tuple[int, int] | None:
    """(bytes in use, bytes in all) on `device`'s GPU as its driver reports them now (nvidia-smi: no CUDA in this
    process, and nothing a candidate's process says); None on the CPU or when the driver cannot say."""
    if not device.startswith("cuda"):
        return None
    try:
        return int(float(nvidia_smi("memory.used", device))) << 20, int(float(nvidia_smi("memory.total", device))) << 20
    except ValueError:
        return None


def crowded_by_others(message: str, memory: dict, usage: tuple[int, int] | None) -> str:
    """Why memory other processes hold explains this out-of-memory of the candidate's ("" = it does not, or it
    cannot be told). `message`: torch's `OutOfMemoryError`, from the candidate's process, which gives what it asked
    for (the allocation it tried and what it held). `usage`: the device's memory in use and in all, read from the
    driver once the candidate's processes are gone (only this judgement's reference worker and other processes
    remain). Crowded when that need, with the reference's problem (`memory`: weights, one input and output set and
    the forward's peak), fits in `ADMIT_SHARE` of the device, yet not in what the driver shows free now. The need
    comes from the candidate's process and so may be made up, but no figure it makes up turns a device that other
    processes leave free into a crowded one: the window between the two bounds is empty unless other processes hold
    more than a tenth of the device."""
    tried, this = _TRIED.search(message), _THIS.search(message)
    if not (tried and this and usage):
        return ""
    want = _bytes(*tried.groups()) + _bytes(*this.groups())
    used, capacity = usage
    reference = sum(int(memory.get(k, 0) or 0) for k in ("weight_bytes", "input_bytes", "output_bytes", "peak_bytes"))
    if not capacity - used < want <= ADMIT_SHARE * capacity - reference:
        return ""
    return (f"the candidate's process needed {want / _GIB:.2f} GiB and the reference's problem about "
            f"{reference / _GIB:.2f} GiB of a {capacity / _GIB:.2f} GiB device, but the driver shows "
            f"{used / _GIB:.2f} GiB in use by this judgement's reference and other processes")


def attribute(stop: Stop, memory: dict, usage: Callable[[], tuple[int, int] | None] = lambda: None) -> Stop:
    """An out-of-memory with the device held alone, as the verdict's status: the problem's or the candidate's.
    `memory`: the reference's sizes (`ReferenceData.memory`; empty when the problem was never set up); `usage`: the
    device's memory now (`device_usage`), asked only for a candidate's out-of-memory. Raises `DeviceCrowded` when
    the candidate's need fits the device and only other processes' memory stood in its way."""
    if not stop.oom or stop.oom == "reference_host":  # killed again, alone: what the candidate's data made it do
        return stop
    if stop.oom == "candidate" and (why := crowded_by_others(stop.message, memory, usage())):
        raise DeviceCrowded(f"{why}: nothing was judged; judge it again when the device is less busy")
    peak = memory.get("peak_bytes")
    fits = f" (its forward peaks at {peak / _GIB:.2f} GiB beyond inputs and weights)" if peak is not None else ""
    if stop.oom == "reference_setup":
        return Stop(Status.bad_problem, f"the reference ran out of device memory with the device held alone: the "
                    f"problem does not fit on this device ({stop.message[:400]})", stop.findings)
    if stop.oom == "reference":
        return Stop(Status.resource_error, "the reference ran out of device memory beside the candidate's worker, with "
                    f"the device held alone; it fit when the problem was set up{fits}, so the memory the candidate's "
                    f"process holds took its room ({stop.message[:400]})", stop.findings)
    return Stop(Status.resource_error, f"the candidate ran out of device memory with the device held alone, where the "
                f"reference fits{fits} ({stop.message[:400]})", stop.findings)


def go_alone(whole: contextlib.ExitStack, hold: DeviceHold | CpuHold, out: Outcome, verdict: Verdict, why: str) -> None:
    """The rest of the judgement holds the device alone (its timing phases nest inside); the verdict says why."""
    whole.enter_context(hold.exclusive())
    out.device_alone = verdict.device_alone = why
    out.phase_started["device_alone"] = time.time()


def free_bytes(slot: DeviceSlot) -> int | None:
    """Device memory free now, as the slot's reference worker sees it (None on the CPU, or when it cannot say)."""
    if not slot.device.startswith("cuda") or slot.ref is None:
        return None
    try:
        return reference_reply(FreeMemoryReply, slot.ref.call("device_memory", 60.0), "device_memory").free_bytes
    except (WorkerDied, WorkerError, Stop) as exc:
        log.warning("could not read the device's free memory: %s", exc)
        return None
