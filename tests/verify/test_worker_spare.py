"""A spare candidate worker loads Python and torch ahead of time and touches no device until it is handed out."""

from __future__ import annotations

import time

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.pool import Worker, WorkerError, WorkerLimits
from kernelmosaic.verify.slot import DeviceSlot, Spares


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


def test_the_slots_of_one_gpu_share_their_spares_and_two_gpus_do_not(tmp_path):
    """Built without touching a device: the verifier's slots per GPU hold one set of spares, `spare_workers` per slot."""
    config = VerifyConfig(device="cuda", cache_dir=tmp_path, judges_per_gpu=3, spare_workers=2)
    verifier = Verifier(config, devices=["cuda:0", "cuda:1"])
    try:
        first, second = verifier._all[:3], verifier._all[3:]
        assert [s.device for s in first] == ["cuda:0"] * 3 and [s.device for s in second] == ["cuda:1"] * 3
        assert all(s._share is first[0]._share for s in first) and all(s._share is second[0]._share for s in second)
        assert first[0]._share is not second[0]._share
        assert (first[0]._share.size, first[0]._share.slots) == (6, 3)
        first[1].warm_spare()  # deferred spares: launched, no device touched
        assert len(first[0]._spares) == 6 and first[2].has_spare() and not second[0].has_spare()
        first[2].warm_spare()  # already full for the device: nothing more launched
        assert len(first[0]._spares) == 6
    finally:
        verifier.close()
    assert list(tmp_path.glob("km-candidate-*")) == []


def test_a_slot_takes_a_sibling_slots_spare_and_one_spare_per_slot_is_brought_up(tmp_path):
    """Two slots of one device sharing three spares (CPU workers standing in for a GPU's, as a slot launches them on
    the CPU device): bring-ups stop at one per slot, and either slot hands out what the other brought up."""
    config = VerifyConfig(device="cpu", cache_dir=tmp_path)
    share = Spares(size=3, slots=2)
    a, b = DeviceSlot("cpu", config, share), DeviceSlot("cpu", config, share)
    for _ in range(3):
        spare = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
        spare.spawn(defer_device=True)
        share.workers.append(spare)
    spares = list(share.workers)
    try:
        assert a.ready_spare() and b.ready_spare() and a.ready_spare()
        assert [s.ready for s in spares] == [True, True, False]  # two slots: two up, the third left loaded
        taken_by_b = b.take_candidate_worker()
        assert taken_by_b is spares[0] and b.spare_used and b.spare_was_ready
        taken_by_a = a.take_candidate_worker()
        assert taken_by_a is spares[1] and a.spare_was_ready
        last = b.take_candidate_worker()  # loaded, not up: brought up at the hand-out
        assert last is spares[2] and b.spare_used and not b.spare_was_ready and last.env["device"] == "cpu"
        for w in (taken_by_a, taken_by_b, last):
            w.kill()
        assert not a.has_spare() and not b.has_spare()
    finally:
        a.close()
        b.close()
