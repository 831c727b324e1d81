"""What the dataset says about each episode besides its messages: task, failures met, repairs, speedups, model."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.trajectory import ToolResultEvent, Trajectory
from kernelmosaic.sft.variants import first_timed_pass_event
from kernelmosaic.tasks.schema import Task

__all__ = ["EpisodeMeta", "TokenCounter", "estimate_tokens", "template_token_counter", "episode_meta", "FORMS"]

FORMS = ("nl", "reference", "spec")
_COMPILE_FAILED = re.compile(r"Compile failed \((\w+)\)")
TokenCounter = Callable[[list[dict[str, Any]], list[dict[str, Any]]], int]
"""Tokens of a conversation (TRL messages, tool schemas) as the training template renders it."""


def estimate_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """About four characters a token (code and JSON): used when no tokenizer is given."""
    return math.ceil(len(json.dumps(messages)) / 4 + len(json.dumps(tools)) / 4)


def template_token_counter(tokenizer: Any) -> TokenCounter:
    """Count with a tokenizer's chat template (the one training renders, so the counts match its truncation)."""

    def count(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        ids = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True, return_dict=True)["input_ids"]
        return len(ids)

    return count


class EpisodeMeta(BaseModel):
    """One row's metadata columns."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    episode_id: int
    """Store id of the episode."""
    run_id: int
    """Store id of its run."""
    task_id: str
    level: int
    """Task level (1 single op, 2 fused ops, 3 whole network, 4 KernelBench model-level)."""
    category: str
    forms: list[str]
    """Task forms present (and shown to the model): `nl`, `reference`, `spec`."""
    failure_types: list[str]
    """Statuses of every rejecting verdict and failed build in the episode, sorted, each once (e.g. `compile_error`)."""
    first_failure: str
    """Status of the first rejecting verdict or failed build (empty when there was none)."""
    repair_rounds: int
    """Rejecting verdicts and failed builds before the first timed pass (all of them when only the final check passed):
    how often the model had to repair before it held a working kernel."""
    speedup_vs_eager: float
    """Final (best verified) solution's speedup over eager PyTorch; 0.0 when it was not timed against it."""
    speedup_vs_compile: float
    """Its speedup over `torch.compile`; 0.0 when that baseline was not timed."""
    policy: str
    """The verifier policy its verdict was judged under (`strict` or `kernelbench`)."""
    model: str
    """The model spec of the run (`replay:...` for a replayed recording)."""
    origin_model: str
    """For replayed runs, the model that wrote the recording; else empty."""
    device: str
    """Device the verdicts were produced on (`cuda`, `cpu`)."""
    turns: int
    """Assistant turns in the full trajectory."""
    tool_calls: int
    """Tool calls in the full trajectory."""
    tokens: int
    """Tokens of the full trajectory (see `tokens_exact`)."""
    tokens_exact: bool
    """True when counted with the training tokenizer's chat template; False when estimated (4 characters a token)."""

    @property
    def spec_source(self) -> str:
        return "+".join(self.forms) or "none"


def _failure(event: object) -> str:
    if not isinstance(event, ToolResultEvent):
        return ""
    if event.verdict is not None:
        return "" if event.verdict.accepted else event.verdict.status.value
    # compile() runs no verdict: its tool message is the only record of a failed build (agent/tools.py writes it).
    match = _COMPILE_FAILED.match(event.content) if event.name == "compile" else None
    return match.group(1) if match else ""


def _rejections(trajectory: Trajectory, before: int) -> tuple[list[str], int]:
    """Failure statuses in order (rejecting verdicts and failed builds) and how many came before index `before`."""
    statuses, rounds = [], 0
    for i, event in enumerate(trajectory.events):
        status = _failure(event)
        if status:
            statuses.append(status)
            rounds += i < before
    return statuses, rounds


def episode_meta(trajectory: Trajectory, task: Task, episode_id: int, run_id: int, tokens: int,
                 tokens_exact: bool) -> EpisodeMeta:
    best = trajectory.best
    if best is None:
        raise ValueError(f"episode {episode_id} ({trajectory.task_id}) has no best solution")
    first_pass = first_timed_pass_event(trajectory)
    failures, rounds = _rejections(trajectory, first_pass if first_pass >= 0 else len(trajectory.events))
    timing = best.verdict.timing
    forms = [name for name in FORMS if getattr(task.forms, name).strip()]
    assistant = [e for e in trajectory.events if getattr(e, "type", "") == "message" and e.message.role == "assistant"]
    return EpisodeMeta(
        episode_id=episode_id, run_id=run_id, task_id=task.id, level=task.level, category=str(task.category),
        forms=forms, failure_types=sorted(set(failures)), first_failure=failures[0] if failures else "",
        repair_rounds=rounds,
        speedup_vs_eager=float(timing.speedup_vs_eager) if timing else 0.0,
        speedup_vs_compile=float(timing.speedup_vs_compile or 0.0) if timing else 0.0,
        policy=best.verdict.policy, model=trajectory.model, origin_model=trajectory.origin_model,
        device=best.verdict.env.device, turns=len(assistant),
        tool_calls=sum(len(e.message.tool_calls) for e in assistant), tokens=tokens, tokens_exact=tokens_exact,
    )
