"""What the model reads: the system prompt (candidate format and rules) and the task presentation."""

from __future__ import annotations

from kernelmosaic.tasks.schema import Task

__all__ = ["system_prompt", "task_prompt", "NO_TOOL_CALL", "PHASE_TWO"]

_CANDIDATE = {
    "cuda": (
        "Write CUDA kernels and build them with `torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., "
        "cuda_sources=..., functions=[...])` at module import time. Launch on the current stream "
        "(`at::cuda::getCurrentCUDAStream()`); create no other streams or threads."
    ),
    "cpu": (
        "This machine has no GPU: write the kernels in C++ and build them with "
        "`torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., functions=[...])` (no cuda_sources) "
        "at module import time. Loop over raw pointers (`data_ptr<float>()`); do not call ATen compute ops."
    ),
}

_SYSTEM = """You are an expert performance engineer who writes custom kernels for PyTorch models.
You are given a PyTorch reference module `Model` (with `get_inputs()` and `get_init_inputs()`) and must write a
faster drop-in replacement, verified by an independent checker.

The candidate is ONE Python source file that defines `class ModelNew(nn.Module)`:
- same constructor arguments as `Model`, same parameters and buffers (names and shapes), same forward semantics,
  same output shapes and dtypes;
- {candidate}
- `forward` may allocate outputs and reshape views, but all computation runs in your kernels: no PyTorch compute
  ops in `forward` (no torch.matmul, F.relu, x.sum(), ...), no fallback to the reference, no caching of results
  between calls, no extra streams or threads.
- imports: {imports} only; do not seed or read random number generators, do not touch the checker
  (timers, torch flags, other modules' attributes), no exec/eval/importlib.

Work through the tools, one step at a time:
- write_candidate(source): replace the whole candidate file;
- compile(): build it and see the first compiler errors;
- test(): check correctness against the reference on fresh inputs (several trials and input distributions);
- benchmark(): time it against eager PyTorch and torch.compile;
- profile(): see which kernels run and how long they take;
- guidance(topic): short advice on CUDA techniques and on repairing failures;
- submit(): finish; the fastest candidate that passed test() is your answer.
First reach a candidate that passes test(). Then optimize it while it stays correct: change one thing at a
time, test(), benchmark(), and submit() when further changes stop paying off. Every reply must call a tool."""


def system_prompt(device: str) -> str:
    from kernelmosaic.verify.static.policy import DEFAULT_IMPORTS

    return _SYSTEM.format(candidate=_CANDIDATE[device], imports=", ".join(sorted(DEFAULT_IMPORTS)))


def task_prompt(task: Task, problem_source: str, device: str, guidance: list[str]) -> str:
    """The task as the model sees it: statement, reference, spec, shapes, dtype, device, starter advice."""
    parts = [
        f"# Task {task.id}: {task.title}",
        f"Level {task.level}, category {task.category}, precision {task.dtype}, device {device}.",
        task.forms.nl.strip(),
        "## Reference (problem module)\n```python\n" + problem_source.strip() + "\n```",
    ]
    if task.forms.spec.strip():
        parts.append("## Math spec\n```\n" + task.forms.spec.strip() + "\n```")
    if device == "cpu" and task.shapes.small:
        sizes = ", ".join(f"{k} = {v}" for k, v in task.shapes.small.items())
        parts.append(f"On this CPU device the checker uses small shapes ({sizes}), already set in the reference above; "
                     "your code must work for any size.")
    if guidance:
        parts.append("## Guidance\n" + "\n\n".join(guidance))
    parts.append("Start by writing a correct candidate with write_candidate(source).")
    return "\n\n".join(parts)


NO_TOOL_CALL = (
    "Your reply did not call a tool. Every reply must call one of the tools (write_candidate, compile, test, "
    "benchmark, profile, guidance, submit) with JSON arguments."
)

PHASE_TWO = (
    "This candidate passed and is now your answer. Phase 2: make it faster while keeping it correct. "
    "Use benchmark() and profile(), try one improvement at a time, and submit() when done; the fastest "
    "candidate that passed test() is kept."
)
