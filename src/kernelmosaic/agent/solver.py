"""The agent as the run layer's solver (`runs.executor.Solver`): its episode loop in this process
(`runner.run_tasks`) or on a cluster's episode actors (`ray_episodes.run_episodes`)."""

from __future__ import annotations

from kernelmosaic.agent.ray_episodes import run_episodes
from kernelmosaic.agent.runner import run_tasks
from kernelmosaic.runs.executor import Solver

__all__ = ["AGENT"]

AGENT = Solver(here=run_tasks, on_ray=run_episodes)
