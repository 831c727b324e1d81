"""Where audits run: references on CUDA when the worker sees a GPU (the CPU otherwise, by the same code path),
workers spread over the visible GPUs, a default worker count from the cores, out-of-memory as a flag.

The worker function runs in-process here on fixture code we wrote; the CUDA tests are marked `gpu`.
"""

from __future__ import annotations

import os

import pytest
import torch

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks, build_job, default_jobs, worker_gpu
from kernelmosaic.tasks.audit.worker import audit_one, resolve_device

from .conftest import make_task

SPEC = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0) * 2.0\n"


def _audit(task, **config) -> dict:
    job, early = build_job(task, AuditConfig(jobs=1, **config))
    assert job is not None, early
    return audit_one(job)


def _rules(result: dict, severity: str) -> set[str]:
    return {f["rule"] for f in result["findings"] if f["severity"] == severity}


def test_auto_runs_where_the_worker_can() -> None:
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"
    result = _audit(make_task("clean", "torch.relu(x) * 2.0", SPEC), device="cpu")
    assert result["devices"][0] == "cpu" and result["findings"] == []
    assert "task-spec-reference-mismatch" in result["checks"]


def test_rounding_noise_between_calls_is_not_nondeterminism() -> None:
    # CUDA atomics reorder sums from call to call; the verifier compares within tolerance, so does the audit.
    noisy = _audit(make_task("noisy", "x * 2.0 + 1e-9 * torch.randn_like(x)"), device="cpu")
    assert "task-nondeterministic" not in _rules(noisy, "reject")
    random = _audit(make_task("random", "x * 2.0 + torch.randn_like(x)"), device="cpu")
    assert "task-nondeterministic" in _rules(random, "reject")


def test_running_out_of_memory_is_a_flag_not_a_failure() -> None:
    # A real worker under its address-space cap (1 GiB) meets a reference that allocates 2 GiB.
    task = make_task("huge", "x + torch.ones(1 << 29).sum()")
    [report] = audit_tasks([task], AuditConfig(jobs=1, device="cpu", cross_check=False, memory_limit_gb=1.0))
    assert report.passed and [f.rule for f in report.flags] == ["task-too-large-to-audit"]
    assert "can't allocate memory" in report.flags[0].evidence


def test_workers_take_the_visible_gpus_in_turn() -> None:
    assert [worker_gpu(i, None, 2) for i in range(3)] == ["0", "1", "0"]
    assert [worker_gpu(i, "3,5", 2) for i in range(3)] == ["3", "5", "3"]
    assert worker_gpu(4, None, 1) is None and worker_gpu(0, "2", 8) is None and worker_gpu(0, "", 0) is None


def test_default_worker_count_follows_the_cores() -> None:
    cores = len(os.sched_getaffinity(0))
    assert default_jobs() == max(1, min(16, cores - 1))
    assert AuditConfig().jobs == default_jobs()


def test_cuda_is_refused_up_front_without_a_gpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="no visible GPU"):
        audit_tasks([make_task("clean", "torch.relu(x)")], AuditConfig(jobs=1, device="cuda"))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_references_run_on_cuda_and_are_cross_checked_on_the_cpu() -> None:
    result = _audit(make_task("clean", "torch.relu(x) * 2.0", SPEC))
    assert result["devices"] == ["cuda", "cpu"] and result["findings"] == []
    degenerate = _audit(make_task("zeros", "x * 0.0"))
    assert degenerate["devices"][0] == "cuda" and "task-near-zero-output" in _rules(degenerate, "reject")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_reference_failing_only_on_cuda_is_flagged_and_audited_on_the_cpu() -> None:
    result = _audit(make_task("cpu_only", "x * 2.0 + torch.ones(x.shape[-1])"))
    assert result["devices"] == ["cpu"] and _rules(result, "flag") == {"task-device-mismatch"}
    assert not _rules(result, "reject")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_reference_beyond_its_workers_share_of_the_gpu_is_a_flag() -> None:
    # The worker may use half of the GPU; this forward allocates 60% of it: it fits the GPU, not the worker's share.
    total = torch.cuda.get_device_properties(0).total_memory
    task = make_task("over_share", f"x + torch.zeros({int(0.6 * total) // 4}, device=x.device).sum()")
    [report] = audit_tasks([task], AuditConfig(jobs=1, device="cuda", memory_fraction=0.5))
    assert report.passed and [f.rule for f in report.flags] == ["task-too-large-to-audit"]
    assert "ran out of memory on cuda" in report.flags[0].message
