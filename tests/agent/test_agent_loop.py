"""The episode loop with a scripted model and a fake verifier: exits, budgets, best-candidate choice, recording."""

from __future__ import annotations

import json

from agent_kit import call, candidate

from kernelmosaic.contracts.messages import Message, ModelReply, ToolCall, Usage
from kernelmosaic.contracts.trajectory import GuidanceEvent, MessageEvent, ToolCallEvent, ToolResultEvent


def _results(traj, name=None):
    return [e for e in traj.events if isinstance(e, ToolResultEvent) and (name is None or e.name == name)]


def test_repair_then_optimize_submits_the_fastest_accepted_candidate(run_one, store, tmp_path):
    outputs = [
        call("write_candidate", source=candidate("compile_error")), call("compile"),
        call("write_candidate", source=candidate("wrong")), call("test"),
        call("write_candidate", source=candidate("ms=2.0")), call("test"), call("benchmark"),
        call("write_candidate", source=candidate("ms=0.5")), call("benchmark"),
        call("write_candidate", source=candidate("ms=3.0")), call("benchmark"),
        call("write_candidate", source=candidate("wrong ms=0.1")), call("test"),
        call("submit"),
    ]
    info, traj = run_one(outputs)
    assert info.exit_reason == "submitted" and info.status == "done"
    assert traj.best is not None and "ms=0.5" in traj.best.source
    assert traj.best.verdict.timing.candidate.median_ms == 0.5
    assert info.best_speedup_vs_eager == 4.0
    # The compile failure was shown trimmed to the error line, with compile-error guidance attached.
    compile_result = _results(traj, "compile")[0]
    assert "main.cpp:7:3: error: 'y' was not declared" in compile_result.content
    assert "[1/2] c++" not in compile_result.content
    guidance = [e for e in traj.events if isinstance(e, GuidanceEvent)]
    assert guidance[0].reason == "task category activation" and guidance[0].step == 0
    assert any("compile_error" in g.reason for g in guidance) and any("output_mismatch" in g.reason for g in guidance)
    # Failing test: status, errors and first mismatch; the full verdict is in the event.
    wrong = _results(traj, "test")[0]
    assert "FAILED (output_mismatch)" in wrong.content and "first mismatch at [0, 3]" in wrong.content
    assert wrong.verdict.status == "output_mismatch"
    assert "Phase 2" in _results(traj, "test")[1].content
    assert traj.totals.turns == len(outputs)
    # Every call has exactly one result, in order.
    calls = [e.call.id for e in traj.events if isinstance(e, ToolCallEvent)]
    assert calls == [e.call_id for e in _results(traj)]
    # The trajectory file in the run directory matches the store.
    path = tmp_path / "runs" / f"run-{info.run_id}" / "trajectories" / "t_relu.json"
    on_disk = json.loads(path.read_text())
    assert on_disk["exit_reason"] == "submitted" and len(on_disk["events"]) == len(traj.events)
    assert on_disk["schema"] == "kernelmosaic.trajectory/2" and on_disk["config"] == traj.config


def test_submit_without_a_verified_candidate_is_refused(run_one):
    outputs = [call("submit"), call("write_candidate", source=candidate("ms=1")), call("test"), call("submit")]
    info, traj = run_one(outputs)
    assert "Nothing to submit yet" in _results(traj, "submit")[0].content
    assert info.exit_reason == "submitted" and traj.best is not None
    # Accepted by test() only: submit() gave it its final, timed check, which made it a verified solution.
    [final] = [r for r in _results(traj, "submit") if r.verdict is not None]
    assert final.verdict.timing is not None and traj.best.verified and info.solved


def test_unmeasured_candidates_latest_wins_until_one_is_timed(run_one):
    outputs = [
        call("write_candidate", source=candidate("ms=1 a")), call("test"),
        call("write_candidate", source=candidate("ms=5 b")), call("test"),
        call("submit"),
    ]
    _, traj = run_one(outputs)
    assert "ms=5 b" in traj.best.source


def test_format_errors_get_corrections_and_end_the_episode_at_the_limit(run_one):
    text_only = Message(role="assistant", content="I think the kernel is fine.")
    unknown = Message(role="assistant", tool_calls=[ToolCall(id="u1", name="run_shell", arguments={})])
    bad_json = Message(role="assistant", tool_calls=[ToolCall(id="b1", name="write_candidate", raw_arguments="{source: x",
                                                              parse_error="Expecting property name")])
    outputs = [text_only, call("write_candidate", source=candidate("ms=1")), unknown, bad_json, text_only, text_only]
    info, traj = run_one(outputs, max_format_errors=3)
    assert info.exit_reason == "format_error"
    users = [e.message.content for e in traj.events if isinstance(e, MessageEvent) and e.message.role == "user"]
    assert sum("did not call a tool" in u for u in users) == 3
    assert "Unknown tool 'run_shell'" in _results(traj, "run_shell")[0].content
    assert "not a JSON object" in _results(traj, "write_candidate")[-1].content
    # The valid call in between reset the count: 4 malformed in a row after it ended the episode, not 5 in total.
    assert traj.totals.turns == 6


