"""Tiny tasks and real C++ candidates for the evaluation tests (CPU verifier). Every working candidate uses ONE
extension source, so the verifier's content-keyed build cache builds it once for the whole test session."""

from __future__ import annotations

import json
from pathlib import Path

from cpp_kit import candidate as cpp_candidate
from cpp_kit import problem

from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.schema import Forms, Task

TASKS = {  # id: (level, category, forward expression)
    "ev_relu": (1, "activation", "torch.relu(x)"),
    "ev_scale": (1, "elementwise", "x * 2.0"),
    "ev_fused": (2, "fused", "torch.relu(x) * 2.0"),
    "ev_tiny": (1, "elementwise", "x * 1e-9"),  # degenerate: an all-zero output passes the tolerance
}

CPP = r"""
torch::Tensor relu_k(torch::Tensor x) {
    auto xc = x.contiguous(); auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] > 0.f ? s[i] : 0.f;
    return out;
}
torch::Tensor abs_k(torch::Tensor x) {
    auto xc = x.contiguous(); auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] < 0.f ? -s[i] : s[i];
    return out;
}
torch::Tensor scale_k(torch::Tensor x, double f) {
    auto xc = x.contiguous(); auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] * (float)f;
    return out;
}
torch::Tensor scale_notail_k(torch::Tensor x, double f) {
    auto xc = x.contiguous(); auto out = torch::zeros_like(xc);
    const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();
    const int64_t body = xc.numel() - xc.numel() % 64;  // no tail loop: right only when 64 divides n
    for (int64_t i = 0; i < body; ++i) d[i] = s[i] * (float)f;
    return out;
}
torch::Tensor relu_scale_k(torch::Tensor x, double f) {
    auto xc = x.contiguous(); auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] > 0.f ? s[i] * (float)f : 0.f;
    return out;
}
"""
FUNCTIONS = ["relu_k", "abs_k", "scale_k", "scale_notail_k", "relu_scale_k"]


def candidate(call: str, cpp: str = CPP) -> str:
    return cpp_candidate("km_eval_kit", cpp, FUNCTIONS, call)


GOOD_RELU = candidate("relu_k(x)")
WRONG_RELU = candidate("abs_k(x)")
NOTAIL_SCALE = candidate("scale_notail_k(x, 2.0)")
GOOD_FUSED = candidate("relu_scale_k(x, 2.0)")
TINY = candidate("scale_k(x, 1e-9)")
BROKEN = candidate("relu_k(x)", cpp=CPP.replace("auto xc = x.contiguous(); auto out = torch::empty_like(xc);\n    "
                                               "const float* s = xc.data_ptr<float>(); float* d = out.data_ptr<float>();\n"
                                               "    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] > 0.f",
                                               "auto out = torch::empty_like(x);\n    for (int64_t i = 0; i < x.numel(); ++i) "
                                               "d[i] = s[i] > 0.f", 1))


def make_tasks(root: Path) -> Path:
    """A task folder with the kit's tasks; returns it."""
    for task_id, (level, category, expr) in TASKS.items():
        task = Task(id=task_id, title=task_id, level=level, category=category,
                    forms=Forms(nl=f"Compute {expr} for x of shape (n,).", reference=problem(expr)))
        save_task_folder(task, root)
    return root


def write_call(source: str, call_id: str) -> Message:
    args = {"source": source}
    return Message(role="assistant", content="", tool_calls=[ToolCall(id=call_id, name="write_candidate", arguments=args,
                                                                      raw_arguments=json.dumps(args))])


def tool_call(name: str, call_id: str) -> Message:
    return Message(role="assistant", content="", tool_calls=[ToolCall(id=call_id, name=name, arguments={},
                                                                      raw_arguments="{}")])
