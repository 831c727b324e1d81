"""The runtime dataflow probe (`kernel-output-unused`) on honest buffer reuse and on kernels whose output is dropped.

The probe replaces a kernel's output with noise and checks that forward's result moves. Honest candidates here keep
their output in a buffer that outlives forward (a registered buffer, an attribute made on the first call, a
workspace made in `__init__`) or in an `out=` tensor forward made; each reuse rewrites identical values into the same
memory on a repeated input, which must still count as output. The cheats write the same buffers and drop them.
All candidates share one C++ extension source (one build per session); static analysis is off where the point is
the runtime check on its own.
"""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit

pytestmark = pytest.mark.slow

CPP = r'''
#include <torch/extension.h>

static void check_same(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& out) {
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && out.is_contiguous(), "contiguous tensors expected");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(a.numel() == b.numel() && a.numel() == out.numel(), "size mismatch");
}

// out = relu(a + b), written into a tensor the caller owns.
void add_relu_out(torch::Tensor a, torch::Tensor b, torch::Tensor out) {
    check_same(a, b, out);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = a.numel();
    at::parallel_for(0, n, 2048, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) { const float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    });
}

// ws = a + b: the first stage, into a scratch buffer.
void add_into(torch::Tensor a, torch::Tensor b, torch::Tensor ws) {
    check_same(a, b, ws);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pw = ws.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) pw[i] = pa[i] + pb[i];
}

// relu of the scratch buffer, as a new tensor: the second stage.
torch::Tensor relu_from(torch::Tensor ws) {
    TORCH_CHECK(ws.is_contiguous(), "ws must be contiguous");
    auto out = torch::empty_like(ws);
    const float* pw = ws.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ws.numel(); ++i) po[i] = pw[i] > 0.f ? pw[i] : 0.f;
    return out;
}

// Elements of scratch for n inputs, rounded up to whole cache lines: a host value, no tensor.
int64_t scratch_elems(int64_t n) {
    TORCH_CHECK(n >= 0, "n must be non-negative");
    return (n + 15) / 16 * 16;
}
'''

FUNCTIONS = ["add_relu_out", "add_into", "relu_from", "scratch_elems"]


def _candidate(init: str, forward: str) -> str:
    """A candidate on the shared extension, with `init` as the body of `__init__` after `super().__init__()`."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""{CPP}"""

