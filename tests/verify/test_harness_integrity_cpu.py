"""The harness against code in its own process (issue 11, item 8): a native extension that rewrites the worker's
timing module through the Python C-API, one that patches the C function behind `time.perf_counter` in place (no
Python-level snapshot can see that), and a Python rebinding of the timer's method. Static rules, the worker-module
integrity snapshot and the parent's wall-clock bound each stop one of them on their own; an honest candidate built
from the same extension passes all three."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import harness_kit as hk
from . import kit

pytestmark = pytest.mark.slow


def _config(build_cache, static: bool, watch: bool = True) -> VerifyConfig:
    return VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, static_checks=static, memory_watch=watch,
                        timing_budget_ms=20, timing_rounds=1, compile_baseline=False, run_timeout_s=60)


@pytest.fixture(scope="module")
def unguarded(build_cache):
    with Verifier(_config(build_cache, static=False)) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def unwatched(build_cache):
    """Static checks and the memory watch off: the parent's clock alone."""
    with Verifier(_config(build_cache, static=False, watch=False)) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("harness-problem"), "problem.py", kit.PROBLEM_ADD_RELU)


def test_c_api_access_is_a_static_reject(build_cache, problem, tmp_path):
    with Verifier(_config(build_cache, static=True)) as verifier:
        v = verifier.verify(problem, kit.write(tmp_path, "rebind.py", hk.REBIND_CLOCK))
    assert v.status == Status.static_reject, v.message
    assert "dynamic-code" in {f.rule for f in v.rejected_by}


def test_c_api_rewrite_of_the_timing_module_is_an_integrity_violation(unguarded, problem, tmp_path):
    v = unguarded.verify(problem, kit.write(tmp_path, "rebind.py", hk.REBIND_CLOCK))
    assert v.status == Status.integrity_violation, v.message
    assert "kmworker.timing.time was replaced" in v.message


def test_python_rebinding_of_the_timer_is_an_integrity_violation(unguarded, problem, tmp_path):
    extra = ("import sys\nTimer = sys.modules['kmworker.timing'].Timer\n_one = Timer.one\n"
             "Timer.one = lambda self, fn, inputs, lead=True: _one(self, fn, inputs, lead)._replace(stream_ms=1e-4)")
    v = unguarded.verify(problem, kit.write(tmp_path, "timer.py", kit.candidate("return ext.add_relu(a, b)", extra=extra)))
    assert v.status == Status.integrity_violation, v.message
    assert "kmworker.timing.Timer.one" in v.message


def test_a_clock_slowed_in_native_code_is_caught_by_the_parents_clock(unwatched, problem, tmp_path):
    v = unwatched.verify(problem, kit.write(tmp_path, "native_clock.py", hk.NATIVE_SLOW_CLOCK))
    assert v.status == Status.timing_anomaly, v.message
    assert "timing-wall-clock" in {f.rule for f in v.findings}


def test_a_clock_slowed_one_and_a_half_times_in_native_code_is_caught(unwatched, problem, tmp_path):
    """A lie too small for the bounds that hold without the kernel's account (2x the report plus a slack): the
    wall time less load may exceed the worker's report by a tenth and a request's own cost."""
    v = unwatched.verify(problem, kit.write(tmp_path, "mild_clock.py", hk.add_relu("\next.slow_native_clock(1.5)\n")))
    assert v.status == Status.timing_anomaly, v.message
    assert "timing-wall-clock" in {f.rule for f in v.findings}


@pytest.mark.parametrize("swap", ["slow_native_clock", "slow_vectorcall_clock"])
def test_the_clocks_c_entry_rewritten_is_seen_from_outside(unguarded, problem, tmp_path, swap):
    """The C function behind `time.perf_counter` swapped for one 1.2x slow (under the clock bounds), in its method
    table or in the function object's vectorcall slot (red team 11 did both): no Python object changes identity and
    no GOT slot changes, but the fields the worker named at start do."""
    v = unguarded.verify(problem, kit.write(tmp_path, f"{swap}.py", hk.add_relu(f"\next.{swap}(1.2)\n")))
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "time.perf_counter" in v.message, v.message


@pytest.mark.parametrize("factor", [3.0, 1.1])
def test_a_clock_slowed_through_the_got_of_every_loaded_library_is_caught(unguarded, problem, tmp_path, factor):
    """Issue 36: the GOT slots that resolve `clock_gettime` in libpython (and every other loaded object), found
    through the ELF relocation tables and rewritten, so `time.perf_counter` runs slow without any Python object
    changing. The verifier's process reads the slots from outside the worker (`got_watch.py`): a rewrite is a
    reject whatever the lie's size (1.1x is under every clock bound)."""
    v = unguarded.verify(problem, kit.write(tmp_path, f"got_clock_{int(factor * 10)}.py", hk.got_clock(factor)))
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "clock_gettime" in v.message, v.message


