"""A spare candidate worker loads Python and torch ahead of time and touches no device until it is handed out."""

from __future__ import annotations

import time

import pytest

from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.pool import Worker, WorkerError, WorkerLimits
from kernelmosaic.verify.slot import DeviceSlot


def test_a_deferred_worker_says_nothing_until_activated_then_serves(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.spawn(defer_device=True)
    try:
        assert not worker.channel.poll(3.0), "a spare must not set up its device or greet before `begin`"
        assert worker.alive and worker.deferred
        env = worker.activate()
        assert env["device"] == "cpu" and env["torch"] and not worker.deferred
        with pytest.raises(WorkerError) as refused:  # served after `begin`: the role answers, here with a refusal
            worker.call("no_such_op", 30)
        assert "unknown op" in refused.value.error["message"]
    finally:
        worker.close()
    assert not worker.alive


def test_a_deferred_worker_closed_before_activation_exits_cleanly(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.spawn(defer_device=True)
    worker.channel.send({"op": "exit"})
    assert worker._wait(60, "exit") == {"ok": True}  # answered while waiting for `begin`, not left to a timeout
    assert worker.proc.wait(timeout=30) == 0
    worker.close()
    assert list(tmp_path.iterdir()) == []


def test_slot_hands_out_the_spare_and_the_cpu_slot_launches_none_while_judging(tmp_path):
    slot = DeviceSlot("cpu", VerifyConfig(device="cpu", cache_dir=tmp_path))
    try:
        first = slot.take_candidate_worker()
        assert not slot.spare_used and slot._spares == []  # CPU: no spare loads torch beside a timed candidate
        first.kill()
        slot.warm_spare()  # the slot went idle: one spare on the CPU, whatever spare_workers says
        [spare] = slot._spares
        assert spare.deferred
        t = time.perf_counter()
        second = slot.take_candidate_worker()
        assert second is spare and slot.spare_used and not second.deferred
        assert second.env["device"] == "cpu", second.env
        assert time.perf_counter() - t < 60
        second.kill()
    finally:
        slot.close()


def test_a_spare_that_died_while_waiting_is_replaced_and_cleaned_up(tmp_path):
    slot = DeviceSlot("cpu", VerifyConfig(device="cpu", cache_dir=tmp_path))
    try:
        slot.warm_spare()
        [dead] = slot._spares
        dead.proc.kill()
        dead.proc.wait(timeout=30)
        slot.warm_spare()
        [fresh] = slot._spares
        assert fresh is not dead and fresh.alive and not dead.scratch.exists()
        worker = slot.take_candidate_worker()
        assert slot.spare_used and worker.env["device"] == "cpu"
        worker.kill()
    finally:
        slot.close()


def test_a_gpu_slot_keeps_spare_workers_launched_and_skips_a_dead_one(tmp_path):
    """On a GPU slot `spare_workers` candidate workers wait launched (deferred: no device touched, so this runs on any
    machine); a spare that died while waiting is passed over for the next."""
    slot = DeviceSlot("cuda:0", VerifyConfig(device="cpu", cache_dir=tmp_path, spare_workers=3))
    try:
        slot.warm_spare()
        assert len(slot._spares) == 3 and all(w.alive and w.deferred for w in slot._spares)
        assert slot.has_spare()
        for w in slot._spares:
            w.proc.kill()
            w.proc.wait(timeout=30)
        assert not slot.has_spare()
        slot.warm_spare()  # the dead are replaced, their scratch folders removed
        assert len(slot._spares) == 3 and all(w.alive for w in slot._spares)
    finally:
        slot.close()
    assert slot._spares == [] and list(tmp_path.glob("km-candidate-*")) == []
    none = DeviceSlot("cuda:0", VerifyConfig(device="cpu", cache_dir=tmp_path, spare_workers=0))
    none.warm_spare()
    assert none._spares == []


def test_the_cpu_slot_hands_out_the_next_live_spare_when_the_oldest_died(tmp_path):
    slot = DeviceSlot("cpu", VerifyConfig(device="cpu", cache_dir=tmp_path))
    try:
        slot.warm_spare()
        [dead] = slot._spares
        slot._spares.append(Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path))
        slot._spares[1].spawn(defer_device=True)
        live = slot._spares[1]
        dead.proc.kill()
        dead.proc.wait(timeout=30)
        worker = slot.take_candidate_worker()
        assert worker is live and slot.spare_used and worker.env["device"] == "cpu" and not dead.alive
        worker.kill()
    finally:
        slot.close()


def test_closing_a_slot_reaps_its_reference_and_every_spare_side_by_side(tmp_path):
    """`DeviceSlot.close` hands its workers to `close_all`: each is asked to exit and reaped, none left running, every
    scratch folder gone, and the slot holds none afterwards."""
    slot = DeviceSlot("cuda:0", VerifyConfig(device="cpu", cache_dir=tmp_path, spare_workers=3))
    slot.ref = Worker("reference", "cpu", WorkerLimits(), scratch_root=tmp_path)
    slot.ref.start()
    slot.warm_spare()
    workers = [slot.ref, *slot._spares]
    assert len(workers) == 4 and all(w.alive for w in workers)
    slot.close()
    assert not any(w.alive for w in workers)
    assert all(w.proc.poll() is not None for w in workers) and not any(w.scratch.exists() for w in workers)
    assert slot.ref is None and not slot.has_spare() and slot.release_workers() == []