fused = load_inline(name="km_probe_ext", cpp_sources=cpp_source, functions={FUNCTIONS!r},
                    extra_cflags=["-O2"], verbose=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        {init}
        self.add_relu_out = fused.add_relu_out

    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        {forward}
'''


HONEST = {
    # (a) a registered buffer, resized when the input size changes, returned as a copy
    "registered_buffer_clone": _candidate(
        'self.register_buffer("out_buf", torch.empty(0), persistent=False)',
        "if self.out_buf.numel() != a.numel():\n"
        "            self.out_buf = torch.empty_like(a)\n"
        "        self.add_relu_out(a, b, self.out_buf)\n"
        "        return self.out_buf.clone()"),
    # (a) a plain attribute made on the first call, copied into a fresh tensor
    "first_call_buffer_copy": _candidate(
        "self._buf = None",
        "if self._buf is None or self._buf.shape != a.shape:\n"
        "            self._buf = torch.empty_like(a)\n"
        "        fused.add_relu_out(a, b, self._buf)\n"
        "        result = torch.empty_like(a)\n"
        "        result.copy_(self._buf)\n"
        "        return result"),
    # (b) a workspace made in __init__, fully written by the first stage before the second reads it
    "init_workspace_two_stages": _candidate(
        'self.register_buffer("workspace", torch.zeros(4096), persistent=False)',
        "ws = self.workspace if self.workspace.numel() == a.numel() else torch.empty_like(a)\n"
        "        fused.add_into(a, b, ws)\n"
        "        return fused.relu_from(ws)"),
    # a host value from the extension sizes the scratch buffer that the two stages use
    "host_size_helper": _candidate(
        "pass",
        "ws = torch.empty(fused.scratch_elems(a.numel()), dtype=a.dtype)[: a.numel()]\n"
        "        fused.add_into(a, b, ws)\n"
        "        return fused.relu_from(ws)"),
    # (c) out= style: forward allocates, the kernel fills
    "out_arg_fresh": _candidate(
        "pass",
        "out = torch.empty_like(a)\n"
        "        self.add_relu_out(a, b, out)\n"
        "        return out"),
}

CHEATS = {
    # the reused buffer is written every call, then PyTorch's own result is returned
    "buffer_written_then_dropped": _candidate(
        'self.register_buffer("out_buf", torch.empty(4096), persistent=False)',
        "self.add_relu_out(a, b, self.out_buf)\n"
        "        return torch.relu(a + b)"),
    # the two-stage pipeline runs into the workspace, and its result is thrown away
    "workspace_pipeline_dropped": _candidate(
        'self.register_buffer("workspace", torch.zeros(4096), persistent=False)',
        "fused.add_into(a, b, self.workspace)\n"
        "        _ = fused.relu_from(self.workspace)\n"
        "        return torch.relu(a + b)"),
    # the only extension call returns a number, and PyTorch computes the result
    "host_value_only": _candidate(
        "pass",
        "_ = fused.scratch_elems(a.numel())\n"
        "        return torch.relu(a + b)"),
    # out= into a fresh tensor, dropped
    "out_arg_dropped": _candidate(
        "pass",
        "out = torch.empty_like(a)\n"
        "        self.add_relu_out(a, b, out)\n"
        "        return torch.relu(a + b)"),
}

DROPPED = {"buffer_written_then_dropped": {"add_relu_out"}, "workspace_pipeline_dropped": {"add_into", "relu_from"},
           "out_arg_dropped": {"add_relu_out"}, "host_value_only": {"scratch_elems"}}
"""The entry points each cheat calls, all of whose output the probe must find unused."""


@pytest.fixture(scope="module")
def runtime_only(build_cache):
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, static_checks=False, timing=False,
                          run_timeout_s=30)
    with Verifier(config) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("probe-problem"), "problem.py", kit.PROBLEM_ADD_RELU)


def _unused(verdict) -> list:
    return [f for f in verdict.findings if f.rule == "kernel-output-unused"]


@pytest.mark.parametrize("name", sorted(HONEST))
@pytest.mark.parametrize("policy", ["strict", "kernelbench"])
def test_honest_buffer_reuse_is_accepted_without_an_unused_finding(runtime_only, problem, tmp_path, name, policy):
    v = runtime_only.verify(problem, kit.write(tmp_path, f"{name}.py", HONEST[name]), policy=policy)
    assert v.accepted, f"{v.status}: {v.message} {v.findings}"
    assert not _unused(v), _unused(v)
    assert any(k.reaches_output for k in v.custom.kernels), v.custom.kernels
    for k in v.custom.kernels:  # every entry point is used, or outputs no tensor at all (a size)
        assert k.reaches_output or (k.reaches_output is None and k.name.endswith(".scratch_elems")), k


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_dropped_kernel_output_is_rejected(runtime_only, problem, tmp_path, name):
    v = runtime_only.verify(problem, kit.write(tmp_path, f"{name}.py", CHEATS[name]), policy="kernelbench")
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"
    found = _unused(v)
    assert found and found[0].severity == "reject", v.findings
    assert v.correctness.passed == v.correctness.trials  # right answers: only the probe tells it apart
    unused = {part.split(" ", 1)[0].rsplit(".", 1)[1] for part in found[0].evidence.split("; ")}
    assert unused == DROPPED[name], found[0].evidence


def test_honest_buffer_reuse_passes_the_static_checks_too(build_cache, problem, tmp_path):
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, timing=False, run_timeout_s=30)
    with Verifier(config) as verifier:
        for name in ("registered_buffer_clone", "init_workspace_two_stages"):
            v = verifier.verify(problem, kit.write(tmp_path, f"{name}.py", HONEST[name]), policy="kernelbench")
            assert v.accepted, f"{name}: {v.status}: {v.message} {v.findings}"
            assert not _unused(v), _unused(v)


ALIASED = _candidate(
    "self._buf = None",
    "if self._buf is None or self._buf.shape != a.shape:\n"
    "            self._buf = torch.empty_like(a)\n"
    "        fused.add_relu_out(a, b, self._buf)\n"
    "        return self._buf.view(a.shape)")
"""The buffer itself returned through a view: the kernel's output reaches the result, but every call returns the same
memory, so a caller's earlier result changes under it (issue 36: outputs must not alias across calls)."""


def test_a_buffer_returned_itself_through_a_view_is_rejected_as_aliasing(runtime_only, problem, tmp_path):
    v = runtime_only.verify(problem, kit.write(tmp_path, "first_call_buffer_view.py", ALIASED), policy="kernelbench")
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"
    assert [f.rule for f in v.rejected_by] == ["output-aliasing"], v.findings
