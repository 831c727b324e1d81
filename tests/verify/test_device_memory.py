"""Device memory and fault attribution without running workers: the estimate behind memory admission, who an
out-of-memory with the device held alone is charged to, and the holds a whole judgement takes alone."""

from __future__ import annotations

import fcntl
import threading
import time

import pytest
import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.call_checks import check_reported
from kernelmosaic.verify.device_memory import (
    ADMIT_SHARE,
    DeviceCrowded,
    admission,
    attribute,
    judgement_bytes,
    retry_reason,
)
from kernelmosaic.verify.devlock import CpuHold, DeviceHold, lock_path
from kernelmosaic.verify.judgement import Stop, device_oom
from kernelmosaic.verify.reference_data import ReferenceData, RefSetup
from kernelmosaic.verify.replies import CandidateTimingReply, candidate_timing_reply
from kernelmosaic.verify.sandbox.kmworker.timing import BURST_SETS

GIB = 1 << 30
MEMORY = {"weight_bytes": 1 * GIB, "input_bytes": 2 * GIB, "output_bytes": 1 * GIB, "peak_bytes": 3 * GIB}


def _refdata(memory: dict, l2: int = 50 << 20) -> ReferenceData:
    return ReferenceData(setup=RefSetup(init_inputs=[], state_dict={}, flops=0.0), trials=[], env={"l2_bytes": l2},
                         memory=memory)


def test_estimate_counts_candidate_reference_and_timing_sets():
    flush = 100 << 20
    candidate = 1 * GIB + (BURST_SETS + 2) * 2 * GIB + 3 * GIB + 1 * GIB + flush
    reference = max((BURST_SETS + 1) * 2 * GIB + 3 * GIB + flush, 2 * GIB + 3 * GIB + 2 * (1 + 2 + 3) * GIB)
    assert judgement_bytes(MEMORY, 50 << 20) == candidate + reference
    assert judgement_bytes({"input_bytes": 8}, 0) is None  # no peak measured (the CPU): no estimate


def test_admission_takes_the_device_alone_only_when_the_estimate_does_not_fit():
    need = judgement_bytes(MEMORY, 50 << 20)
    assert admission(_refdata(MEMORY), int(need / ADMIT_SHARE) + 1) == ""
    why = admission(_refdata(MEMORY), need)
    assert "does not fit beside the other judgements" in why and f"{need / GIB:.2f} GiB" in why
    assert admission(_refdata(MEMORY), None) == ""
    assert admission(_refdata({}), 1) == ""


def test_device_oom_is_the_device_allocator_not_host_memory():
    assert device_oom({"oom": True, "type": "OutOfMemoryError", "message": "CUDA out of memory. Tried to allocate"})
    assert not device_oom({"oom": True, "type": "MemoryError", "message": ""})
    assert not device_oom({"oom": True, "type": "RuntimeError", "message": "std::bad_alloc"})
    assert not device_oom({"oom": False, "type": "RuntimeError", "message": "shape mismatch"})


@pytest.mark.parametrize(("who", "status", "says"), [
    ("reference_setup", Status.bad_problem, "problem does not fit on this device"),
    ("reference", Status.resource_error, "memory the candidate's process holds"),
    ("candidate", Status.resource_error, "the candidate ran out of device memory with the device held alone"),
])
def test_an_oom_alone_is_charged_to_the_problem_only_when_its_reference_cannot_be_set_up(who, status, says):
    stop = Stop(Status.resource_error, "OutOfMemoryError: CUDA out of memory", oom=who)
    assert retry_reason(stop)
    final = attribute(stop, MEMORY)
    assert final.status == status and says in final.message and "CUDA out of memory" in final.message
    if who != "reference_setup":
        assert "3.00 GiB" in final.message  # the reference's peak, the figure the charge rests on


def _torch_oom(tried: str, total: str, free: str, this: str, others: tuple[str, ...] = ()) -> str:
    """torch's OutOfMemoryError text as the candidate worker reports it (the H200's, figures varied)."""
    rest = "".join(f" Process {600 + k} has {size} memory in use." for k, size in enumerate(others))
    return (f"running forward: OutOfMemoryError: CUDA out of memory. Tried to allocate {tried}. GPU 0 has a total "
            f"capacity of {total} of which {free} is free.{rest} Including non-PyTorch memory, this process has "
            f"{this} memory in use. Of the allocated memory 8.00 GiB is allocated by PyTorch, and 1.50 GiB is "
            "reserved by PyTorch but unallocated.")


DEVICE = int(139.80 * GIB)


def test_an_oom_that_other_processes_memory_explains_is_no_verdict():
    """The H200 case: the candidate asked for 32 GiB on a 140 GiB device where other processes held 135 GiB; the
    driver, read after the candidate's process is gone, still shows them."""
    stop = Stop(Status.resource_error, _torch_oom("32.00 GiB", "139.80 GiB", "4.48 GiB", "12.10 GiB",
                                                  ("67.73 GiB", "10.44 GiB", "4.40 GiB", "20.00 GiB")), oom="candidate")
    with pytest.raises(DeviceCrowded, match="the driver shows") as caught:
        attribute(stop, MEMORY, lambda: (int(125 * GIB), DEVICE))
    assert "44.10 GiB" in str(caught.value) and "nothing was judged" in str(caught.value)


