"""The agent's best follows the one definition of verified: demotion, flagged tasks, failed audits, one tool
message per call, and failures that speak (a 401 stops the run with the reason on screen and a non-zero exit)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agent_kit import call, candidate, make_task
from resume_driver import FakeVerifierSet
from typer.testing import CliRunner

import kernelmosaic.verify.verifier_set as agent_verifiers
from kernelmosaic.agent.runner import gate_on_audit
from kernelmosaic.cli import app
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.contracts.trajectory import ToolCallEvent, ToolResultEvent
from kernelmosaic.store import open_store
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.schema import AuditReport, Finding


def _results(traj, name=None):
    return [e for e in traj.events if isinstance(e, ToolResultEvent) and (name is None or e.name == name)]


def test_a_rejection_at_benchmark_demotes_the_best_and_the_previous_one_is_submitted(run_one):
    outputs = [
        call("write_candidate", source=candidate("ms=2 a")), call("test"),
        call("write_candidate", source=candidate("stale ms=0.5 b")), call("test"), call("benchmark"),
        call("submit"),
    ]
    info, traj = run_one(outputs)
    [bench] = _results(traj, "benchmark")
    assert not bench.verdict.accepted and "The best candidate is now the one of step 2" in bench.content
    assert info.exit_reason == "submitted" and info.solved and "ms=2 a" in traj.best.source
    assert traj.best.verified and traj.best.verification.timed, "submit() gave the untimed best its timed check"


def test_a_task_flag_keeps_the_solution_marked_and_uncounted(run_one, store):
    info, traj = run_one([call("write_candidate", source=candidate("taskflag ms=1")), call("test"), call("submit")])
    [submit] = _results(traj, "submit")
    assert info.exit_reason == "submitted" and "not counted as verified" in submit.content
    assert traj.best is not None and traj.best.verification.flagged and not traj.best.verified
    assert not info.solved and info.task_flags == ["task-zero-output-passes"]
    summary = store.run_summary(info.run_id)
    assert summary.solved == 0 and summary.flagged_tasks == {"t_relu": ["task-zero-output-passes"]}


def test_every_call_of_a_reply_gets_its_tool_message_also_after_submit(run_one):
    calls = [ToolCall(id=f"m{i}", name=n, arguments={}, raw_arguments="{}") for i, n in enumerate(["test", "submit", "benchmark"])]
    outputs = [call("write_candidate", source=candidate("ms=1")), Message(role="assistant", tool_calls=calls)]
    info, traj = run_one(outputs)
    assert info.exit_reason == "submitted"
    assert [e.call.id for e in traj.events if isinstance(e, ToolCallEvent)][-3:] == ["m0", "m1", "m2"]
    assert [e.call_id for e in _results(traj)][-3:] == ["m0", "m1", "m2"]
    assert _results(traj, "benchmark")[0].content.startswith("Not run: the episode ended at submit()")


def _failed_audit(task):
    return AuditReport(task_id=task.id, passed=False, reference_hash=task.hashes.reference,
                       findings=[Finding(rule="zero-output-passes", severity="reject", message="zeros pass")])


def test_audit_failed_tasks_are_skipped_unless_included():
    good, bad = make_task("good"), make_task("bad")
    bad.audit = _failed_audit(bad)
    kept, skipped = gate_on_audit([good, bad], include_flagged=False)
    assert [t.id for t in kept] == ["good"] and skipped == {"bad": "audit failed: zero-output-passes"}
    stale = make_task("stale")
    stale.audit = _failed_audit(stale).model_copy(update={"reference_hash": "0" * 64})
    assert [t.id for t in gate_on_audit([good, bad, stale], include_flagged=True)[0]] == ["good", "bad", "stale"]
    assert gate_on_audit([stale], include_flagged=False)[1] == {}, "an audit of an older reference does not gate"


@pytest.fixture
def fake_verifiers(monkeypatch):
    monkeypatch.setattr(agent_verifiers, "VerifierSet", FakeVerifierSet)  # the local executor's


def test_generate_skips_an_audit_failed_task_and_says_so(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = make_task("l1_bad")
    bad.audit = _failed_audit(bad)
    save_task_folder(bad, tmp_path / "tasks")
    save_task_folder(make_task("l1_good"), tmp_path / "tasks")
    url = f"sqlite:///{tmp_path / 'km.db'}"
    args = ["generate", "--tasks", str(tmp_path / "tasks"), "--model", f"replay:{_replay_file(tmp_path)}",
            "--device", "cpu", "--db", url, "--no-live"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "skipped l1_bad: audit failed: zero-output-passes" in result.output
    with open_store(url) as store:
        run = store.latest_run()
        assert [e.task_id for e in store.list_episodes(run.id)] == ["l1_good"]
    flagged = CliRunner().invoke(app, [*args, "--include-flagged"], env={"COLUMNS": "200"})
    assert flagged.exit_code == 0, flagged.output
    with open_store(url) as store:
        episodes = {e.task_id: e for e in store.list_episodes(store.latest_run().id)}
        assert episodes["l1_bad"].task_flags == ["task-audit-failed"] and not episodes["l1_bad"].solved
        assert episodes["l1_good"].solved
    assert "1 flagged task(s) not counted" in flagged.output


def _replay_file(tmp_path):
    """A recording of both tasks, written the way the store exports trajectories."""
    from kernelmosaic.contracts.trajectory import MessageEvent, Trajectory

    path = tmp_path / "rec.jsonl"
    lines = []
    for task_id in ("l1_good", "l1_bad"):
        turns = [call("write_candidate", source=candidate("ms=1")), call("test"), call("submit")]
        events = [MessageEvent(step=i + 1, message=m) for i, m in enumerate(turns)]
        lines.append(Trajectory(task_id=task_id, model="scripted:test", events=events).to_json().replace("\n", ""))
    path.write_text("\n".join(lines) + "\n")
    return path


class _Refusing:
    """A local OpenAI-compatible server that answers every request with HTTP 401."""

    def __enter__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                             "code": "invalid_api_key"}}).encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()


def test_a_401_stops_the_run_with_the_reason_on_screen_and_a_failed_run(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    with _Refusing() as base_url:
        monkeypatch.setenv("KERNELMOSAIC_OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        result = CliRunner().invoke(app, ["generate", "--model", "openai:some-model", "--device", "cpu", "--limit", "3",
                                          "--concurrency", "1", "--db", url, "--no-live"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "HTTP 401" in result.output and "Incorrect API key" in result.output
    assert "model is unusable" in result.output and "--resume" in result.output
    with open_store(url) as store:
        run = store.latest_run()
        episodes = store.list_episodes(run.id)
        assert run.status == "failed"
        assert len(episodes) == 1, "the run stopped at the first refusal instead of trying every task"
        assert episodes[0].exit_reason == "model_unusable" and "401" in episodes[0].exit_detail


def test_resume_refuses_conflicting_options_and_says_what_it_uses(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    common = ["--db", url, "--no-live"]
    first = CliRunner().invoke(app, ["generate", "--model", "replay:bundled", "--device", "cpu", "--limit", "1", *common])
    assert first.exit_code == 0, first.output
    for option, value in (("--model", "scripted:other"), ("--max-turns", "3"), ("--device", "cuda")):
        refused = CliRunner().invoke(app, ["generate", "--resume", option, value, *common], env={"COLUMNS": "200"})
        assert refused.exit_code == 2 and "disagree" in refused.output and option in refused.output, refused.output
    same = CliRunner().invoke(app, ["generate", "--resume", "--model", "replay:bundled", *common], env={"COLUMNS": "200"})
    assert same.exit_code == 0 and "resuming run 1 with its stored settings: model replay:bundled" in same.output


def test_phase_is_write_until_a_verdict_then_repair_then_optimize():
    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.contracts.verdict import Correctness, Env, Status, Verdict

    state = EpisodeState()
    assert state.phase == "write"
    sha = state.set_candidate("x")
    state.consider(sha, Verdict(accepted=False, status=Status.compile_error, message="no"), 1)
    assert state.phase == "repair"
    state.consider(sha, Verdict(accepted=True, status=Status.accepted, message="ok",
                                correctness=Correctness(trials=1, passed=1), env=Env(device="cpu")), 2)
    assert state.phase == "optimize"


def test_version_flag():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("kernelmosaic ")


def test_task_selection_says_why_a_task_does_not_run(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'km.db'}"
    only_clamp = CliRunner().invoke(app, ["generate", "--task", "l1_clamp", "--device", "cpu", "--db", url, "--no-live"],
                                    env={"COLUMNS": "200"})
    assert only_clamp.exit_code == 2 and "l1_clamp: replay:bundled holds no recording of it" in only_clamp.output
    unknown = CliRunner().invoke(app, ["generate", "--task", "l1_nope", "--device", "cpu", "--db", url, "--no-live"])
    assert unknown.exit_code == 2 and "unknown task id(s): l1_nope" in unknown.output
    everything = CliRunner().invoke(app, ["generate", "--device", "cpu", "--db", url, "--no-live", "--limit", "1"],
                                    env={"COLUMNS": "200"})
    assert everything.exit_code == 0 and "replay:bundled holds recordings of 3 of" in everything.output


def test_a_spec_that_does_not_parse_is_not_sent_to_the_model():
    from kernelmosaic.agent.runner import GenerateConfig, plan_tasks

    good, bad = make_task("good"), make_task("bad")
    bad.forms.spec = "out[i, j] = relu(x[i, j]"  # unbalanced
    plan = plan_tasks([good, bad], GenerateConfig(model="scripted:x"))
    assert [t.id for t in plan.selected] == ["good"] and plan.skipped["bad"].startswith("spec.km does not parse")
