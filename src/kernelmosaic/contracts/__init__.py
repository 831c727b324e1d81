"""The shared data types: chat messages, trajectory events, the verdict's public model and what *verified* means.

A leaf package: `agent`, `models`, `store`, `sft` and `evaluate` import it; it imports none of them (only the
verifier's pydantic verdict types, which load without torch).
"""

from kernelmosaic.contracts.messages import Message, ModelReply, ToolCall, ToolSpec, Usage
from kernelmosaic.contracts.trajectory import (
    TRAJECTORY_SCHEMA,
    TRAJECTORY_V1,
    Event,
    GuidanceEvent,
    MessageEvent,
    Solution,
    ToolCallEvent,
    ToolResultEvent,
    Totals,
    Trajectory,
    parse_trajectory,
)
from kernelmosaic.contracts.verdict import Finding, Status, Verdict
from kernelmosaic.contracts.verified import AUDIT_FAILED, Verification, check_candidate, rank, task_flags_of

__all__ = [
    "Message", "ModelReply", "ToolCall", "ToolSpec", "Usage",
    "TRAJECTORY_SCHEMA", "TRAJECTORY_V1", "Event", "GuidanceEvent", "MessageEvent", "Solution", "ToolCallEvent",
    "ToolResultEvent", "Totals", "Trajectory", "parse_trajectory",
    "AUDIT_FAILED", "Verification", "check_candidate", "rank", "task_flags_of",
    "Verdict", "Status", "Finding",
]
