"""ATen in an extension's host code: PyTorch compute (a flag under kernelbench, a reject under strict that says
so); size arithmetic on ints is never tensor arithmetic (tensor-ness comes from declarations)."""

from __future__ import annotations

import re

import pytest

from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.static import StaticPolicy, analyze_candidate


def _candidate(body: str) -> str:
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor running_mean) {{
    const int batch_size = x.size(0);
    const int out_features = w.size(0);
    auto out = torch::empty({{batch_size, out_features}}, x.options());
{body}
    return out;
}}
"""

ext = load_inline(name="host", cpp_sources=src, functions=["run"], verbose=True)


class ModelNew(nn.Module):
    def forward(self, x, w, m):
        return ext.run(x, w, m)
'''


ATEN = {
    "torch::mean": "    auto mean = torch::mean(x, 0);",
    ".sum()": "    auto total = x.sum();",
    ".mean()": "    auto mu = x.mean(0);",
    "torch::sqrt": "    auto root = torch::sqrt(x);",
    ".add_()": "    running_mean.mul_(0.9).add_(x.mean(0), 0.1);",
    "at::matmul": "    out.copy_(at::matmul(x, w.t()));",
}


@pytest.mark.parametrize("call", sorted(ATEN))
def test_aten_in_host_code_flags_under_kernelbench_and_rejects_under_strict_naming_the_way_out(call):
    src = _candidate(ATEN[call])
    line = next(i for i, text in enumerate(src.splitlines(), 1) if text == ATEN[call])
    kernelbench = VerifyConfig(policy="kernelbench").static_policy()
    assert {(f.rule, f.severity) for f in analyze_candidate(src, "c.py", kernelbench)} == {
        ("aten-compute-in-extension", "flag")}
    strict = [f for f in analyze_candidate(src, "c.py", VerifyConfig(policy="strict").static_policy())
              if f.severity == "reject"]
    assert [f.rule for f in strict] == ["aten-compute-in-extension"]
    assert call in strict[0].message and f"(line {line})" in strict[0].message
    assert "`--policy kernelbench`" in strict[0].message
    assert strict[0].evidence.startswith(f"c.py:{line}:")


SIZES = [
    "    size_t total = (size_t)batch_size * out_features;",
    "    TORCH_CHECK(w.size(0) != batch_size || batch_size > 0, \"odd\");",
    "    TORCH_CHECK(batch_size == x.size(0), \"batch\");",
    "    int64_t n = x.numel() / out_features;",
    "    auto rows = x.size(0) * x.size(1);",
    "    auto cols = w.size(1); int64_t span = rows_of(cols) - cols % 4;",
    "    dim3 block(256); dim3 grid((out_features + block.x - 1) / block.x, batch_size);",
    "    torch::Tensor z = torch::zeros({batch_size * out_features}, x.options());",
    "    const int64_t stride = -x.stride(0) + 2 * x.stride(1);",
]


@pytest.mark.parametrize("stmt", SIZES)
def test_size_arithmetic_is_never_tensor_arithmetic(stmt):
    src = _candidate(stmt).replace("#include <torch/extension.h>",
                                   "#include <torch/extension.h>\nint64_t rows_of(int64_t c) { return c; }")
    assert analyze_candidate(src, "c.py", StaticPolicy()) == []


@pytest.mark.parametrize("stmt", [
    "    auto y = x * w;",                                   # two tensor parameters
    "    auto mu = x.contiguous(); out.copy_(mu + mu);",     # auto from a view of a tensor
    "    torch::Tensor t = out; t += x;",                    # declared Tensor, compound assignment
    "    auto s = at::matmul(x, w); out.copy_(s * 2);",      # auto from ATen compute
])
def test_tensor_arithmetic_in_host_code_is_still_found(stmt):
    rules = {f.rule for f in analyze_candidate(_candidate(stmt), "c.py", StaticPolicy()) if f.severity == "reject"}
    assert rules == {"aten-compute-in-extension"}
    msgs = [f.message for f in analyze_candidate(_candidate(stmt), "c.py", StaticPolicy())]
    assert any(re.search(r"tensor arithmetic|in-place tensor arithmetic|calls", m) for m in msgs)


_TWO_KERNELS = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void scale_kernel(float* y, float s, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}
__global__ void old_scale_kernel(float* y, float s, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * s;
}
torch::Tensor run(torch::Tensor x, torch::Tensor w) {
    auto y = at::matmul(x, w).contiguous();
    const int64_t n = y.numel();
    LAUNCH
    return y;
}
"""

