"""One evaluation run's settings: stored with the run, so `--resume` continues it with the same ones."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kernelmosaic.runs.config import RunConfig
from kernelmosaic.verify.config import Policy

__all__ = ["EvalConfig", "Mode"]

Mode = Literal["one-shot", "agent", "generations"]


class EvalConfig(RunConfig):
    """One `kernelmosaic evaluate` run; stored with the run so `--resume` continues with the same settings."""

    mode: Mode = "one-shot"
    """`one-shot`: one write_candidate call, then the harness judges it; `agent`: the full agent loop;
    `generations`: judge existing candidate files, no model."""
    generations: str = ""
    """For `generations`: a KernelBench runs folder (level_X/problem_Y/sample_Z), a folder of
    <pair>/problem.py + candidate*.py, or a JSONL manifest of {problem, candidate}."""
    levels: list[int] = Field(default_factory=list)
    """Only tasks of these levels (empty: all)."""
    samples: int = Field(1, ge=1)
    """Episodes per task (pass@k needs k of them)."""
    max_turns: int = Field(30, ge=1)
    """Agent mode: model queries per episode."""
    policy: Policy = "kernelbench"
    """Verifier policy of every verdict of the run (KernelBench evaluation defaults to `kernelbench`)."""
    device: Literal["cuda", "cpu"] = "cuda"
    seeds: int = Field(1, ge=1)
    """Generations: judge each candidate under this many verifier seeds (pass rate across seeds needs 2+)."""
    alternatives: bool = True
    """Judge timed verdicts also on an alternative shape set derived from the problem (robustness)."""

    def judged_on(self) -> str:
        return self.device

    def owned_verify_settings(self) -> dict[str, Any]:
        return {"policy": self.policy}