@pytest.mark.parametrize(("tried", "this", "used_gib"), [
    ("200.00 GiB", "1.00 GiB", 8),  # more than the device has: the candidate's, however empty the device
    ("32.00 GiB", "100.00 GiB", 8),  # what its own process held with it is more than the device can give
    ("2.00 GiB", "1.00 GiB", 8),  # it fits in what is free now: not the others' doing
    ("32.00 GiB", "12.10 GiB", 8),  # the message says crowded, the driver says the device is nearly empty: made up
])
def test_an_oom_the_candidate_causes_stays_its_resource_error(tried, this, used_gib):
    stop = Stop(Status.resource_error, _torch_oom(tried, "139.80 GiB", "4.48 GiB", this), oom="candidate")
    final = attribute(stop, MEMORY, lambda: (used_gib * GIB, DEVICE))
    assert final.status == Status.resource_error and "the candidate ran out of device memory" in final.message


def test_without_the_drivers_figures_an_oom_stays_the_candidates():
    stop = Stop(Status.resource_error, _torch_oom("32.00 GiB", "139.80 GiB", "4.48 GiB", "12.10 GiB"), oom="candidate")
    assert attribute(stop, MEMORY, lambda: None).status == Status.resource_error
    assert attribute(stop, MEMORY).status == Status.resource_error


def test_a_stop_that_is_no_oom_is_neither_retried_nor_changed():
    stop = Stop(Status.output_mismatch, "wrong result")
    assert retry_reason(stop) == "" and attribute(stop, MEMORY) is stop


def _other_holds(path) -> bool:
    """Whether another open file can take the lock shared now (a neighbour's call would)."""
    with open(path, "a+") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return True


def test_a_judgement_held_alone_keeps_the_device_through_its_nested_timing(tmp_path):
    with DeviceHold(tmp_path, "cuda:0", 1.0) as hold:
        path = hold.path
        with hold.exclusive():
            with hold.exclusive() as waited:  # the timing phase inside a judgement held alone
                assert waited == 0.0 and hold.alone
            with hold.shared():  # a worker call inside: nothing more taken
                pass
            assert hold.alone and not _other_holds(path)  # the nested phases let nothing go
        assert not hold.alone and _other_holds(path)


def test_the_cpu_hold_waits_for_a_neighbour_and_nests(tmp_path):
    path = lock_path(tmp_path, "cpu")
    path.parent.mkdir(parents=True)
    released = threading.Event()

    def neighbour():
        with open(path, "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH)
            time.sleep(0.6)
            released.set()

    t = threading.Thread(target=neighbour)
    t.start()
    time.sleep(0.1)
    hold = CpuHold(tmp_path, "cpu")
    with hold.exclusive() as waited:
        assert released.is_set() and waited >= 0.4
        with hold.exclusive() as again:
            assert again == 0.0
        assert not _other_holds(path)
    t.join()
    assert _other_holds(path)


def _reply(seeds: list[int], checked) -> CandidateTimingReply:
    return candidate_timing_reply({"samples": [0.1], "host_samples": [0.1], "escaped_ms": 0.0, "integrity": [],
                                   "calls": [{"seed": s, "fp": [{"tuple": False}]} for s in seeds],
                                   "checked_inputs": checked, "checked_outputs": {}}, "timing the candidate")


def test_a_timing_reply_must_report_the_seeds_and_inputs_it_was_given():
    given = [torch.zeros(8), torch.zeros(8), 3]
    check_reported(_reply([100, 101, 102], [torch.ones(8), torch.ones(8), 3]), 100, given)  # values may differ
    check_reported(_reply([100, 101], {"seed": 101}), 100, given)  # large-output mode: named by seed
    with pytest.raises(Stop) as seeds:
        check_reported(_reply([100, 7, 102], [torch.ones(8), torch.ones(8), 3]), 100, given)
    assert seeds.value.status == Status.runtime_error and "call 2 of the round reports seed 7" in seeds.value.message
    with pytest.raises(Stop) as shrunk:  # `x.data = x.data[:4]` inside forward
        check_reported(_reply([100], [torch.ones(4), torch.ones(8), 3]), 100, given)
    assert "input 0 of the timed call checked in full is (4,) torch.float32" in shrunk.value.message
    assert shrunk.value.findings[0].rule == "candidate-reported-inputs"
    with pytest.raises(Stop):
        check_reported(_reply([100], [torch.ones(8), torch.ones(8, dtype=torch.float64), 3]), 100, given)
    with pytest.raises(Stop):
        check_reported(_reply([100], [torch.ones(8)]), 100, given)
