"""Under `strict`, PyTorch compute forward runs outside the candidate's kernels is seen at run time, whatever the source
spells: the probe's dispatch mode counts the operators forward dispatches outside its kernel calls. Python's builtin
`sum` over a comprehension and `itertools.accumulate` over kernel outputs add tensors with no PyTorch name or operator in the source (the
static view passes both); under `kernelbench`, where PyTorch may compute the rest, the same candidates are accepted.
An honest candidate that only slices, concatenates and reshapes around its kernel is accepted under `strict` with no
operator left unclassified. The same holds inside an extension function (`aten-compute-observed`). The record is part
of the policy checks: operators the static policy allows are allowed there too, and with the checks off it records
nothing."""

from __future__ import annotations

import torch.nn as nn  # noqa: F401 - the problems below are written as files

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit

PROBLEM_TWICE = kit.PROBLEM_ADD_RELU.replace("return torch.relu(a + b)", "return 2 * torch.relu(a + b)")

SPLIT_CAT = """n = a.shape[0] // 2
        top = ext.add_relu(a[:n].contiguous(), b[:n].contiguous())
        bottom = ext.add_relu(a[n:].contiguous(), b[n:].contiguous())
        return torch.cat([top.view(-1), bottom.view(-1)]).reshape(a.shape)"""

BUILTIN_SUM = """parts = [ext.add_relu(a, b) for _ in range(2)]
        return sum(parts)"""

SIZE_ARITHMETIC = """n = int(torch.tensor(a.shape).prod().item())
        return ext.add_relu(a.reshape(n), b.reshape(n)).view_as(a)"""

ACCUMULATE = """r = ext.add_relu(a, b)
        *_, total = itertools.accumulate([r, r])
        return total"""


def _finding(verdict, rule):
    return next((f for f in verdict.findings if f.rule == rule), None)


def test_builtin_sum_of_kernel_outputs_is_torch_compute_under_strict(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM_TWICE)
    cand = kit.write(tmp_path, "cand.py", kit.candidate(BUILTIN_SUM))
    verdict = cpu_verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.no_custom_kernel, verdict.message
    finding = _finding(verdict, "torch-compute-observed")
    assert finding is not None and finding.severity == "reject", verdict.findings
    assert "aten::add" in finding.evidence, finding.evidence
    lenient = cpu_verifier.verify(problem, cand, timing=False, policy="kernelbench")
    assert lenient.status == Status.accepted, lenient.message
    assert _finding(lenient, "torch-compute-observed") is None


def test_itertools_accumulate_of_kernel_outputs_is_torch_compute_under_strict(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM_TWICE)
    cand = kit.write(tmp_path, "cand.py", kit.candidate(ACCUMULATE, extra="import itertools\n"))
    verdict = cpu_verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.no_custom_kernel, verdict.message
    assert "aten::add" in _finding(verdict, "torch-compute-observed").evidence


def test_slicing_and_concatenating_around_the_kernel_is_accepted_under_strict(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "cand.py", kit.candidate(SPLIT_CAT))
    verdict = cpu_verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.accepted, verdict.message
    assert not [f for f in verdict.findings if f.rule.startswith("torch-")], verdict.findings