def test_missing_argument_is_a_format_error_with_the_schema(run_one):
    outputs = [call("write_candidate"), call("write_candidate", source=candidate("ms=1")), call("test"), call("submit")]
    info, traj = run_one(outputs)
    assert "missing source" in _results(traj, "write_candidate")[0].content
    assert info.exit_reason == "submitted"


def test_turn_budget_keeps_the_best_candidate(run_one, fake_verifier):
    outputs = [call("write_candidate", source=candidate("ms=1")), call("benchmark")] + [call("test") for _ in range(10)]
    info, traj = run_one(outputs, max_turns=4)
    assert info.exit_reason == "budget_exhausted" and traj.totals.turns == 4
    # benchmark() timed it with the quick profile; the harness gave it the final check submit() would have
    [final] = [e for e in traj.events if e.type == "final_check"]
    assert final.reason == "budget_exhausted" and final.verdict.timing.profile == "full"
    assert fake_verifier.profiles[-1] == "full"
    assert traj.best is not None and info.best_candidate_sha256 and info.solved and traj.best.verified


def test_a_budget_end_whose_final_check_rejects_leaves_no_solution(run_one):
    outputs = [call("write_candidate", source=candidate("stale ms=1")), call("test")] + [call("test") for _ in range(10)]
    info, traj = run_one(outputs, max_turns=4)
    [final] = [e for e in traj.events if e.type == "final_check"]
    assert not final.verdict.accepted and info.exit_reason == "budget_exhausted"
    assert traj.best is None and not info.solved


def test_token_and_cost_budgets(run_one):
    def costly(messages):
        return ModelReply(message=call("test"), usage=Usage(prompt_tokens=600, completion_tokens=100, cost_usd=0.4))

    info, traj = run_one([costly] * 10, max_tokens=2000)
    assert info.exit_reason == "budget_exhausted" and traj.totals.turns == 3
    assert traj.totals.prompt_tokens == 1800
    info, traj = run_one([costly] * 10, max_cost_usd=1.0)
    assert info.exit_reason == "budget_exhausted" and traj.totals.turns == 3


def test_gpu_seconds_count_on_cuda_only(run_one, fake_verifier):
    fake_verifier.seconds = 5.0
    outputs = [call("write_candidate", source=candidate("ms=1"))] + [call("test") for _ in range(10)]
    info, traj = run_one(outputs, device="cuda", max_gpu_seconds=12.0)
    # three test() calls reach the 12 s budget; the harness's final check of the best adds its 5 s
    assert info.exit_reason == "budget_exhausted" and traj.totals.gpu_seconds == 20.0
    assert sum(e.gpu_seconds for e in _results(traj)) == 15.0
    info, traj = run_one(outputs[:4] + [call("submit")], device="cpu", max_gpu_seconds=12.0)
    assert info.exit_reason == "submitted" and traj.totals.gpu_seconds == 0.0


def test_model_failure_ends_with_model_error(run_one):
    info, traj = run_one([call("write_candidate", source=candidate("ms=1"))])  # the script runs out
    assert info.exit_reason == "model_error" and info.status == "done" and traj.best is None


def test_guidance_profile_and_roofline(run_one, fake_verifier):
    outputs = [call("guidance", topic="bank conflicts"), call("guidance"),
               call("write_candidate", source=candidate("ms=0.5")), call("profile"), call("benchmark"), call("submit")]
    _, traj = run_one(outputs, device="cuda", peaks=fake_verifier.device_peaks)
    lookup = _results(traj, "guidance")
    assert "smem-tiling" in lookup[0].content and "coalescing:" in lookup[1].content
    assert any(isinstance(e, GuidanceEvent) and e.reason == "query: bank conflicts" for e in traj.events)
    assert "* " in _results(traj, "profile")[0].content and "relu_kernel" in _results(traj, "profile")[0].content
    bench = _results(traj, "benchmark")[0].content
    # 512 x 4096 fp32 in and out = 16.8 MB in 0.5 ms = 33.6 GB/s of the fake 100 GB/s peak.
    assert "speedup vs eager 4x" in bench and "33.6 GB/s = 33.6% of 100 GB/s" in bench
    # benchmark() iterates on the quick timing profile; the episode's end gives the best its full final check
    assert fake_verifier.profiles == ["quick", "full"]


def test_submit_times_an_untimed_best_on_the_full_profile(run_one, fake_verifier):
    outputs = [call("write_candidate", source=candidate("ms=0.5")), call("test"), call("submit")]
    info, _ = run_one(outputs)
    assert info.exit_reason == "submitted"
    assert fake_verifier.profiles == [None, "full"]  # test() does not time; submit()'s final check times in full


def test_unreachable_server_marks_the_episode_failed_so_resume_retries_it(run_one, store):
    from kernelmosaic.models import ModelUnavailable

    def down(messages):
        raise ModelUnavailable("connection refused", retryable=True)

    info, _ = run_one([down])
    assert info.exit_reason == "model_transient" and info.status == "failed"
    assert "connection refused" in info.exit_detail
    assert store.pending_tasks(info.run_id, ["t_relu"]) == ["t_relu"]
