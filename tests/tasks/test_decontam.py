"""Decontamination: a renamed near copy of an evaluation problem is found; an unrelated task is not."""

from __future__ import annotations

from kernelmosaic.tasks.decontam import decontaminate, fingerprint

from .conftest import make_task

GEMM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm, scale, then GELU."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x = self.linear(x)
        x = x * self.scale
        return torch.nn.functional.gelu(x)


batch_size = 128


def get_inputs():
    return [torch.randn(batch_size, 512)]


def get_init_inputs():
    return [512, 1024, 2.0]
'''

NEAR_COPY = (GEMM.replace("x = ", "h = ").replace("(x)", "(h)").replace("x *", "h *").replace("(x)", "(h)")
             .replace("self.linear", "self.fc").replace('"""Gemm, scale, then GELU."""', "# a copy")
             .replace("def forward(self, x):", "def forward(self, inp):").replace("self.fc(h)", "self.fc(inp)")
             .replace("batch_size = 128", "batch_size = 64"))


def _task(task_id: str, reference: str):
    task = make_task(task_id, "x")
    return task.model_copy(update={"forms": task.forms.model_copy(update={"reference": reference})})


def test_renamed_copy_is_found_and_unrelated_task_is_not() -> None:
    evaluation = [_task("kb_gemm", GEMM), make_task("kb_relu", "torch.relu(x)")]
    mine = [_task("mine_copy", NEAR_COPY), make_task("mine_sigmoid", "torch.sigmoid(x)"),
            make_task("mine_cumsum", "torch.cumsum(x, dim=1)")]
    report = decontaminate(mine, evaluation, "fixture")
    pairs = {(m.task_id, m.against_id) for m in report.matches}
    assert pairs == {("mine_copy", "kb_gemm")}
    match = report.matches[0]
    assert match.ast_similarity >= 0.8 and match.ast_similarity > match.token_jaccard


def test_fingerprint_ignores_docstrings_and_input_boilerplate() -> None:
    plain = GEMM.replace('    """Gemm, scale, then GELU."""\n\n', "")
    assert fingerprint(plain) == fingerprint(GEMM.replace("batch_size = 128", "batch_size = 7"))
