"""`run_batch` opens its output at the first verdict: a batch that fails before one leaves no file; verdicts that
arrived before a failure stay, one JSON line each."""

from __future__ import annotations

import json

import pytest

import kernelmosaic.verify.verifier as verifier_module
from kernelmosaic.contracts.verdict import Env, Status, Verdict
from kernelmosaic.verify.batch import Pair, run_batch
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.pool import WorkerDied


class _Verifier:
    """Accepts the pairs named in `good`, dies on any other (as a worker on a missing GPU does)."""

    good: set[str] = set()

    def __init__(self, config, devices=None) -> None:
        self.device_count = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def verify(self, problem, candidate) -> Verdict:
        if candidate.name not in self.good:
            raise WorkerDied("crash", "reference worker exited during start: exit status 1")
        return Verdict(accepted=True, status=Status.accepted, message="ok", env=Env(device="cpu"))

    def verify_many(self, pairs):
        for i, (problem, candidate) in enumerate(pairs):
            yield i, self.verify(problem, candidate)


@pytest.fixture
def pairs(tmp_path, monkeypatch):
    monkeypatch.setattr(verifier_module, "Verifier", _Verifier)  # the local executor builds it
    (tmp_path / "problem.py").write_text("x = 1\n")
    made = []
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(f"# {name}\n")
        made.append(Pair(id=name, problem=tmp_path / "problem.py", candidate=tmp_path / name))
    return made


def test_no_output_file_when_nothing_was_judged(pairs, tmp_path):
    _Verifier.good = set()
    out = tmp_path / "verdicts.jsonl"
    with pytest.raises(WorkerDied):
        list(run_batch(pairs, VerifyConfig(device="cpu"), out))
    assert not out.exists()


def test_verdicts_before_a_failure_are_kept(pairs, tmp_path):
    _Verifier.good = {"a.py"}
    out = tmp_path / "verdicts.jsonl"
    with pytest.raises(WorkerDied):
        list(run_batch(pairs, VerifyConfig(device="cpu"), out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["verdict"]["status"]) for r in rows] == [("a.py", "accepted")]
