"""`kernelmosaic verify` exit codes and JSON, and `verify-batch` resuming, on the CPU device."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app

from . import kit

pytestmark = pytest.mark.slow


@pytest.fixture
def env(build_cache, monkeypatch):
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(build_cache))


def test_verify_exit_codes_and_json(env, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    wrong = kit.write(tmp_path, "wrong.py", kit.candidate("return ext.add_only(a, b)"))
    runner = CliRunner()
    res = runner.invoke(app, ["verify", str(problem), str(good), "--device", "cpu", "--trials", "2", "--json", "--no-timing"])
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.stdout)
    assert verdict["schema"] == "kernelmosaic.verdict/1" and verdict["accepted"] is True
    res = runner.invoke(app, ["verify", str(problem), str(wrong), "--device", "cpu", "--trials", "2", "--no-timing"])
    assert res.exit_code == 1 and "output_mismatch" in res.output
    res = runner.invoke(app, ["verify", str(problem), str(tmp_path / "missing.py"), "--device", "cpu"])
    assert res.exit_code == 2 and "missing.py" in res.output


def test_verify_batch_writes_jsonl_and_resumes(env, tmp_path):
    for name, forward in (("p1", "return ext.add_relu(a, b)"), ("p2", "return ext.add_only(a, b)")):
        d = tmp_path / "pairs" / name
        d.mkdir(parents=True)
        kit.write(d, "problem.py", kit.PROBLEM_ADD_RELU)
        kit.write(d, "candidate.py", kit.candidate(forward))
    out = tmp_path / "verdicts.jsonl"
    args = ["verify-batch", str(tmp_path / "pairs"), "--out", str(out), "--device", "cpu", "--trials", "2", "--no-timing"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output  # judged, and one pair was rejected
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["id"]: r["verdict"]["status"] for r in rows} == {"p1/candidate": "accepted", "p2/candidate": "output_mismatch"}
    # captured output is not a terminal: a line per verdict as it is written, in that order, before the summary
    lines = re.findall(r"^\[(\d)/2\] (\S+)  (\S+)  [\d.]+ s  \((.*)\)$", res.output, re.M)
    assert [(n, pair, status) for n, pair, status, _ in lines] == [(str(k + 1), r["id"], r["verdict"]["status"])
                                                                  for k, r in enumerate(rows)]
    assert {pair: why for _, pair, _, why in lines}["p1/candidate"] == "untimed"
    assert res.output.index("[2/2]") < res.output.index("1 accepted, 1 rejected")
    assert "judging 2 pair(s) on cpu" in res.output and res.output.index("judging 2 pair(s)") < res.output.index("[1/2]")
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1 and "2 already judged" in res.output and "[1/2]" not in res.output  # the file's verdicts
    assert len(out.read_text().splitlines()) == 2


def test_explain_prints_rule_severity_rationale_and_evidence(env, tmp_path, monkeypatch):
    kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    kit.write(tmp_path, "cheat.py", kit.candidate("return torch.relu(a + b)  # ext is never used"))
    # paths as a user types them: a long absolute one (pytest-xdist's workers add a folder) wraps inside its cell
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["verify", "problem.py", "cheat.py", "--device", "cpu", "--explain"], env={"COLUMNS": "250"})
    assert res.exit_code == 1
    assert res.stdout.startswith("no_custom_kernel")  # the ext is built but never called
    assert "torch-compute" in res.output and "no-kernel-launched" in res.output and "reject" in res.output
    assert "cheat.py:" in res.output  # evidence names the file and line
    from kernelmosaic.verify.static import RULES

    assert all(word in res.output for word in RULES["torch-compute"].rationale.split()[:4])


def _task_folder(root, small):
    folder = root / "tasks" / "t_add_relu"
    folder.mkdir(parents=True)
    kit.write(folder, "reference.py", kit.PROBLEM_ADD_RELU)
    (folder / "task.toml").write_text(
        'schema = "kernelmosaic.task/1"\nid = "t_add_relu"\ntitle = "Add then ReLU"\nlevel = 1\n'
        'category = "elementwise"\ndtype = "fp32"\nnl = "y = relu(a + b) elementwise over n float32 values."\n'
        f"[shapes]\nsmall = {{ n = {small} }}\n")
    return folder / "reference.py"


def test_device_picked_small_shapes_on_cpu_and_no_scratch_left(env, tmp_path, monkeypatch):
    import tempfile

    import torch

    from kernelmosaic.contracts.hashing import problem_hash
    from kernelmosaic.tasks.folder import load_task_folder

    problem = _task_folder(tmp_path, small=96)
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the workers' and the CLI's folders go
    res = CliRunner().invoke(app, ["verify", str(problem), str(good), "--trials", "2", "--no-timing", "--json"])
    verdict = json.loads(res.stdout)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert verdict["env"]["device"] == device, "no --device: CUDA when present, else the CPU, and the verdict says so"
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("km-")) == [], "worker scratch removed"
    if device == "cpu":
        assert res.exit_code == 0, res.output
        small = load_task_folder(problem.parent).problem_source("small")
        assert verdict["problem_sha256"] == problem_hash(small) != problem_hash(kit.PROBLEM_ADD_RELU)
        assert "shapes: small (n=96) of task folder t_add_relu" in res.stderr
        assert verdict["shapes"].startswith("small (n=96) of task folder t_add_relu"), verdict["shapes"]
        full = CliRunner().invoke(app, ["verify", str(problem), str(good), "--trials", "2", "--no-timing", "--json",
                                        "--shapes", "full"])
        assert full.exit_code == 0 and json.loads(full.stdout)["problem_sha256"] == problem_hash(kit.PROBLEM_ADD_RELU)


def test_one_shape_rule_for_the_python_api_and_verify_batch(env, tmp_path):
    """A task's reference on the CPU is judged at its small shapes whichever way it is asked for: the Python API and
    `verify-batch` as `verify` does (`verify.shapes = auto`), and `--shapes full` / `shapes="full"` at its own."""
    from kernelmosaic.contracts.hashing import problem_hash
    from kernelmosaic.tasks.folder import load_task_folder
    from kernelmosaic.verify import Verifier, VerifyConfig

    problem = _task_folder(tmp_path, small=96)
    small_sha = problem_hash(load_task_folder(problem.parent).problem_source("small"))
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    config = VerifyConfig(device="cpu", trials=2, timing=False, derive_alt=False, compile_baseline=False)
    with Verifier(config) as verifier:
        verdict = verifier.verify(problem, good)
    assert verdict.accepted and verdict.problem_sha256 == small_sha, (verdict.message, verdict.shapes)
    assert verdict.shapes.startswith("small (n=96)"), verdict.shapes
    manifest = tmp_path / "pairs.jsonl"
    manifest.write_text(json.dumps({"id": "p1", "problem": str(problem), "candidate": str(good)}) + "\n")
    rows = {}
    for shapes in ("auto", "full"):
        out = tmp_path / f"{shapes}.jsonl"
        res = CliRunner().invoke(app, ["verify-batch", str(manifest), "--out", str(out), "--device", "cpu",
                                       "--trials", "2", "--no-timing", "--no-derive-alt", "--shapes", shapes])
        assert res.exit_code == 0, res.output
        rows[shapes] = json.loads(out.read_text().splitlines()[0])["verdict"]
        # on screen too, not only in the JSONL: the rule before the first verdict, and each verdict's sizes
        assert f"(verify.shapes = {shapes};" in res.output, res.output
        assert f"    shapes: {rows[shapes]['shapes']}" in res.output, res.output
    assert rows["auto"]["problem_sha256"] == small_sha and rows["auto"]["shapes"].startswith("small (n=96)")
    assert rows["full"]["problem_sha256"] == problem_hash(kit.PROBLEM_ADD_RELU), rows["full"]["shapes"]
    assert rows["full"]["shapes"].startswith("full")


def test_a_problem_that_does_not_import_is_unusable_input(env, tmp_path):
    problem = kit.write(tmp_path, "problem.py", "import no_such_module_km\n" + kit.PROBLEM_ADD_RELU)
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    res = CliRunner().invoke(app, ["verify", str(problem), str(good), "--device", "cpu", "--trials", "2",
                                   "--no-timing", "--json"])
    assert res.exit_code == 2, res.output
    assert json.loads(res.stdout)["status"] == "bad_problem", "stdout holds the verdict and nothing else"
    assert "no_such_module_km" in res.stderr and "unusable" in res.stderr


SLOW_AT_FULL_SIZE = '''\
import time

import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def forward(self, a, b):
        if a.numel() > 1000:  # its own sizes: far slower than the limit allows
            time.sleep(30)
        return torch.relu(a + b)


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []
'''


def test_a_task_too_slow_at_its_own_sizes_on_the_cpu_points_to_its_small_shapes(env, tmp_path):
    """Issue 37: `--shapes full` on the CPU that outruns the time limit names the way out (the task's small shapes,
    or the limit's setting) instead of calling the task unusable."""
    problem = _task_folder(tmp_path, small=96)
    problem.write_text(SLOW_AT_FULL_SIZE)
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    res = CliRunner().invoke(app, ["verify", str(problem), str(good), "--device", "cpu", "--trials", "2", "--no-timing",
                                   "--shapes", "full", "--set", "verify.run_timeout_s=4"])
    assert res.exit_code == 2, res.output
    message = " ".join(res.output.split())
    assert "could not be judged within the verifier's limits" in message and "is unusable" not in message, message
    assert "--shapes auto (the default) judges it at its small (n=96)" in message, message
    assert "--set verify.run_timeout_s=600" in message, message


def test_a_reference_out_of_host_memory_says_which_cap_and_how_to_raise_it(env, tmp_path):
    """A problem whose reference needs more host memory than the worker's cap is unusable as judged, and the message
    names the cap and its setting (before, torch's allocator error alone)."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU.replace(
        "    def forward(self, a, b):",
        "    def __init__(self):\n        super().__init__()\n        self.table = torch.empty(2**30)  # 4 GiB\n\n"
        "    def forward(self, a, b):"))
    good = kit.write(tmp_path, "good.py", kit.candidate("return ext.add_relu(a, b)"))
    res = CliRunner().invoke(app, ["verify", str(problem), str(good), "--device", "cpu", "--trials", "2", "--no-timing",
                                   "--set", "verify.memory_limit_gb=2"])
    assert res.exit_code == 2, res.output
    message = " ".join(res.output.split())
    assert "is unusable" in message and "can't allocate memory" in message, message
    assert "capped at verify.memory_limit_gb = 2 GiB" in message and "--set verify.memory_limit_gb=N" in message
