"""64 episodes at once against a local OpenAI-compatible server, sharing one store and one (fake) verifier."""

from __future__ import annotations

import asyncio

import pytest
from agent_chat_server import PLAN, AgentChatServer
from agent_kit import make_task

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.models import get_model


@pytest.fixture
def chat():
    server = AgentChatServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_64_concurrent_episodes_all_complete(store, fake_verifier, chat, tmp_path):
    tasks = [make_task(f"t{i:02d}") for i in range(64)]
    config = GenerateConfig(tasks="test", model="openai:fake", concurrency=64, out_dir=tmp_path / "runs",
                            agent=AgentConfig(device="cpu"))
    run_id = store.create_run("many", config.model, config.tasks, config)
    backend = get_model("openai:fake", base_url=chat.base_url, api_key="sk-test", max_concurrency=64)
    infos = asyncio.run(run_tasks(tasks, store=store, verifier_for=lambda _: fake_verifier, backend=backend,
                                  run_id=run_id, config=config))
    assert len(infos) == 64 and all(i.status == "done" and i.exit_reason == "submitted" for i in infos)
    assert all(i.best_candidate_sha256 for i in infos)
    assert chat.requests == 64 * len(PLAN)
    assert chat.max_in_flight > 8  # episodes really overlapped
    summary = store.run_summary(run_id)
    assert summary.done == 64 and summary.solved == 64 and summary.pass_rate == 1.0
    assert summary.totals.prompt_tokens == 64 * len(PLAN) * 100
    assert store.pending_tasks(run_id, [t.id for t in tasks]) == []