def test_a_clock_that_lies_only_outside_the_burst_whose_burst_a_memo_answers_is_caught(unguarded, tmp_path):
    """Issue 36: the timed calls run under a clock slowed 10x (GOT slots of `clock_gettime`), the back-to-back calls
    of the wall-clock burst under the true one, answered from a memo keyed on their inputs' content, so the burst
    looked fast enough for any lie (a 4x one was accepted when the burst's calls cycled four input sets). Every
    burst call now has inputs of its own: the memo never hits, the burst costs what the calls cost, and the lie is
    held to the call-time bound (3x; a lie under it passes, more easily on a loaded host, where the timed calls the
    lie divides are slower too)."""
    problem = kit.write(tmp_path, "matmul.py", hk.PROBLEM_MATMUL)
    v = unguarded.verify(problem, kit.write(tmp_path, "memo_clock.py", hk.memo_clock(10.0)))
    # the rewritten slots are read from outside the worker first (got_watch.py), before any call is timed
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "clock_gettime" in v.message, v.message


def test_the_same_memo_with_an_honest_clock_is_accepted_with_distinct_burst_inputs(unguarded, tmp_path):
    problem = kit.write(tmp_path, "matmul.py", hk.PROBLEM_MATMUL)
    v = unguarded.verify(problem, kit.write(tmp_path, "memo_honest.py", hk.memo_clock(1.0)))
    assert v.accepted, v.message
    assert v.timing.burst_inputs_distinct is True
    # the round's checked call and the calls picked from the burst (16 and its last where it has 17 or more: a loaded
    # host's burst of slow calls has fewer, 16 checked in all at a load of 12-18 on two cores)
    assert v.timing.timed_calls_checked >= 4


def test_a_process_the_candidate_starts_is_stopped_while_its_baselines_are_timed(unguarded, problem, tmp_path):
    """A child process that outlives the import (spinning, it could burn the cores while eager is timed; this one
    sleeps) is stopped with the worker around every baseline request, named in a flag, and killed with the worker."""
    extra = ("import subprocess, sys\n_child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n")
    v = unguarded.verify(problem, kit.write(tmp_path, "child.py", kit.candidate("return ext.add_relu(a, b)", extra=extra)))
    assert v.accepted, v.message
    flags = [f for f in v.findings if f.rule == "candidate-processes"]
    assert flags and flags[0].severity == "flag", v.findings
    assert v.timing.candidate_held >= 3 * v.timing.rounds  # eager's round and its two bursts, per round


def test_the_honest_candidate_from_the_same_extension_passes(unguarded, problem, tmp_path):
    v = unguarded.verify(problem, kit.write(tmp_path, "honest.py", hk.add_relu()))
    assert v.accepted, v.message
    t = v.timing
    assert t.clock_ratio > 0 and t.wall_ratio > 0 and t.wall_ratio_eager > 0  # measured, and within the bound
    assert t.candidate_held >= 3 * t.rounds  # held still while eager's round and its bursts were timed
    assert "candidate-processes" not in {f.rule for f in v.findings}
    assert v.env.gpu_index == v.env.gpu_uuid == v.env.gpu_name == ""  # CPU: no GPU judged it
    assert v.timing.burst_inputs_distinct is True
    assert v.memory is None  # peak memory is measured on CUDA only


def test_a_got_slot_rewritten_only_inside_each_call_is_seen_while_the_calls_are_timed(unguarded, problem, tmp_path):
    """Every call rewrites the GOT slots of `clock_gettime` on entry and restores them on return, so the tables are
    clean whenever a phase ends; the verifier's process reads them at random moments while the calls are timed."""
    v = unguarded.verify(problem, kit.write(tmp_path, "got_inside.py", hk.got_clock_inside_calls()))
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "after timing" in v.message, v.message


def test_libc_clock_code_patched_in_place_is_caught(unguarded, problem, tmp_path):
    """Not a GOT slot: the first instructions of libc's `clock_gettime` become a jump to a clock 1.2x slow (under
    the clock bounds). The machine code of libc, the loader, the interpreter and the CUDA runtime is watched from
    the verifier's process like the GOTs."""
    v = unguarded.verify(problem, kit.write(tmp_path, "code_patch.py", hk.clock_code_patch(1.2)))
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "machine code of libc" in v.message, v.message


def test_the_timers_scale_constant_rewritten_in_place_is_seen_from_outside(unguarded, problem, tmp_path):
    """Red team 12: the 1000.0 the timer multiplies seconds by, rewritten to 450.0 inside the float object (no Python
    object changes identity): the worker named its timing code's constants at start, and the parent watches them."""
    v = unguarded.verify(problem, kit.write(tmp_path, "timer_scale.py", hk.timer_scale(450.0)))
    assert v.status == Status.integrity_violation, v.message
    assert "harness-got" in {f.rule for f in v.rejected_by} and "kmworker.timing" in v.message, v.message
