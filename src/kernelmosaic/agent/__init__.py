"""The agent stage: the episode loop, its tools, prompts, budgets and the CUDA guidance library.

`run_tasks` runs many episodes against one store and shared verifiers; `Agent` is the loop of one episode.
"""

from kernelmosaic.agent.config import AgentConfig, Budgets
from kernelmosaic.agent.episode import EpisodeContext, run_episode
from kernelmosaic.agent.exits import (
    BudgetExhausted,
    EpisodeEnd,
    FormatError,
    FormatErrorLimit,
    ModelError,
    Submitted,
)
from kernelmosaic.agent.loop import Agent
from kernelmosaic.agent.runner import GenerateConfig, run_tasks, start_or_resume_run
from kernelmosaic.runs.selection import select_tasks

__all__ = [
    "AgentConfig",
    "Budgets",
    "Agent",
    "EpisodeContext",
    "run_episode",
    "GenerateConfig",
    "run_tasks",
    "select_tasks",
    "start_or_resume_run",
    "EpisodeEnd",
    "Submitted",
    "BudgetExhausted",
    "FormatErrorLimit",
    "ModelError",
    "FormatError",
]