ext = load_inline(name="two", cpp_sources="torch::Tensor run(torch::Tensor x, torch::Tensor w);", cuda_sources=cuda_src,
                  functions=["run"], verbose=True)


class ModelNew(nn.Module):
    def forward(self, x, w):
        return ext.run(x, w)
'''


def test_a_dead_kernel_beside_a_launched_one_is_not_rejected_but_no_launch_at_all_is():
    kernelbench = VerifyConfig(policy="kernelbench").static_policy()
    launch = "scale_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), 2.f, n);"
    used = _TWO_KERNELS.replace("LAUNCH", launch)
    assert {(f.rule, f.severity) for f in analyze_candidate(used, "c.py", kernelbench)} == {
        ("aten-compute-in-extension", "flag")}
    unused = [f for f in analyze_candidate(_TWO_KERNELS.replace("LAUNCH", ""), "c.py", kernelbench)
              if f.severity == "reject"]
    assert sorted(f.rule for f in unused) == ["kernel-defined-not-launched"] * 2
    assert all("launches no kernel of its own (ATen does the work)" in f.message for f in unused)


UTILITIES = {  # ATen functions that are not operators: they compute nothing on tensors
    "at::infer_size": "    auto shape = at::infer_size(x.sizes(), w.sizes());",
    "at::get_thread_num": "    int tid = at::get_thread_num();",
    "at::maybe_wrap_dim": "    auto d = at::maybe_wrap_dim(-1, x.dim());",
    "at::ceil_div": "    auto blocks = at::ceil_div(batch_size, 256);",
}
THROUGH_OTHER_NAMES = {  # compute reached through names that are not the operator's own
    "at::add_out": "    at::add_out(out, x, w);",
    "torch::fft::fft": "    auto spectrum = torch::fft::fft(x);",
    "at::_ops::sum::call": "    auto s = at::_ops::sum::call(x, c10::nullopt);",
    "torch::autograd::grad": "    auto g = torch::autograd::grad({x}, {w});",
    "at::native::cpublas::gemm": "    at::native::cpublas::gemm(at::native::TransposeType::NoTranspose, "
                                 "at::native::TransposeType::NoTranspose, 1, 1, 1, 1.f, nullptr, 1, nullptr, 1, 0.f, "
                                 "nullptr, 1);",
}


@pytest.mark.parametrize("call", sorted(UTILITIES))
def test_atens_utilities_are_not_tensor_compute_under_either_policy(call):
    """The hinge-loss answer of a fresh model-style set broadcast its shapes with `at::infer_size` and indexed its
    per-thread partial sums with `at::get_thread_num`: rejected under strict as ATen compute, which neither is."""
    src = _candidate(UTILITIES[call])
    for policy in ("strict", "kernelbench"):
        found = analyze_candidate(src, "c.py", VerifyConfig(policy=policy).static_policy())
        assert [f for f in found if f.rule == "aten-compute-in-extension"] == [], (policy, found)


@pytest.mark.parametrize("call", sorted(THROUGH_OTHER_NAMES))
def test_aten_compute_through_out_forms_namespaces_and_the_dispatcher_still_rejects_under_strict(call):
    src = _candidate(THROUGH_OTHER_NAMES[call])
    strict = [f for f in analyze_candidate(src, "c.py", VerifyConfig(policy="strict").static_policy())
              if f.rule == "aten-compute-in-extension"]
    assert strict and strict[0].severity == "reject", strict


SCOPED = '''    if (x.dim() > 1) {
        float* rm = running_mean.data_ptr<float>();
        const double mean = 0.5, momentum = 0.1;
        for (int c = 0; c < 4; ++c) {
            rm[c] = static_cast<float>((1.0 - momentum) * rm[c] + momentum * mean);
        }
    } else {
        auto rm = running_mean.contiguous();
        const float* rmp = rm.data_ptr<float>();
    }'''


def test_a_name_is_typed_by_the_declaration_in_its_own_scope():
    """A fresh model-style ResNet-block answer updated its running statistics through a `float* rm` in one branch
    while the other branch declared `auto rm = running_mean.contiguous()`: its scalar update was read as tensor
    arithmetic (flagged under kernelbench, a reject under strict)."""
    src = _candidate(SCOPED)
    for policy in ("strict", "kernelbench"):
        found = analyze_candidate(src, "c.py", VerifyConfig(policy=policy).static_policy())
        assert [f for f in found if f.rule == "aten-compute-in-extension"] == [], (policy, found)


def test_a_tensor_of_an_outer_scope_stays_one_inside_blocks_lambdas_and_loops():
    inner = {
        "a block": "    { auto y = x * 2; }",
        "a for loop": "    for (int i = 0; i < 2; ++i) { auto y = x + w; }",
        "a lambda": "    at::parallel_for(0, 4, 1, [&](int64_t b, int64_t e) { auto y = x - w; });",
        "a branch that shadows something else": "    if (batch_size) { int w = 3; auto y = x * w; }",
    }
    for where, body in inner.items():
        strict = [f for f in analyze_candidate(_candidate(body), "c.py", VerifyConfig(policy="strict").static_policy())
                  if f.rule == "aten-compute-in-extension"]
        assert strict and strict[0].severity == "reject", (where, strict)
    shadowed = "    { int x = 3; int y = x * 2; }"  # the parameter x shadowed by an int
    found = analyze_candidate(_candidate(shadowed), "c.py", VerifyConfig(policy="strict").static_policy())
    assert [f for f in found if f.rule == "aten-compute-in-extension"] == []


THREADS = {
    "std::thread": "    std::vector<std::thread> pool;\n"
                   "    for (int t = 0; t < 4; ++t) pool.emplace_back([&, t] { out.select(1, 0).data_ptr<float>()[t] = t; });\n"
                   "    for (auto& th : pool) th.join();",
    "pthread_create": "    pthread_t th; pthread_create(&th, nullptr, +[](void* p) -> void* { return p; }, nullptr);\n"
                      "    pthread_join(th, nullptr);",
    "thrd_create": "    thrd_t th; thrd_create(&th, +[](void*) -> int { return 0; }, nullptr); thrd_join(th, nullptr);",
}


@pytest.mark.parametrize("start", sorted(THREADS))
def test_host_threads_in_a_cpu_extension_are_a_flag_and_beside_cuda_code_a_reject(start):
    """A pool of host threads is how a CPU kernel is parallel without OpenMP: the run clock counts every thread and
    the process is frozen while baselines run, so it is recorded, not rejected. Beside CUDA code the same threads can
    enqueue device work after the reply, outside the timed stream."""
    cpu = _candidate(THREADS[start])
    for policy in ("kernelbench", "strict"):
        found = {(f.rule, f.severity) for f in analyze_candidate(cpu, "c.py",
                                                                  VerifyConfig(policy=policy).static_policy())}
        assert found == {("host-threads", "flag")}, (policy, found)
    cuda = cpu.replace("load_inline(name=\"host\", cpp_sources=src,",
                       "load_inline(name=\"host\", cpp_sources=\"\", cuda_sources=src,")
    found = {(f.rule, f.severity) for f in analyze_candidate(cuda, "c.py", VerifyConfig(policy="kernelbench",
                                                                                        device="cuda").static_policy())}
    assert ("streams-cuda", "reject") in found, found


def test_a_pools_size_and_an_optionals_none_default_are_not_findings():
    src = _candidate("    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());\n"
                     "    (void)workers;")
    assert analyze_candidate(src, "c.py", VerifyConfig(policy="strict").static_policy()) == []
    bound = src.replace('ext = load_inline(name="host", cpp_sources=src, functions=["run"], verbose=True)',
                        'ext = load_inline(name="host", cpp_sources=src + BIND, verbose=True)').replace(
        'src = r"""', 'BIND = r"""\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n'
                      '    m.def("run", &run, py::arg("x"), py::arg("w"), py::arg("running_mean") = py::none());\n}\n"""\n'
                      'src = r"""')
    assert analyze_candidate(bound, "c.py", VerifyConfig(policy="strict").static_policy()) == []
    imported = bound.replace("= py::none());", "= py::module_::import(\"torch\").attr(\"ones\")(1));")
    assert ("dynamic-code", "reject") in {(f.rule, f.severity) for f in analyze_candidate(
        imported, "c.py", VerifyConfig(policy="strict").static_policy())}


SIMD_BODY = """    using Vec = at::vec::Vectorized<float>;
    const float* px = x.data_ptr<float>();
    float* po = out.data_ptr<float>();
    Vec vmax(px[0]);
    for (int64_t j = 0; j + Vec::size() <= x.numel(); j += Vec::size()) vmax = at::vec::maximum(vmax, Vec::loadu(px + j));
    for (int64_t j = 0; j + Vec::size() <= x.numel(); j += Vec::size()) {
        Vec e = (Vec::loadu(px + j) - vmax).exp();
        auto r = e.sqrt().abs();
        r.store(po + j);
    }"""


def test_a_simd_registers_methods_are_not_tensor_methods():
    """`at::vec::Vectorized` (aliased, as models write it) has `.exp()`, `.sqrt()`, `.abs()`: register arithmetic in
    the candidate's own loop, not ATen compute, under either policy; the same methods on a tensor still reject."""
    src = _candidate(SIMD_BODY)
    for policy in ("kernelbench", "strict"):
        assert analyze_candidate(src, "c.py", VerifyConfig(policy=policy).static_policy()) == [], policy
    on_tensor = _candidate(SIMD_BODY + "\n    auto shifted = (x - 1.0).exp();\n    out.copy_(w.exp().abs());")
    strict = [f for f in analyze_candidate(on_tensor, "c.py", VerifyConfig(policy="strict").static_policy())
              if f.severity == "reject"]
    assert {f.rule for f in strict} == {"aten-compute-in-extension"} and len(strict) >= 2, strict
    # a register named like a tensor of another scope does not hide that tensor's compute
    shadow = _candidate("    { at::vec::Vectorized<float> w(1.f); (void)w.exp(); }\n    out.copy_(w.exp());")
    assert [f.rule for f in analyze_candidate(shadow, "c.py", VerifyConfig(policy="strict").static_policy())
            if f.severity == "reject"] == ["aten-compute-in-extension"]


PRAGMA_AND_ALIGN = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>

__global__ void tile_sum(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ __align__(32) float partial[4][4];
    float* tile = reinterpret_cast<float*>(smem_raw);
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int r = 0; r < 4; ++r)
        #pragma unroll
        for (int c = 0; c < 4; ++c)
            acc[c] += x[(blockIdx.x * 4 + r) * cols + c];
    tile[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
    partial[0][0] = tile[0];
    __syncthreads();
    if (threadIdx.x == 0) y[blockIdx.x] = tile[0] + partial[0][0];
}

torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty({x.size(0) / 4}, x.options());
    tile_sum<<<x.size(0) / 4, 32, 32 * sizeof(float)>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1));
    return y;
}
"""

ext = load_inline(name="tiles", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=cuda_src,
                  functions=["run"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
'''