FUNCTOR_ADD = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <functional>
#include <vector>

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    std::vector<torch::Tensor> pair{a.contiguous(), b.contiguous()};
    auto sum = std::plus<>{}(pair[0], pair[1]);
    auto out = torch::empty_like(sum);
    const float* ps = sum.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < sum.numel(); ++i) po[i] = ps[i] > 0.f ? ps[i] : 0.f;
    return out;
}
"""
_ext = load_inline(name="km_functor_add", cpp_sources=_src, functions=["add_relu"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return _ext.add_relu(a, b)
'''


def test_aten_compute_in_the_extension_is_seen_at_run_time_under_strict(cpu_verifier, build_cache, tmp_path):
    """`std::plus<>{}` on two tensors (a red-team form the C++ source view does not see) runs `aten::add` in the
    extension's host code. The binary's own symbols name it first (`at::_ops::add_Tensor::call`); with that rule
    lowered to a flag, the run-time record still rejects it (`aten-compute-observed`) under strict. Accepted under
    kernelbench."""
    from kernelmosaic.verify.static import StaticPolicy

    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "cand.py", FUNCTOR_ADD)
    verdict = cpu_verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.static_reject, verdict.message
    assert "aten-compute-in-extension" in verdict.message and "add_Tensor" in verdict.message, verdict.message
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, compile_baseline=False,
                          static=StaticPolicy(severity={"aten-compute-in-extension": "flag"}))
    with Verifier(config) as verifier:
        behind = verifier.verify(problem, cand)
    assert behind.status == Status.no_custom_kernel, behind.message
    finding = _finding(behind, "aten-compute-observed")
    assert finding is not None and "aten::add" in finding.evidence, behind.findings
    lenient = cpu_verifier.verify(problem, cand, timing=False, policy="kernelbench")
    assert lenient.status == Status.accepted, lenient.message


def test_operators_the_policy_allows_are_allowed_at_run_time_too(build_cache, tmp_path):
    """`StaticPolicy.allowed_torch_ops` names PyTorch calls a task lets PyTorch make; the run-time record allows them
    by the same names, and the policy checks off (`static_checks=false`, a weakened verdict) record nothing."""
    from kernelmosaic.verify.static import StaticPolicy

    problem = kit.write(tmp_path, "problem.py", PROBLEM_TWICE)
    cand = kit.write(tmp_path, "cand.py", kit.candidate(ACCUMULATE, extra="import itertools\n"))
    for settings in ({"static": StaticPolicy(allowed_torch_ops=["torch.add"])}, {"static_checks": False}):
        config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, compile_baseline=False,
                              run_timeout_s=30, memory_limit_gb=8, **settings)
        with Verifier(config) as verifier:
            verdict = verifier.verify(problem, cand)
        assert verdict.status == Status.accepted, (settings, verdict.message)
        assert _finding(verdict, "torch-compute-observed") is None


def test_size_arithmetic_on_a_tensor_made_from_a_shape_is_not_compute(cpu_verifier, tmp_path):
    """`torch.tensor(a.shape).prod().item()` (an honest answer of blind round 7 counted elements that way) computes a
    size, not the problem's data: neither the static view nor the run-time record calls it PyTorch compute."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "cand.py", kit.candidate(SIZE_ARITHMETIC))
    verdict = cpu_verifier.verify(problem, cand, timing=False)
    assert verdict.status == Status.accepted, verdict.message
    assert not [f for f in verdict.findings if f.rule.startswith(("torch-", "aten-"))], verdict.findings


def test_integer_bookkeeping_is_not_recorded_and_small_float_compute_is():
    """The probe's dispatch mode on real operators: stepping and reading BatchNorm's batch counter (an int64 tensor of
    one element) is bookkeeping; the same operator on a float tensor of the same size is compute."""
    import torch

    from kernelmosaic.verify.sandbox.kmworker.intercept import Interceptor

    seen = Interceptor()
    seen.reset(set(), 0, lambda: None, record=True)
    bn = nn.BatchNorm2d(4)
    seen.active = True
    with seen.op_mode():
        bn.num_batches_tracked.add_(1)
        bn.num_batches_tracked += 1
        momentum = 1.0 / float(bn.num_batches_tracked.item())
    assert seen.torch_ops == {} and momentum == 0.5
    with seen.op_mode():
        torch.ones(1).add_(1)
    assert "aten::add_" in {n.split(".")[0] for n in seen.torch_ops}, seen.torch_ops


# Forward that computes with its kernel only while it is checked (red-team round 9): the correctness runs and the kernel
# probe run in PyTorch's deterministic mode on the CPU (it NaN-fills fresh allocations), timed calls do not; or it
# counts its calls. Elsewhere ReLU is PyTorch's, on a list element the static view cannot type.
WHEN_CHECKED = """s = ext.add_only(a, b)
        if torch.are_deterministic_algorithms_enabled():
            return ext.add_relu(a, b)
        views = [s]
        return views[0].clamp_min(0.0)"""

AFTER_CALLS = """_seen[0] += 1
        if _seen[0] <= 16:
            return ext.add_relu(a, b)
        views = [ext.add_only(a, b)]
        return views[0].clamp_min(0.0)"""


