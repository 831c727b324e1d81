"""Trajectory pieces the store tests share: a candidate, verdicts, and one event of every type."""

from __future__ import annotations

from kernelmosaic.models.messages import Message, ToolCall, Usage
from kernelmosaic.store.trajectory import GuidanceEvent, MessageEvent, ToolCallEvent, ToolResultEvent

CANDIDATE = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass  # kernel goes here\n"


def accepted_verdict(speedup: float = 2.5, sha: str = "") -> dict:
    return {
        "schema": "kernelmosaic.verdict/1",
        "accepted": True,
        "status": "accepted",
        "message": "Matched the reference on 5 trials; 2.5x faster than eager.",
        "findings": [{"rule": "odd-launch", "severity": "flag", "message": "grid of 1", "evidence": "k<<<1,1>>>"}],
        "timing": {"speedup_vs_eager": speedup, "speedup_vs_compile": 1.1, "timer": "host"},
        "candidate_sha256": sha,
    }


def rejected_verdict() -> dict:
    return {"schema": "kernelmosaic.verdict/1", "accepted": False, "status": "compile_error", "message": "nvcc failed."}


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
