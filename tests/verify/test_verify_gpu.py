"""On a CUDA GPU (scripts/gpu/gpu-check): real CUDA candidates, the runtime defences, and every GPU anti-hack fixture."""

from __future__ import annotations

import shutil

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _config(cache, **kw) -> VerifyConfig:
    base = dict(device="cuda", trials=3, cache_dir=cache, timing_budget_ms=100, timing_rounds=2)
    return VerifyConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def gpu_verifier(build_cache):
    with Verifier(_config(build_cache)) as v:
        yield v


@pytest.fixture(scope="module")
def unguarded_verifier(build_cache):
    """Static checks off: shows that the runtime defences hold on their own."""
    with Verifier(_config(build_cache, static_checks=False, compile_baseline=False)) as v:
        yield v


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu-problems")
    (d / "add.py").write_text(gk.PROBLEM_ADD_RELU)
    (d / "mm.py").write_text(gk.PROBLEM_MATMUL)
    return d


def test_correct_cuda_kernel_accepted_with_both_speedups(gpu_verifier, problems, tmp_path):
    v = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "ok.py", gk.cuda_candidate("ext.add_relu(a, b)")))
    assert v.accepted, v.message
    assert v.timing.timer == "cuda_events"
    assert v.timing.compile is not None, v.timing.compile_baseline_error
    assert v.timing.speedup_vs_eager > 0 and v.timing.speedup_vs_compile > 0
    assert v.timing.l2_flush_bytes >= 2 * v.env.l2_bytes > 0
    assert 0 <= v.timing.escaped_ms < 0.03
    assert v.census.custom >= 1
    assert v.env.device_name and v.env.capability and v.env.driver
    # add+relu allocates one output like its inputs; eager allocates a + b and then relu's output.
    assert v.memory is not None and v.memory.candidate_peak_bytes > 0 and v.memory.reference_peak_bytes > 0
    assert v.memory.ratio == pytest.approx(v.memory.candidate_peak_bytes / v.memory.reference_peak_bytes)
    if not v.compile.cache_hit:  # where the CUDA build's time went: the CUDA unit and nvcc's front ends
        steps = {k.partition(":")[2]: s for k, s in v.compile.steps.items()}
        assert steps["cuda.cuda.o"] > 0 and steps["main.o"] > 0, v.compile.steps
        assert {"nvcc:cudafe++", "nvcc:cicc", "nvcc:gcc (compiling)"} <= set(steps), v.compile.steps


def test_illegal_access_is_cuda_error_and_next_candidate_is_judged_correctly(gpu_verifier, problems, tmp_path):
    bad = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "oob.py", gk.cuda_candidate("ext.out_of_bounds(a, b)")))
    assert bad.status == Status.cuda_error, bad.message
    good = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "ok2.py", gk.cuda_candidate("ext.add_relu(a, b) ")),
                               timing=False)
    assert good.accepted, good.message


def test_device_out_of_memory_is_resource_error_and_next_is_fine(gpu_verifier, problems, tmp_path):
    src = gk.cuda_candidate("ext.add_relu(a, b) if torch.empty(1 << 38, device=a.device) is not None else None")
    v = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "oom.py", src))
    assert v.status == Status.resource_error, v.message
    ok = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "ok3.py", gk.cuda_candidate("ext.add_relu(a, b)  ")),
                             timing=False)
    assert ok.accepted, ok.message


def test_uninitialised_output_is_caught(gpu_verifier, problems, tmp_path):
    v = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "half.py", gk.cuda_candidate("ext.half_written(a, b)")))
    assert v.status == Status.output_mismatch, v.message
    assert "NaN" in v.message  # the unwritten half reads the poison, not a stale earlier result


def test_side_stream_gets_no_false_speedup(unguarded_verifier, gpu_verifier, problems, tmp_path):
    side = unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "side.py", gk.matmul_candidate("ext.matmul_side_stream(a, b)")))
    same = unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "same.py", gk.matmul_candidate("ext.matmul(a, b)")))
    assert same.accepted, same.message
    if side.accepted:  # the device-wide sync inside the timed window puts the side-stream work in the measurement
        assert side.timing.candidate.median_ms >= 0.8 * same.timing.candidate.median_ms
    else:
        assert side.status in (Status.output_mismatch, Status.nondeterministic, Status.timing_anomaly), side.message
    guarded = gpu_verifier.verify(problems / "mm.py", kit.write(tmp_path, "side2.py", gk.matmul_candidate("ext.matmul_side_stream(a, b)")))
    assert guarded.status == Status.static_reject and any(f.rule.startswith("streams") for f in guarded.findings)


def test_work_left_running_on_a_side_stream_is_a_timing_anomaly(unguarded_verifier, problems, tmp_path):
    """The answer is right (computed on the current stream), but 8 ms of work keeps the device busy afterwards."""
    src = gk.matmul_candidate("ext.matmul_trailing_side_work(a, b)")
    v = unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "trail.py", src))
    assert v.status == Status.timing_anomaly, v.message
    # Either defence may speak first: the device stays busy past the candidate's stream (escaped work), and the
    # parent's own clock sees calls far longer than the reported time (wall clock).
    assert {f.rule for f in v.rejected_by} & {"timing-escaped-work", "timing-wall-clock"}, v.findings