def test_pragma_lines_and_align_qualifiers_parse():
    """`#pragma unroll` as the body of a brace-less `for` and `__align__(N)` on shared arrays compile with nvcc; the
    grammar did not read them (`cuda-parse-incomplete`, the rest of the source only partly analyzed)."""
    findings = analyze_candidate(PRAGMA_AND_ALIGN, "c.py", StaticPolicy())
    assert not [f for f in findings if f.rule == "cuda-parse-incomplete"], findings
    # the kernel is still seen, and what follows the pragma still read: a rule that needs the loop body still fires
    poisoned = PRAGMA_AND_ALIGN.replace("acc[c] += x[(blockIdx.x * 4 + r) * cols + c];",
                                        "acc[c] += x[(blockIdx.x * 4 + r) * cols + c]; cudaDeviceReset();")
    assert "streams-cuda" in {f.rule for f in analyze_candidate(poisoned, "c.py", StaticPolicy())}


@pytest.mark.parametrize(("body", "aten"), [
    ("    auto y = addmm(out, x, w.t());", True),  # argument-dependent lookup finds at::addmm
    ("    auto y = softmax(x, 1);", True),
    ("    auto y = empty_like(x);", False),  # allocation, as at::empty_like
    ("    auto y = twice(x);", False),  # the candidate's own function, declared below
    ("    auto y = halve(x);", False),  # the candidate's own macro
    ("    const int64_t m = max(batch_size, out_features);", False),  # no tensor argument
])
def test_an_unqualified_call_with_a_tensor_argument_is_judged_as_the_aten_function_it_finds(body, aten):
    src = _candidate(body).replace('src = r"""\n#include <torch/extension.h>\n',
                                   'src = r"""\n#include <torch/extension.h>\n#define halve(t) (t)\n'
                                   'torch::Tensor twice(torch::Tensor t);\n')
    rules = {f.rule for f in analyze_candidate(src, "c.py", StaticPolicy()) if f.severity == "reject"}
    assert ("aten-compute-in-extension" in rules) is aten, (body, rules)


def test_a_namespace_named_by_a_macro_and_a_pasted_aten_name_are_aten_compute():
    src = _candidate("    auto y = KM_OP(add)(out, x, w.t());").replace(
        '#include <torch/extension.h>\n', '#include <torch/extension.h>\n#define KM_NS at\n'
        '#define KM_OP(kind) KM_NS::kind##mm\n#define KM_DTYPE(T) at::k##T\n')
    findings = [f for f in analyze_candidate(src, "c.py", StaticPolicy()) if f.rule == "aten-compute-in-extension"]
    assert len(findings) == 1 and "token pasting" in findings[0].message, findings
