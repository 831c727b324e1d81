"""Planted duplicates are found; different problems and other precisions are not clustered."""

from __future__ import annotations

from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.curate.duplicates import DuplicateConfig, find_duplicates
from kernelmosaic.curate.normalize import ast_hash, problem_tokens, spec_tokens
from kernelmosaic.tasks.folder import save_task_folder

from .conftest import reference, task

SPEC = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0)\n"
SPEC_RENAMED = "dim n, m\ninput inp: f32[n, m]\n# relu\noutput out[i, j] = max(inp[i, j], 0.0)\n"


def _planted():
    return [
        task("relu", "torch.relu({x})", spec=SPEC),
        # renamed argument, another docstring, F alias instead of torch: the same problem
        task("relu_copy", "F.relu({x})", arg="inp", doc="Rectifier.", spec=SPEC_RENAMED),
        task("relu_big", "torch.relu({x})", batch=4096),  # the same computation at another size
        task("relu_bf16", "torch.relu({x})", dtype="bf16"),  # another precision: another kernel
        task("softmax", "torch.softmax({x}, dim=-1)", category="softmax"),
        task("gelu_tanh", "F.gelu({x}, approximate='tanh')"),
        task("row_sum", "{x}.sum(dim=1)", category="reduction"),
        task("layernorm", "F.layer_norm({x}, ({x}.shape[-1],))", category="normalization"),
    ]


def test_ast_hash_ignores_names_aliases_comments_and_docstrings():
    a = reference("torch.relu({x})")
    b = reference("F.relu({x})", arg="inp", doc="Something else.").replace("import torch.nn.functional as F",
                                                                        "from torch.nn import functional as F  # f")
    c = reference("torch.relu({x})", batch=128)
    assert ast_hash(a) == ast_hash(b)
    assert ast_hash(a) != ast_hash(c)  # other constants: not an exact copy
    assert ast_hash(a) != ast_hash(reference("torch.sigmoid({x})"))


def test_canonical_spec_ignores_names_and_comments():
    assert spec_tokens(SPEC) == spec_tokens(SPEC_RENAMED)
    assert spec_tokens(SPEC) != spec_tokens(SPEC.replace("max(", "min("))
    assert spec_tokens("") == []
    assert "Model" in problem_tokens(reference("torch.relu({x})"))


def test_planted_duplicates_are_clustered():
    report = find_duplicates(_planted())
    assert [c.task_ids for c in report.exact] == [["relu", "relu_copy"]]
    assert report.exact[0].keep == "relu"  # has a spec and sorts first
    assert [c.task_ids for c in report.near] == [["relu", "relu_big", "relu_copy"]]
    assert report.dropped() == {"relu_copy", "relu_big"}
    clustered = {t for c in report.exact + report.near for t in c.task_ids}
    assert not clustered & {"relu_bf16", "softmax", "gelu_tanh", "row_sum", "layernorm"}


def test_threshold_controls_near_clusters():
    tasks = _planted()
    strict = find_duplicates(tasks, DuplicateConfig(threshold=1.0))
    assert all(c.min_similarity == 1.0 for c in strict.near)
    loose = find_duplicates(tasks, DuplicateConfig(threshold=0.3))
    assert sum(len(c.task_ids) for c in loose.near) > sum(len(c.task_ids) for c in strict.near)


def test_duplicate_ids_are_refused():
    tasks = _planted()
    try:
        find_duplicates(tasks + tasks[:1])
    except ValueError as exc:
        assert "unique" in str(exc)
    else:
        raise AssertionError("duplicate ids were accepted")


def test_cli_reports_clusters_and_exits_1(tmp_path):
    for t in _planted():
        save_task_folder(t, tmp_path)
    result = CliRunner().invoke(app, ["curate", "duplicates", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    assert '"relu_copy"' in result.output
    clean = tmp_path / "clean"
    for t in _planted()[4:]:
        save_task_folder(t, clean)
    assert CliRunner().invoke(app, ["curate", "duplicates", str(clean)]).exit_code == 0
    missing = CliRunner().invoke(app, ["curate", "duplicates", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "nope" in missing.output
