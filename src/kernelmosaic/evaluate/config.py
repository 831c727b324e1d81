"""One evaluation run's settings: stored with the run, so `--resume` continues it with the same ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernelmosaic.agent.runner import without_secrets
from kernelmosaic.evaluate.records import TaskMeta
from kernelmosaic.verify.config import Policy, VerifyConfig, run_timing

__all__ = ["EvalConfig", "Mode"]

Mode = Literal["one-shot", "agent", "generations"]


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    mode: Mode = "one-shot"
    """`one-shot`: one write_candidate call, then the harness judges it; `agent`: the full agent loop;
    `generations`: judge existing candidate files, no model."""
    model: str = ""
    """Model spec (`openai:NAME`, `hf:PATH`, `replay:FILE`, `scripted:NAME`); empty for generations."""
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Options of the model backend (the config file's `[model]` section, as for `generate`), e.g. `max_new_tokens`
    for `hf:`; stored with the run, so `--resume` samples the same way. Never the API key."""
    tasks: str = "builtin"
    """Task source: `builtin`, a folder, a Parquet file, `kernelbench:PATH` (read in place)."""
    generations: str = ""
    """For `generations`: a KernelBench runs folder (level_X/problem_Y/sample_Z), a folder of
    <pair>/problem.py + candidate*.py, or a JSONL manifest of {problem, candidate}."""
    levels: list[int] = Field(default_factory=list)
    """Only tasks of these levels (empty: all)."""
    task_ids: list[str] = Field(default_factory=list)
    """Only these tasks (empty: all)."""
    limit: int = Field(0, ge=0)
    """At most this many tasks after filtering (0: all)."""
    samples: int = Field(1, ge=1)
    """Episodes per task (pass@k needs k of them)."""
    max_turns: int = Field(30, ge=1)
    """Agent mode: model queries per episode."""
    policy: Policy = "kernelbench"
    """Verifier policy of every verdict of the run (KernelBench evaluation defaults to `kernelbench`)."""
    device: Literal["cuda", "cpu"] = "cuda"
    concurrency: int = Field(4, ge=1)
    """Episodes (or candidates) judged at once."""
    seeds: int = Field(1, ge=1)
    """Generations: judge each candidate under this many verifier seeds (pass rate across seeds needs 2+)."""
    alternatives: bool = True
    """Judge timed verdicts also on an alternative shape set derived from the problem (robustness)."""
    compile_baseline: bool = True
    """Time a torch.compile build of each reference beside eager."""
    out_dir: Path = Path("runs")
    """Problem and candidate files and trajectory JSON go under it (run-<id>/)."""
    verify: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the verifier's settings (the config file's `[verify]` section and `--set verify.KEY=VALUE`, any
    `VerifyConfig` field, e.g. `judges_per_gpu` or `timing_profile`); stored with the run. The run's own `device`,
    `policy` and `compile_baseline` (evaluate's options) win over the same keys here."""
    task_meta: dict[str, TaskMeta] = Field(default_factory=dict)
    """Level, category and title of every task of the run, so metrics group without re-reading the task source."""

    @field_validator("model_options")
    @classmethod
    def _no_secrets(cls, options: dict[str, Any]) -> dict[str, Any]:
        return without_secrets(options)

    def verify_config(self) -> VerifyConfig:
        """The verifier's settings: `verify`'s overrides over the defaults, then the run's device, policy and
        baseline. Host timing on CPU is only indicative, so it gets a short budget unless `verify` sets one."""
        return VerifyConfig.model_validate({**run_timing(self.device), **self.verify, "device": self.device,
                                            "compile_baseline": self.compile_baseline, "policy": self.policy})
