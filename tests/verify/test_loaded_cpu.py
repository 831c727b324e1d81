"""Issue 35, item 6: timing verdicts that do not depend on machine load. Every core is kept busy by plain Python
loops (`loaded_kit.busy_cores`) while honest C++ candidates of the held-out kinds are judged with timing on: each
is accepted, and with no `timing-wall-clock` finding, because the parent tells load from a slowed clock by the
kernel's account of the worker's threads (verify/runclock.py). A clock slowed in native code is still rejected under
the same load. Static checks and the memory watch (which sees the clock's method table rewritten) are off so the
timing checks are shown to hold alone."""

from __future__ import annotations

import pytest

from kernelmosaic.tasks.shapes import apply_shape_overrides, small_shapes
from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit
from . import loaded_kit as lk

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("loaded")
    for name, source in lk.PROBLEMS.items():
        kit.write(d, f"problem_{name}.py", source)
    for name, source in lk.CANDIDATES.items():
        kit.write(d, f"cand_{name}.py", source)
    kit.write(d, "cand_slow_clock.py", lk.slow_clock(10.0))
    kit.write(d, "cand_mild_clock.py", lk.slow_clock(1.5))
    return d


@pytest.fixture(scope="module")
def verifier(build_cache, files):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, static_checks=False, memory_watch=False,
                          timing_budget_ms=20,
                          timing_rounds=2, compile_baseline=False, run_timeout_s=120)
    with Verifier(config) as v:
        v.verify(files / "problem_add.py", files / "cand_add.py")  # the one build, before the load starts
        yield v


@pytest.mark.parametrize("name", sorted(lk.CANDIDATES))
def test_an_honest_candidate_is_accepted_with_every_core_busy(verifier, files, name):
    with lk.busy_cores():
        v = verifier.verify(files / f"problem_{name}.py", files / f"cand_{name}.py")
    assert v.accepted, f"{v.status}: {v.message}"
    assert "timing-wall-clock" not in {f.rule for f in v.findings}
    t = v.timing
    assert 0 < t.clock_ratio_cpu and 1 <= t.wall_check_attempts <= 3  # the kernel's account was read and used


def test_a_slowed_clock_is_rejected_with_every_core_busy(verifier, files):
    with lk.busy_cores():
        v = verifier.verify(files / "problem_add.py", files / "cand_slow_clock.py")
    assert v.status == Status.timing_anomaly, v.message
    finding = next(f for f in v.findings if f.rule == "timing-wall-clock")
    assert finding.evidence.count("attempt") == 3 and "kernel's account" in finding.evidence


def test_a_clock_slowed_one_and_a_half_times_is_rejected_with_every_core_busy(verifier, files):
    """Under load the wall time less load is the worker's time on a CPU, which a 1.5x slowed clock's report can
    match; its busiest thread's run + wait cannot: load only adds the request's own wake-ups beyond the report,
    as eager's do, while the slowed clock's excess grows with the burst (each failed attempt runs 4x longer)."""
    with lk.busy_cores():
        v = verifier.verify(files / "problem_add.py", files / "cand_mild_clock.py")
    assert v.status == Status.timing_anomaly, v.message
    finding = next(f for f in v.findings if f.rule == "timing-wall-clock")
    assert finding.evidence.count("attempt") == 3 and "busiest thread runnable" in finding.evidence


THREADED = [("kb_l1_014_upper_triangular_matmul__self_ext", "strict"),  # ATen's parallel_for over the rows
            ("kb_l2_012_gemm_multiply_leakyrelu__torch_linear_custom_epilogue", "kernelbench")]  # PyTorch's GEMM


@pytest.mark.parametrize("stem, policy", THREADED)
def test_a_candidate_whose_threads_wait_on_each_other_is_accepted_with_two_busy_loops_per_core(
        verifier, tmp_path, stem, policy):
    """Candidates of the CPU corpus whose work runs on several OpenMP threads: with every core twice oversubscribed,
    a thread often waits for a preempted sibling. Spinning there counted as the call's work (rejected on the call-time
    bound in 1 of 3 runs); the workers' threads now sleep while they wait (pool.WAIT_ASLEEP)."""
    from tests.corpus.corpus import CORPUS

    candidate = CORPUS / "cpu" / f"{stem}.py"
    problem = CORPUS / "problems" / f"{stem.split('__')[0]}.py"
    source = problem.read_text()
    small = kit.write(tmp_path, problem.name, apply_shape_overrides(source, small_shapes(source)))
    with lk.busy_cores(per_core=2):
        v = verifier.verify(small, candidate, policy=policy)
    assert v.accepted, f"{v.status}: {v.message}"
    assert "timing-wall-clock" not in {f.rule for f in v.findings}
    assert 0 < v.timing.clock_ratio_cpu and 1 <= v.timing.wall_check_attempts <= 3
