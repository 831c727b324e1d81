"""A crash between a model reply and its tool results: the resumed episode runs the recorded calls, never re-asks."""

from __future__ import annotations

import asyncio

from agent_kit import make_task
from resume_driver import PLAN, next_reply

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.contracts.trajectory import MessageEvent, ToolCallEvent, ToolResultEvent
from kernelmosaic.models.scripted import ScriptedModel


class CrashOnce:
    """Wraps a store; the append of the first ToolCallEvent of turn `turn` fails once, as a dying process would."""

    def __init__(self, store, turn: int) -> None:
        self.store, self.turn, self.crashed = store, turn, False

    def __getattr__(self, name):
        return getattr(self.store, name)

    def append_event(self, episode_id, seq, event):
        if isinstance(event, ToolCallEvent) and event.step == self.turn and not self.crashed:
            self.crashed = True
            raise OSError("disk went away")
        return self.store.append_event(episode_id, seq, event)


def test_interrupted_step_is_completed_without_asking_the_model_again(store, fake_verifier, tmp_path):
    config = GenerateConfig(tasks="test", model="scripted:resume", out_dir=tmp_path / "runs", agent=AgentConfig(device="cpu"))
    run_id = store.create_run("test", config.model, config.tasks, config)
    task = make_task()
    crashing = CrashOnce(store, turn=3)
    asked: list[int] = []

    def reply(messages):
        asked.append(len(messages))
        return next_reply(messages)

    model = ScriptedModel([reply] * 20)
    run = dict(verifier_for=lambda _: fake_verifier, run_id=run_id, config=config)
    [first] = asyncio.run(run_tasks([task], store=crashing, backend=model, **run))
    assert crashing.crashed and first.status == "failed" and first.exit_reason == "infra_error"
    assert "disk went away" in first.exit_detail
    assert store.pending_tasks(run_id, [task.id], final_failures=["infra_error"]) == [], "a bug is not retried silently"
    assert store.pending_tasks(run_id, [task.id]) == [task.id]
    run["config"] = config.model_copy(update={"retry_failed": True})

    [second] = asyncio.run(run_tasks([task], store=store, backend=model, **run))
    assert second.status == "done" and second.exit_reason == "submitted"
    traj = store.load_trajectory(second.id)
    said = [e.message.content for e in traj.events if isinstance(e, MessageEvent) and e.message.role == "assistant"]
    assert said == [f"turn {i}: {name}" for i, (name, _) in enumerate(PLAN)]
    calls = [e.call.id for e in traj.events if isinstance(e, ToolCallEvent)]
    assert calls == [e.call_id for e in traj.events if isinstance(e, ToolResultEvent)] == [f"call_{i}" for i in range(len(PLAN))]
    # Three replies before the crash, three after it: the interrupted turn's reply was not requested again.
    assert len(asked) == 3 + 3
    assert "ms=1" in traj.best.source and traj.totals.turns == len(PLAN)


def test_state_rebuilt_from_events_matches_the_live_episode(run_one):
    from agent_kit import call, candidate

    from kernelmosaic.contracts.episode_state import EpisodeState
    from kernelmosaic.contracts.messages import Message

    text_only = Message(role="assistant", content="thinking")
    outputs = [call("write_candidate", source=candidate("ms=2")), call("benchmark"),
               call("write_candidate", source=candidate("ms=3")), call("benchmark"), text_only, text_only]
    info, traj = run_one(outputs, max_format_errors=5)  # ends when the script runs out
    state = EpisodeState.from_events(traj.events)
    assert state.turns == 6 and state.format_errors == 2
    assert "ms=3" in state.current_source and "ms=2" in state.best.source  # the faster one stays best
    assert state.best.candidate_sha256 == traj.best.candidate_sha256
    assert len(state.messages) == sum(e.type in ("message", "tool_result") for e in traj.events)
    assert state.pending_calls() == []


def test_replay_runs_on_its_recorded_device():
    from kernelmosaic.agent.runner import recorded_device

    assert recorded_device("replay:bundled") == "cpu"
    assert recorded_device("openai:x") is None


def test_a_task_that_cannot_start_does_not_stop_the_others(store, fake_verifier, tmp_path, caplog):
    from agent_kit import REFERENCE

    config = GenerateConfig(tasks="test", model="scripted:resume", out_dir=tmp_path / "runs", agent=AgentConfig(device="cpu"))
    run_id = store.create_run("test", config.model, config.tasks, config)
    store.start_episode(run_id, "t_relu", "a-different-task-hash")  # an earlier, interrupted episode of another version
    edited, other = make_task("t_relu", reference=REFERENCE + "\n# edited\n"), make_task("t_other")
    infos = asyncio.run(run_tasks([edited, other], store=store, backend=ScriptedModel([next_reply] * 20),
                                  verifier_for=lambda _: fake_verifier, run_id=run_id, config=config))
    assert [i.task_id for i in infos] == ["t_other"] and infos[0].exit_reason == "submitted"
    assert "t_relu: the episode could not be started" in caplog.text
    assert store.pending_tasks(run_id, ["t_relu", "t_other"]) == ["t_relu"]
