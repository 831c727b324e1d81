"""Typed configuration of an agent episode: budgets and the knobs of the loop."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Budgets", "AgentConfig"]


class Budgets(BaseModel):
    """Limits of one episode; the first one reached ends it with `budget_exhausted`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_turns: int = Field(30, ge=1)
    """Model queries (each may carry several tool calls)."""
    max_tokens: int = Field(1_000_000, ge=1)
    """Prompt plus completion tokens summed over all queries."""
    max_cost_usd: float = Field(10.0, ge=0.0)
    """Spend reported by the model backend."""
    max_wall_seconds: float = Field(3600.0, gt=0.0)
    """Wall time of the episode, summed across resumes."""
    max_gpu_seconds: float = Field(900.0, ge=0.0)
    """Seconds the verifier spent on the GPU for this episode (compile, test, benchmark, profile on cuda)."""
    max_format_errors: int = Field(3, ge=0)
    """Consecutive malformed replies (no tool call, unknown tool, bad arguments) tolerated before giving up."""


class AgentConfig(BaseModel):
    """Everything that shapes an episode besides the task and the model."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    budgets: Budgets = Field(default_factory=Budgets)
    """Per-episode limits."""
    device: Literal["cuda", "cpu"] = "cuda"
    """Where candidates run: `cuda` kernels, or C++ `load_inline` candidates on `cpu` with small shapes."""
    guidance_per_failure: int = Field(1, ge=0)
    """Guidance items attached to a failed test or compile, chosen by the failure status (0 turns it off)."""
    guidance_at_start: int = Field(2, ge=0)
    """Guidance items shown with the task, chosen by the task's category."""
    max_feedback_lines: int = Field(30, ge=5)
    """Longest tool result shown to the model, in lines (compiler logs are trimmed to their first errors)."""
