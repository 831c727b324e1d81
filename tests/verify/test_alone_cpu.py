"""A judgement that holds the device alone is alone within its Verifier (`verify/alone.py`): it waits for the
judgements in flight, new ones wait for it, and the idle slots of its device give their reference workers (and
the memory they hold) up. The gate is checked with threads; the release with real reference workers on the CPU
(two slots of one device), since on a GPU the same code frees their device memory (the H200 case the module
describes)."""

from __future__ import annotations

import threading
import time

import pytest

from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.alone import AloneGate

from . import kit


def _in_thread(gate: AloneGate, exclusive: bool, log: list, name: str, hold_s: float) -> threading.Thread:
    def run():
        with gate.hold(exclusive):
            log.append(("in", name, time.monotonic()))
            time.sleep(hold_s)
            log.append(("out", name, time.monotonic()))
    t = threading.Thread(target=run)
    t.start()
    return t


def test_an_exclusive_holder_waits_for_shared_ones_and_goes_before_new_ones():
    gate, log = AloneGate(), []
    first = _in_thread(gate, False, log, "shared-1", 0.6)
    time.sleep(0.1)
    alone = _in_thread(gate, True, log, "alone", 0.4)
    time.sleep(0.1)
    late = _in_thread(gate, False, log, "shared-2", 0.1)  # came after the exclusive waiter: waits for it
    for t in (first, alone, late):
        t.join(10)
    at = {(kind, name): when for kind, name, when in log}
    assert at[("in", "alone")] >= at[("out", "shared-1")], log
    assert at[("in", "shared-2")] >= at[("out", "alone")], log


def test_shared_holders_overlap():
    gate, log = AloneGate(), []
    threads = [_in_thread(gate, False, log, f"s{i}", 0.4) for i in range(3)]
    for t in threads:
        t.join(10)
    ins = sorted(when for kind, _, when in log if kind == "in")
    outs = sorted(when for kind, _, when in log if kind == "out")
    assert ins[-1] < outs[0], "shared holders should not wait for one another"


@pytest.fixture()
def two_slots(tmp_path, build_cache):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, spare_workers=0)
    with Verifier(config, devices=["cpu", "cpu"]) as verifier:
        yield verifier


def test_holding_the_device_alone_releases_the_idle_slots_references(two_slots, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    sha = problem_hash(problem.read_text())
    v = two_slots
    with v._on_slot(sha) as (slot_a, _):
        slot_a.reference(str(problem), sha)
    ref_a = slot_a.ref
    assert ref_a is not None and ref_a.alive
    # A judgement in flight on the other slot: the alone one must wait for it to end.
    entered = threading.Event()
    release = threading.Event()

    def in_flight():
        with v._on_slot("") as (slot_b, _):
            assert slot_b is not slot_a
            entered.set()
            release.wait(10)

    t = threading.Thread(target=in_flight)
    t.start()
    assert entered.wait(10)
    got: list = []

    def alone():
        with v._on_slot(sha, alone=True) as (slot, _):
            got.append((slot, ref_a.alive, time.monotonic()))

    a = threading.Thread(target=alone)
    a.start()
    time.sleep(0.5)
    assert not got, "the alone judgement started while another judgement was on the device"
    freed_at = time.monotonic()
    release.set()
    t.join(10)
    a.join(30)
    slot, ref_alive_inside, when = got[0]
    assert when >= freed_at
    # The alone judgement took the free slot that already had the problem set up, so that one keeps its worker;
    # the other idle slot (the one the in-flight judgement used) had none to give up.
    assert slot is slot_a and ref_alive_inside
    # Now the other way round: slot_a idle with its problem set up (put back last), the alone judgement of another
    # problem on the other slot (idle longest): slot_a gives its reference worker up before that judgement begins.
    with v._on_slot("unrelated", alone=True) as (slot, _):
        assert slot is not slot_a
        assert slot_a.ref is None and not ref_a.alive
    with v._on_slot(sha) as (again, _):  # the next judgement of the problem sets it up again, in a new worker
        again.reference(str(problem), sha)
        assert again.ref is not None and again.ref.alive and again.ref is not ref_a
