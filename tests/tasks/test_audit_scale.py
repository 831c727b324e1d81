"""Audits at scale: KernelBench-style problems at upstream sizes (no declared small shapes) are audited at shapes
derived from their input-only size constants, a reference too large even then is a flag, and degenerate problems
are still rejected at the derived shapes.

The problems are our own, written at the sizes upstream KernelBench uses (an elementwise op on (4096, 393216), a
conv2d over 128 images of 512 x 512). One batch of real workers on the CPU audits them all.
"""

from __future__ import annotations

import pytest

from kernelmosaic.tasks.audit.runner import AuditConfig, audit_tasks, derived_shapes
from kernelmosaic.tasks.audit.summary import summarize_audits
from kernelmosaic.tasks.schema import AuditReport, Forms, Task

HEAD = "import torch\nimport torch.nn as nn\n\n"


def _elementwise(forward: str) -> str:
    return HEAD + f'''batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        {forward}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


CONV = HEAD + '''batch_size = 128
in_channels = 3
out_channels = 16
kernel_size = 3
height = 512
width = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''

# The weight's sizes are read by __init__, so they cannot shrink: 4 TiB of weights at any input size.
FIXED_MATMUL = HEAD + '''M = 1024
K = 1 << 20
N = 1 << 20


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(K, N))

    def forward(self, x):
        return x @ self.weight


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
'''

# 4 GiB of weights: within this worker's share of the host, above its 3 GiB address-space cap.
BIG_WEIGHTS = FIXED_MATMUL.replace("1 << 20", "1 << 15").replace("M = 1024", "M = 8")

# Sized for its stated input, as classic image networks are: at derived image sizes the classifier cannot run.
FIXED_NETWORK = HEAD + '''batch_size = 256
channels = 3
image = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(3 * 224 * 224, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(x, 1))


def get_inputs():
    return [torch.randn(batch_size, channels, image, image)]


def get_init_inputs():
    return []
'''

PROBLEMS = {
    "relu": _elementwise("return torch.relu(x)"),
    "conv": CONV,
    "fixed_matmul": FIXED_MATMUL,
    "big_weights": BIG_WEIGHTS,
    "fixed_network": FIXED_NETWORK,
    "centered_minus_itself": _elementwise("y = x - x.mean()\n        return y - y"),
    "constant_rows": _elementwise("return torch.ones_like(x).sum(dim=1)"),
}


def _task(task_id: str, reference: str) -> Task:
    return Task(id=task_id, title=task_id, level=1, category="fused",
                forms=Forms(nl=f"{task_id}.", reference=reference))


TASKS = [_task(k, v) for k, v in PROBLEMS.items()]
CONFIG = AuditConfig(jobs=2, device="cpu", cross_check=False, memory_limit_gb=3.0, task_timeout_s=120)


@pytest.fixture(scope="module")
def reports() -> dict[str, AuditReport]:
    return {r.task_id: r for r in audit_tasks(TASKS, CONFIG)}


def _rules(report: AuditReport, severity: str) -> set[str]:
    return {f.rule for f in report.findings if f.severity == severity}


def test_a_huge_elementwise_problem_passes_in_seconds_at_derived_shapes_the_report_names(reports) -> None:
    report = reports["relu"]
    assert report.passed and report.findings == [], report.findings
    assert report.shapes == {"batch_size": 257, "dim": 24577}
    assert report.seconds < 30
    conv = reports["conv"]  # the channels and kernel build the model: kept; the batch and image sizes shrink
    assert conv.passed and conv.findings == [], conv.findings
    assert conv.shapes == {"batch_size": 33, "height": 33, "width": 33}


def test_too_large_even_after_shrinking_is_a_flag_not_a_crash(reports) -> None:
    report = reports["fixed_matmul"]
    assert report.passed and _rules(report, "flag") == {"task-too-large-to-audit"}
    assert report.shapes == {"M": 65}  # shrunk where it could be, and measured there on meta: nothing was allocated
    assert "measured on meta" in report.flags[0].evidence and report.devices == []
    weights = reports["big_weights"]  # building the model meets the worker's cap: the same flag
    assert weights.passed and _rules(weights, "flag") == {"task-too-large-to-audit"}


def test_shapes_the_reference_cannot_run_at_are_not_used(reports) -> None:
    report = reports["fixed_network"]  # audited as stated; the size is a flag, not a failure
    assert report.passed and report.shapes == {}
    assert _rules(report, "flag") == {"task-small-shapes-too-large"}
    assert "not shrunk: at {'batch_size': 33, 'image': 33}" in report.flags[0].evidence


def test_degenerate_problems_are_still_rejected_at_derived_shapes(reports) -> None:
    zero = reports["centered_minus_itself"]
    assert not zero.passed and "task-near-zero-output" in _rules(zero, "reject") and zero.shapes
    constant = reports["constant_rows"]
    assert not constant.passed and "task-constant-output" in _rules(constant, "reject") and constant.shapes


def test_the_summary_counts_tasks_audited_at_derived_shapes(reports) -> None:
    summary = summarize_audits("scale", TASKS, [reports[t.id] for t in TASKS])
    assert summary.derived_shapes == 5 and summary.flags["task-too-large-to-audit"] == 2


def test_declared_small_shapes_and_default_audits_derive_nothing() -> None:
    relu = TASKS[0]
    assert derived_shapes(relu, CONFIG) == {"batch_size": 257, "dim": 24577}
    assert derived_shapes(relu, AuditConfig(jobs=1, shapes="default")) == {}
    declared = relu.model_copy(update={"shapes": relu.shapes.model_copy(update={"small": {"batch_size": 4}})})
    assert derived_shapes(declared, CONFIG) == {}