def test_pytorch_compute_only_in_timed_calls_is_seen_in_a_watched_timed_call_under_strict(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    for name, body, extra in (("when_checked", WHEN_CHECKED, ""), ("after_calls", AFTER_CALLS, "_seen = [0]\n")):
        cand = kit.write(tmp_path, f"{name}.py", kit.candidate(body, extra=extra))
        verdict = cpu_verifier.verify(problem, cand)
        assert verdict.status == Status.no_custom_kernel, (name, verdict.message)
        finding = _finding(verdict, "torch-compute-observed")
        assert finding is not None and "clamp_min" in finding.evidence, (name, verdict.findings)
        assert verdict.timing is None or not verdict.accepted


def test_a_watched_timed_call_leaves_an_honest_candidates_timing_alone(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "cand.py", kit.candidate("return ext.add_relu(a, b)"))
    verdict = cpu_verifier.verify(problem, cand)
    assert verdict.accepted, verdict.message
    assert verdict.timing is not None and verdict.timing.candidate.samples >= 1
    assert not [f for f in verdict.findings if f.rule.startswith("torch-")], verdict.findings


def test_compute_sixteen_elements_at_a_time_is_recorded():
    """Red-team round 9: a result computed in 16-element pieces (fresh float tensors from `tolist()`, or integer
    windows of the output's own memory) passed as size arithmetic. Pieces of a larger tensor's memory are data, and a
    forward gets a few dozen size operators at most; a shape's product and a counter's step stay unrecorded."""
    import torch

    from kernelmosaic.verify.sandbox.kmworker.intercept import SIZE_OPS_MAX, Interceptor

    def recorded(fn) -> dict:
        seen = Interceptor()
        seen.reset(set(), 0, lambda: None, record=True)
        seen.active = True
        with seen.op_mode():
            fn()
        return seen.torch_ops

    x = torch.randn(4, 64)
    assert recorded(lambda: torch.tensor(x.shape).prod().item()) == {}
    out = torch.randn(64)
    bits = out.view(torch.int32)
    assert "aten::clamp_min_" in recorded(lambda: [bits[i:i + 16].clamp_min_(0) for i in range(0, 64, 16)])
    rows = x.tolist()
    pieces = recorded(lambda: [torch.tensor(r[:16]).add_(torch.tensor(r[16:32]), alpha=2.0)
                               for r in rows * (SIZE_OPS_MAX // 8)])
    assert pieces.get("aten::add_", 0) > 0, pieces


def test_an_indexed_write_that_accumulates_is_compute_and_a_plain_one_is_not():
    """Red-team round 9 summed with `index_put_(..., accumulate=True)` and `nansum`, both unclassified (a flag)."""
    import torch

    from kernelmosaic.verify.sandbox.kmworker.intercept import Interceptor
    from kernelmosaic.verify.static.vocab import dispatched_kind

    def recorded(fn) -> dict:
        seen = Interceptor()
        seen.reset(set(), 0, lambda: None, record=True)
        seen.active = True
        with seen.op_mode():
            fn()
        return seen.torch_ops

    x, acc, idx = torch.randn(256, 64), torch.zeros(1, 64), torch.zeros(256, dtype=torch.long)
    summed = recorded(lambda: acc.index_put_((idx,), x, accumulate=True))
    assert [dispatched_kind(n) for n in summed] == ["compute"], summed
    written = recorded(lambda: acc.index_put_((idx[:1],), x[:1]))
    assert written and all(dispatched_kind(n) == "noncompute" for n in written), written
    assert {dispatched_kind(n) for n in recorded(lambda: x.nansum(0, keepdim=True))} == {"compute"}


def test_a_forward_that_skips_its_kernel_when_timed_is_rejected_under_kernelbench_too(cpu_verifier, tmp_path):
    """Under `kernelbench` PyTorch may compute, but the speed reported must be the candidate's: a watched timed call
    that calls none of the kernels forward called while checked is `timed-without-kernels`."""
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    body = """if torch.are_deterministic_algorithms_enabled():
            return ext.add_relu(a, b)
        return torch.relu(a + b)"""
    verdict = cpu_verifier.verify(problem, kit.write(tmp_path, "cand.py", kit.candidate(body)), policy="kernelbench")
    assert verdict.status == Status.no_custom_kernel, verdict.message
    assert _finding(verdict, "timed-without-kernels") is not None, verdict.findings
