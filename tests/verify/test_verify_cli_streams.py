"""`verify` says which shapes it judges once, on stderr, before the judgement; stdout holds the verdict alone (its
summary, or with --json one JSON object whose `shapes` field says the same). The judgement itself is stubbed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import kernelmosaic.verify.cli as verify_cli
from kernelmosaic.cli import app
from kernelmosaic.contracts.verdict import Correctness, Env, Status, Verdict

from . import kit


@pytest.fixture
def pair(tmp_path, monkeypatch):
    def judged(config, problem, candidate, alternatives, seeded, err):
        return Verdict(accepted=True, status=Status.accepted, message="stubbed", correctness=Correctness(),
                       env=Env(device="cpu"), shapes=verify_cli.problem_at_shapes(problem, config).note)

    monkeypatch.setattr(verify_cli, "_judge_one", judged)
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", kit.candidate("return ext.add_relu(a, b)"))
    return [str(problem), str(candidate), "--device", "cpu"]


def test_the_shapes_note_is_printed_once_on_stderr(pair):
    res = CliRunner().invoke(app, ["verify", *pair], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert res.stderr.count("shapes: problem.py's own sizes") == 1
    assert "shapes:" not in res.stdout and "accepted" in res.stdout


def test_with_json_stdout_is_the_verdict_alone_and_the_note_on_stderr(pair):
    res = CliRunner().invoke(app, ["verify", *pair, "--json"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["shapes"].startswith("problem.py's own sizes")
    assert res.stderr.count("shapes: problem.py's own sizes") == 1
