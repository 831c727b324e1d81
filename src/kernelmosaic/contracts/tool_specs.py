"""The tools offered to the model, as JSON-schema functions."""

from __future__ import annotations

from typing import Any

from kernelmosaic.contracts.messages import ToolCall, ToolSpec

__all__ = ["TOOL_SPECS", "TOOL_NAMES", "argument_error"]

_NONE: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

TOOL_SPECS: list[ToolSpec] = [
    ToolSpec(
        name="write_candidate",
        description="Replace the whole candidate file with `source`: a Python module defining ModelNew and building "
        "its kernels with torch.utils.cpp_extension.load_inline.",
        parameters={
            "type": "object",
            "properties": {"source": {"type": "string", "description": "The complete Python source of the candidate."}},
            "required": ["source"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(name="compile", description="Build the candidate's extensions and import it; shows the first compiler "
             "errors with file:line.", parameters=_NONE),
    ToolSpec(name="test", description="Check the candidate against the reference on fresh inputs: status, errors, "
             "first mismatch, integrity findings.", parameters=_NONE),
    ToolSpec(name="benchmark", description="Check and time the candidate: medians vs eager PyTorch and torch.compile, "
             "speedups, achieved bandwidth and FLOP rate.", parameters=_NONE),
    ToolSpec(name="profile", description="Run the candidate under the profiler: kernels by time (yours marked) and "
             "Nsight Compute metrics where available.", parameters=_NONE),
    ToolSpec(
        name="guidance",
        description="Look up short CUDA advice by topic id or free-text query (e.g. 'bank conflicts', "
        "'online softmax'); an empty topic lists the topics.",
        parameters={
            "type": "object",
            "properties": {"topic": {"type": "string", "description": "A topic id or a few words."}},
            "required": [],
            "additionalProperties": False,
        },
    ),
    ToolSpec(name="submit", description="Finish the episode. The answer is the fastest candidate that passed test().",
             parameters=_NONE),
]

TOOL_NAMES = [spec.name for spec in TOOL_SPECS]
_BY_NAME = {spec.name: spec for spec in TOOL_SPECS}


def argument_error(call: ToolCall) -> str:
    """Why the call cannot run as given (unknown tool, unparseable or mistyped arguments); empty when it can."""
    spec = _BY_NAME.get(call.name)
    if spec is None:
        return f"Unknown tool {call.name!r}. The tools are: {', '.join(TOOL_NAMES)}."
    if call.parse_error:
        return f"The arguments of {call.name} are not a JSON object ({call.parse_error}). Send valid JSON."
    props = spec.parameters.get("properties", {})
    missing = [k for k in spec.parameters.get("required", []) if k not in call.arguments]
    unknown = [k for k in call.arguments if k not in props]
    wrong = [k for k, v in call.arguments.items() if k in props and props[k].get("type") == "string" and not isinstance(v, str)]
    problems = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(unknown)}"] * bool(unknown) \
        + [f"{', '.join(wrong)} must be a string"] * bool(wrong)
    if problems:
        return f"Bad arguments for {call.name}: {'; '.join(problems)}. Schema: {spec.parameters}"
    return ""
