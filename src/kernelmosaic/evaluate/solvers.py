"""Evaluation's solver of a model run (`runs.executor.Solver`): one-shot, one write per episode judged once
(`oneshot.run_one_shot`), run by the agent's task loop (`agent.runner.run_tasks`) in this process on every executor;
agent-mode evaluation runs the agent's own solver (`agent.solver.AGENT`)."""

from __future__ import annotations

import functools

from kernelmosaic.agent.runner import run_tasks
from kernelmosaic.evaluate.oneshot import run_one_shot
from kernelmosaic.runs.executor import Solver

__all__ = ["ONE_SHOT"]

ONE_SHOT = Solver(here=functools.partial(run_tasks, episode=run_one_shot, stop_when_unusable=False))
