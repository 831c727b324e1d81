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


def test_the_cli_prints_each_match_on_one_line_with_ids_and_paths_whole(tmp_path) -> None:
    """Piped (as here), a match is one line, for grep; on a terminal the console wraps it at spaces only
    (tests/test_console_wrap.py). The table it replaced folded ids and paths inside a word at 80 columns."""
    from typer.testing import CliRunner

    from kernelmosaic.tasks.cli import app
    from kernelmosaic.tasks.folder import save_task_folder

    mine_id, theirs_id = "mine_gemm_scale_gelu_renamed_copy", "kb_level2_gemm_scale_gelu_with_a_long_name"
    save_task_folder(_task(mine_id, NEAR_COPY), tmp_path / "mine")
    save_task_folder(_task(theirs_id, GEMM), tmp_path / "evaluation_set" / "checked_out" / "somewhere_deep")
    done = CliRunner().invoke(app, ["decontam", str(tmp_path / "mine"), "--against", str(tmp_path / "evaluation_set")],
                              env={"COLUMNS": "80"})
    assert done.exit_code == 1, done.output  # a near match found
    words = done.output.split()
    assert mine_id in words and "1 near matches" in done.output, done.output
    line = next(x for x in done.output.splitlines() if mine_id in x)
    assert line.split()[2].endswith(f"/somewhere_deep/L1/{theirs_id}"), line  # the problem's whole path, on that line
