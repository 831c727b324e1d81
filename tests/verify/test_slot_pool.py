"""Which device slot a judgement takes: the one with its problem set up, then one with a spare, then the idlest."""

from __future__ import annotations

import threading

from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.verify import Verifier
from kernelmosaic.verify.slot import DeviceSlot
from kernelmosaic.verify.slot_pool import SlotPool
from tests.verify.kit import PROBLEM_ADD_RELU, write
from tests.verify.test_throughput_cpu import TORCH_CANDIDATE, _config


def test_a_repeated_verify_goes_to_the_slot_that_has_its_problem_set_up(tmp_path):
    """Two slots (two devices): verifying one problem twice in a row reuses the first slot's reference worker (a
    first-in-first-out choice took the other slot and set the problem up again: H200, 2026-12-02, the warm service)."""
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    cand = write(tmp_path, "c.py", TORCH_CANDIDATE.format(tag="affinity"))
    with Verifier(_config(tmp_path), devices=["cpu", "cpu"]) as verifier:
        assert verifier.device_count == 2
        first, second = verifier.verify(problem, cand), verifier.verify(problem, cand)
    assert first.accepted and second.accepted, (first.message, second.message)
    assert not first.workers.reference_reused
    assert second.workers.reference_reused and second.workers.reference_pid == first.workers.reference_pid


def test_the_pool_prefers_the_problem_then_a_spare_then_the_idlest_and_waits_when_none_is_free(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    sha = problem_hash(problem.read_text())
    config = _config(tmp_path)
    idle, with_spare, with_problem = (DeviceSlot("cpu", config) for _ in range(3))
    try:
        with_problem.reference(str(problem), sha)
        with_spare.warm_spare()
        assert with_problem.holds(sha) and not idle.holds(sha) and not with_problem.holds("other")
        pool = SlotPool([idle, with_spare, with_problem])
        assert pool.take(sha) is with_problem
        assert pool.take("another problem") is with_spare
        assert pool.take() is idle
        got: list[DeviceSlot] = []
        waiter = threading.Thread(target=lambda: got.append(pool.take(sha)))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive() and got == []  # nothing free: it waits
        pool.put(idle)
        waiter.join(10)
        assert got == [idle]
    finally:
        for slot in (idle, with_spare, with_problem):
            slot.close()
