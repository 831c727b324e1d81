"""Trajectory pieces the store tests share: a candidate, verdicts, and one event of every type."""

from __future__ import annotations

from kernelmosaic.contracts.isolation import MINIMUM
from kernelmosaic.contracts.messages import Message, ToolCall, Usage
from kernelmosaic.contracts.trajectory import GuidanceEvent, MessageEvent, ToolCallEvent, ToolResultEvent
from kernelmosaic.contracts.verdict import Correctness, Env, Finding, Stat, Status, Timing, Verdict

ISOLATED = sorted({layer for options in MINIMUM.values() for layer in options[0]})
"""Layers meeting the documented minimum (`contracts.isolation.MINIMUM`), as a real verdict on this machine records them."""

CANDIDATE = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass  # kernel goes here\n"


def accepted_verdict(speedup: float = 2.5, sha: str = "", timed: bool = True, device: str = "cpu",
                     findings: list[Finding] | None = None, spread: float = 0.1) -> Verdict:
    """An accepted verdict as the verifier builds it (typed), timed by default, on the CPU; `spread`: the candidate's
    quartiles are its median times 1 -/+ spread (0.5 and over: an unreliable speedup, `contracts.speedup`)."""
    stat = Stat(median_ms=1.0, q1_ms=1.0 - spread, q3_ms=1.0 + spread, samples=30)
    timing = Timing(candidate=stat, eager=Stat(median_ms=speedup, q1_ms=speedup, q3_ms=speedup, samples=30),
                    speedup_vs_eager=speedup, speedup_vs_compile=1.1, timer="host") if timed else None
    return Verdict(
        accepted=True, status=Status.accepted, message=f"Matched the reference on 5 trials; {speedup}x faster than eager.",
        findings=[Finding(rule="odd-launch", severity="flag", message="grid of 1", evidence="k<<<1,1>>>"), *(findings or [])],
        correctness=Correctness(trials=5, passed=5), timing=timing, candidate_sha256=sha,
        env=Env(device=device, isolation=ISOLATED),
    )


def rejected_verdict(status: Status = Status.compile_error, message: str = "nvcc failed.") -> Verdict:
    return Verdict(accepted=False, status=status, message=message, env=Env(device="cpu"))


def every_event_type() -> list:
    """One of each event type, the way an episode produces them."""
    call = ToolCall(id="c1", name="verify", arguments={"source": CANDIDATE}, raw_arguments='{"source": "..."}')
    return [
        MessageEvent(step=0, message=Message(role="system", content="You write CUDA kernels.")),
        MessageEvent(step=0, message=Message(role="user", content="Make this faster.")),
        GuidanceEvent(step=0, item_ids=["coalescing", "shared-memory-tiling"], reason="category: matmul"),
        MessageEvent(
            step=1,
            message=Message(role="assistant", content="Trying a tiled kernel.", tool_calls=[call]),
            usage=Usage(prompt_tokens=120, completion_tokens=80, cost_usd=0.0012),
        ),
        ToolCallEvent(step=1, call=call),
        ToolResultEvent(
            step=1, call_id="c1", name="verify", content="accepted, 2.5x", verdict=accepted_verdict(),
            candidate_sha256="", gpu_seconds=3.25,
        ),  # fmt: skip
        MessageEvent(step=1, message=Message(role="tool", content="accepted, 2.5x", tool_call_id="c1", name="verify")),
    ]
