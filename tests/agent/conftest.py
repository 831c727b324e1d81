"""Fixtures of the agent tests: a fresh store, a fake verifier, and a helper that runs one episode."""

from __future__ import annotations

import asyncio

import pytest
from agent_kit import FakeVerifier, make_task

from kernelmosaic.agent import AgentConfig, Budgets, GenerateConfig, run_tasks
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.store import open_store


@pytest.fixture
def store(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as s:
        yield s


@pytest.fixture
def fake_verifier():
    return FakeVerifier()


@pytest.fixture
def run_one(store, fake_verifier, tmp_path):
    """Run one episode of a ReLU task with `outputs` as the model; returns (episode info, trajectory)."""

    def run(outputs, device: str = "cpu", peaks=None, **budgets):
        config = GenerateConfig(tasks="test", model="scripted:test", out_dir=tmp_path / "runs",
                                agent=AgentConfig(device=device, budgets=Budgets(**budgets)))
        run_id = store.create_run("test", config.model, config.tasks, config)
        task = make_task()
        infos = asyncio.run(run_tasks([task], store=store, verifier_for=lambda _: fake_verifier,
                                      backend=ScriptedModel(outputs), run_id=run_id, config=config, peaks=peaks))
        assert len(infos) == 1
        return infos[0], store.load_trajectory(infos[0].id)

    return run
