"""The candidates of `bench_throughput.py`: KernelBench-format problems and candidates written by the project.

Three problems; per problem one extension source holds a correct, a slow and a wrong entry point, and a second
source does not compile. Candidates cycle through correct / slow / wrong / compile error, each with its own text
(a variant comment), so every candidate is a distinct file while the extensions are shared as an agent's variants
would share them. `device="cuda"` writes CUDA `load_inline` candidates and, for add+relu, Triton ones, and for both
problems fast-form ones (CuPy RawKernel on torch's current stream, built by NVRTC at import): correct, wrong, and one
that does its work with CuPy's library instead of its RawKernel (the naive harness accepts it; ours must not).
`EXPECTED` says which kinds our verifier should accept.

A module of bench_throughput.py, bench_warm.py, bench_profiles.py and gpu/gpu_ray_check.py; run those. Nothing
runs on its own.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["KINDS", "EXPECTED", "write_cases"]

KINDS = ("correct", "slow", "wrong", "compile_error")
EXPECTED = {"correct": True, "slow": True, "wrong": False, "compile_error": False, "fast_correct": True,
            "fast_wrong": False, "fast_library": False}
"""Kind -> whether our verifier should accept it (a slow candidate is correct, only slower)."""

PROBLEMS = {
    "add_relu": ("torch.relu(a + b)", "[torch.randn(1 << 16), torch.randn(1 << 16)]", "a, b"),
    "axpb": ("2.0 * a + b", "[torch.randn(1 << 16), torch.randn(1 << 16)]", "a, b"),
    "rowsum": ("a.sum(dim=1) + b", "[torch.randn(256, 512), torch.randn(256)]", "a, b"),
}

# C++ bodies per problem: (correct, slow, wrong) as expressions over float pointers pa, pb and index i / row r.
_CPP = {
    "add_relu": ("float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f;", "po[i] = pa[i] + pb[i];"),
    "axpb": ("po[i] = 2.0f * pa[i] + pb[i];", "po[i] = 2.0f * pa[i] - pb[i];"),
}

CPP_ELEMENTWISE = r"""
#include <torch/extension.h>
static void body(const float* pa, const float* pb, float* po, int64_t n, bool right) {
    for (int64_t i = 0; i < n; ++i) { if (right) { GOOD } else { BAD } }
}
torch::Tensor good(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel(), true);
    return out;
}
torch::Tensor slow(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    for (int rep = 0; rep < 8; ++rep) body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel(), true);
    return out;
}
torch::Tensor wrong(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel(), false);
    return out;
}
"""

CPP_ROWSUM = r"""
#include <torch/extension.h>
static void body(const float* pa, const float* pb, float* po, int64_t rows, int64_t cols, int64_t upto) {
    for (int64_t r = 0; r < rows; ++r) { float s = 0.f; for (int64_t c = 0; c < upto; ++c) s += pa[r * cols + c]; po[r] = s + pb[r]; }
}
torch::Tensor good(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty({a.size(0)}, a.options());
    body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.size(0), a.size(1), a.size(1));
    return out;
}
torch::Tensor slow(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty({a.size(0)}, a.options());
    for (int rep = 0; rep < 8; ++rep) body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.size(0), a.size(1), a.size(1));
    return out;
}
torch::Tensor wrong(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty({a.size(0)}, a.options());
    body(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.size(0), a.size(1), a.size(1) - 1);
    return out;
}
"""

CUDA_ELEMENTWISE = r"""
#include <torch/extension.h>
__global__ void body(const float* pa, const float* pb, float* po, int64_t n, bool right) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) { if (right) { GOOD } else { BAD } }
}
static void launch(torch::Tensor a, torch::Tensor b, torch::Tensor out, bool right) {
    int64_t n = a.numel();
    body<<<(unsigned)((n + 255) / 256), 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n, right);
}
torch::Tensor good(torch::Tensor a, torch::Tensor b) { auto out = torch::empty_like(a); launch(a, b, out, true); return out; }
torch::Tensor slow(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    for (int rep = 0; rep < 8; ++rep) launch(a, b, out, true);
    return out;
}
torch::Tensor wrong(torch::Tensor a, torch::Tensor b) { auto out = torch::empty_like(a); launch(a, b, out, false); return out; }
"""

DECLS = "torch::Tensor good(torch::Tensor a, torch::Tensor b);\ntorch::Tensor slow(torch::Tensor a, torch::Tensor b);\n" \
        "torch::Tensor wrong(torch::Tensor a, torch::Tensor b);"

TRITON = '''\
import torch
import torch.nn as nn
import triton
import triton.language as tl
# variant {k}


@triton.jit
def _add_relu(a_ptr, b_ptr, o_ptr, n, REPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    tl.store(o_ptr + offs, tl.maximum(v, 0.0) if REPS > 0 else v, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        _add_relu[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), REPS={reps}, BLOCK=1024)
        return out
'''


FAST = '''\
import cupy as cp
import torch
import torch.nn as nn
# variant {k}

SRC = r"""
extern "C" __global__ void body(const float* a, const float* b, float* o, long long n) {{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{ {body} }}
}}
"""
body = cp.RawKernel(SRC, "body")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n = a.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            body(((n + 255) // 256,), (256,), (a.data_ptr(), b.data_ptr(), out.data_ptr(), cp.int64(n)))
{tail}        return out
'''
# The library cheat: the RawKernel only adds; CuPy's own ufunc applies the rest in place.
_FAST_LIBRARY_TAIL = ("        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):\n"
                      "            view = cp.from_dlpack(out)\n            {op}\n")
_FAST_BODIES = {"add_relu": ("o[i] = a[i] + b[i] > 0.f ? a[i] + b[i] : 0.f;", "o[i] = a[i] + b[i];",
                             "cp.maximum(view, 0, out=view)"),
                "axpb": ("o[i] = 2.0f * a[i] + b[i];", "o[i] = 2.0f * a[i] - b[i];", "")}


_FAST_SLOTS = {2: "fast_correct", 6: "fast_wrong", 10: "fast_library", 14: "fast_correct"}
"""k % 16 -> fast-form kind: add+relu at 2 and 10, axpb at 6 and 14 (the problem cycles every four candidates)."""


def _fast(problem: str, kind: str, k: int) -> str:
    good, bad, library_op = _FAST_BODIES[problem]
    if kind == "fast_library" and problem == "add_relu":
        return FAST.format(k=k, body=bad, tail=_FAST_LIBRARY_TAIL.format(op=library_op))
    if kind == "fast_library":  # 2a + b: the kernel computes a + b, CuPy adds the other a
        tail = ("        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):\n"
                "            view = cp.from_dlpack(out)\n            cp.add(view, cp.from_dlpack(a), out=view)\n")
        return FAST.format(k=k, body="o[i] = a[i] + b[i];", tail=tail)
    return FAST.format(k=k, body=good if kind == "fast_correct" else bad, tail="")


def _problem(name: str) -> str:
    expr, inputs, args = PROBLEMS[name]
    return (f"import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, {args}):\n"
            f"        return {expr}\n\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")


def _source(problem: str, device: str, broken: bool) -> str:
    if problem == "rowsum" and device == "cpu":
        src = CPP_ROWSUM
    else:
        good, bad = _CPP.get(problem, _CPP["add_relu"])
        src = (CUDA_ELEMENTWISE if device == "cuda" else CPP_ELEMENTWISE).replace("GOOD", good).replace("BAD", bad)
    return src.replace("return out;\n}\n", "return out  // missing semicolon\n}\n", 1) if broken else src


def _candidate(problem: str, device: str, kind: str, k: int, distinct: bool = False) -> str:
    broken = kind == "compile_error"
    src = _source(problem, device, broken)
    fn = {"correct": "good", "slow": "slow", "wrong": "wrong", "compile_error": "good"}[kind]
    name = f"km_bench_{problem}_{device}{'_broken' if broken else ''}"
    if distinct:  # the variant inside the extension's source: every candidate is its own build, in any harness
        src, name = f"// variant {k}\n{src}", f"{name}_v{k}"
    if device == "cuda":
        build = f'ext = load_inline(name="{name}", cpp_sources=DECLS, cuda_sources=SRC, functions=["good", "slow", "wrong"])'
        head = f'DECLS = """{DECLS}"""\n'
    else:
        build = f'ext = load_inline(name="{name}", cpp_sources=SRC, functions=["good", "slow", "wrong"], extra_cflags=["-O2"])'
        head = ""
    return (f'import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n# variant {k}\n\n'
            f'{head}SRC = r"""{src}"""\n\n{build}\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n'
            f"        return ext.{fn}(a, b)\n")


def write_cases(root: Path, device: str, count: int, distinct: bool = False) -> list[tuple[str, Path, Path, str]]:
    """(id, problem, candidate, kind) for `count` candidates under `root`. `distinct`: every `load_inline`
    candidate's extension source differs (as an agent's successive kernels do), so nothing is built twice; otherwise
    the candidates of a problem share one extension source and differ only in their Python."""
    problems = list(PROBLEMS) if device == "cpu" else ["add_relu", "axpb"]
    out = []
    for name in problems:
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "problem.py").write_text(_problem(name))
    for k in range(count):
        kind, problem = KINDS[k % len(KINDS)], problems[(k // len(KINDS)) % len(problems)]
        if device == "cuda" and problem == "add_relu" and k % 8 in (0, 1):  # Triton: correct and wrong (no relu)
            text, kind = TRITON.format(k=k, reps=1 if k % 8 == 0 else 0), "correct" if k % 8 == 0 else "wrong"
        elif device == "cuda" and k % 16 in _FAST_SLOTS:  # the fast form, in place of some `wrong` candidates
            kind = _FAST_SLOTS[k % 16]
            text = _fast(problem, kind, k)
        else:
            text = _candidate(problem, device, kind, k, distinct)
        path = root / problem / f"candidate_{k:02d}_{kind}.py"
        path.write_text(text)
        out.append((f"{problem}/{path.stem}", root / problem / "problem.py", path, kind))
    return out


if __name__ == "__main__":  # a module: running it (with --help or not) shows what it is
    print(__doc__)