def test_aten_behind_a_dead_kernel(unguarded_verifier, gpu_verifier, problems, tmp_path):
    src = gk.dead_kernel_candidate()
    assert unguarded_verifier.verify(problems / "add.py", kit.write(tmp_path, "dead.py", src)).status == Status.no_custom_kernel
    assert gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "dead2.py", src)).status == Status.static_reject


def test_tf32_switch(unguarded_verifier, gpu_verifier, problems, tmp_path):
    src = gk.matmul_candidate("ext.matmul(a, b)", prelude="torch.backends.cuda.matmul.allow_tf32 = True\n")
    assert unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "tf32.py", src)).status == Status.integrity_violation
    assert gpu_verifier.verify(problems / "mm.py", kit.write(tmp_path, "tf32b.py", src)).status == Status.static_reject


def test_persisting_l2_window(unguarded_verifier, gpu_verifier, problems, tmp_path):
    src = gk.matmul_candidate("ext.matmul_pinned_l2(a, b)")
    guarded = gpu_verifier.verify(problems / "mm.py", kit.write(tmp_path, "l2.py", src))
    assert guarded.status == Status.static_reject
    unguarded = unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "l2b.py", src))
    assert unguarded.status in (Status.accepted, Status.output_mismatch), unguarded.message


def test_race_is_not_accepted(unguarded_verifier, problems, tmp_path):
    v = unguarded_verifier.verify(problems / "mm.py", kit.write(tmp_path, "race.py", gk.matmul_candidate("ext.matmul_racy(a, b)")))
    assert v.status in (Status.output_mismatch, Status.nondeterministic), v.message


def _sanitized(build_cache, problem, honest, bad):
    """The honest and the bad candidate judged untimed with compute-sanitizer on: (clean, caught)."""
    with Verifier(_config(build_cache, sanitize=True)) as sanitizing:
        return sanitizing.verify(problem, honest, timing=False), sanitizing.verify(problem, bad, timing=False)


def test_sanitize_catches_an_over_read_the_plain_run_misses(gpu_verifier, build_cache, tmp_path):
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not installed")
    problem = kit.write(tmp_path, "odd.py", gk.PROBLEM_ADD_RELU_ODD)
    over = kit.write(tmp_path, "over.py", gk.cuda_candidate("ext.add_relu_overread(a, b)"))
    honest = kit.write(tmp_path, "honest.py", gk.cuda_candidate("ext.add_relu(a, b)"))
    plain = gpu_verifier.verify(problem, over, timing=False)
    assert plain.accepted, plain.message  # correct values, no fault: only a memory checker sees the over-read
    clean, caught = _sanitized(build_cache, problem, honest, over)
    assert clean.accepted, (clean.message, clean.sanitizer)
    assert clean.sanitizer["memcheck"]["errors"] == 0 and clean.sanitizer["racecheck"]["errors"] == 0, clean.sanitizer
    assert caught.status == Status.cuda_error, (caught.message, caught.sanitizer)
    assert [f.rule for f in caught.rejected_by] == ["sanitizer-memcheck"], caught.findings
    assert "overread_kernel" in caught.rejected_by[0].evidence or caught.sanitizer["memcheck"]["errors"] >= 1


def test_missing_barrier_reduction_is_rejected_once_sanitized(gpu_verifier, build_cache, tmp_path):
    """A block tree reduction without __syncthreads() between its steps often gives right sums (warps run in step
    often enough), so trials and timing may pass it; racecheck sees the shared-memory hazard whatever the values."""
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not installed")
    problem = kit.write(tmp_path, "rowsum.py", gk.PROBLEM_ROWSUM)
    racy = kit.write(tmp_path, "racy.py", gk.rowsum_candidate("rowsum_no_barrier"))
    honest = kit.write(tmp_path, "honest.py", gk.rowsum_candidate("rowsum"))
    plain = gpu_verifier.verify(problem, racy, timing=False)
    assert plain.status in (Status.accepted, Status.output_mismatch, Status.nondeterministic), plain.message
    clean, caught = _sanitized(build_cache, problem, honest, racy)
    assert clean.accepted and clean.sanitizer["racecheck"]["errors"] == 0, (clean.message, clean.sanitizer)
    if plain.accepted:  # the race only shows under the tool: rejected as a CUDA error with racecheck's rule
        assert caught.status == Status.cuda_error, (caught.message, caught.sanitizer)
        assert "sanitizer-racecheck" in [f.rule for f in caught.rejected_by], caught.findings
    else:  # wrong sums already: rejected before the sanitizer runs
        assert not caught.accepted, caught.message
    print(f"missing barrier: plain {plain.status.value}, sanitized {caught.status.value}, racecheck {caught.sanitizer}")


def test_triton_candidate_is_accepted(gpu_verifier, problems, tmp_path):
    pytest.importorskip("triton")
    v = gpu_verifier.verify(problems / "add.py", kit.write(tmp_path, "tri.py", gk.TRITON_ADD_RELU))
    assert v.accepted, v.message
    assert not v.rejected_by


def test_profile_lists_kernels_and_ncu_metrics_where_ncu_works(gpu_verifier, problems, tmp_path):
    report = gpu_verifier.profile(problems / "add.py", kit.write(tmp_path, "prof.py", gk.cuda_candidate("ext.add_relu(a, b)")))
    assert any(k.custom and "add_relu" in k.name for k in report.kernels), report
    if report.ncu_metrics:
        metrics = next(iter(report.ncu_metrics.values()))
        assert metrics.get("time_ns", 0) > 0
    else:
        assert "ncu" in report.message
