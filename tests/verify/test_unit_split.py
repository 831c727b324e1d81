"""A CUDA unit compiled as two (`kmworker/unit_split.py` through `nvcc_split`): the cut itself on model-style units,
the launch lowering, the template instances, and real builds with nvcc (CI has it; the units include no CUDA header
of torch's, which a CPU wheel lacks): the split object defines what the unit as written defines, a unit that
cannot be cut is built lean, and a broken unit reports nvcc's own diagnostics for the source as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelmosaic.verify.sandbox.kmworker import build_steps, lean_unit, nvcc_split, unit_split

from .test_lean_unit import _flags  # torch's nvcc flags for a load_inline unit, as torch writes them

NVCC = shutil.which("nvcc")
HEAD = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline puts first

# Written as models write them: a templated functor kernel launched with deduced arguments, a dispatch over scalar
# types, a shared-memory reduction with a device helper, constants and checks shared by host and device code.
UNIT = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_INPUT(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
constexpr int kThreads = 256;  // used by kernels and launches alike
__host__ __device__ float clamp_unit(float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); }

struct Scale {
    float s;
    __device__ __forceinline__ float operator()(float v) const { return v * s; }
};

template <typename Op>
__global__ void map_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, Op op) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = op(x[i]) + 0.f * clamp_unit(x[i]);
}

template <typename scalar_t>
__global__ void shift_kernel(const scalar_t* x, scalar_t* y, scalar_t b, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = x[i] + b;
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

static __global__ void __launch_bounds__(kThreads) row_sum_kernel(const float* x, float* out, int cols) {
    extern __shared__ float partial[];
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += x[(int64_t)blockIdx.x * cols + c];
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < blockDim.x / 32; ++w) t += partial[w];
        out[blockIdx.x] = t;
    }
}

torch::Tensor scale(torch::Tensor x, double s) {
    CHECK_INPUT(x);
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    map_kernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n,
                                                             Scale{(float)s});
    return y;
}

torch::Tensor shift(torch::Tensor x, double b) {
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "shift", [&] {
        shift_kernel<scalar_t><<<128, kThreads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), (scalar_t)b,
                                                   x.numel());
    });
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "shift_kernel failed");
    return y;
}

torch::Tensor row_sums(torch::Tensor x) {
    auto out = torch::empty({x.size(0)}, x.options());
    cudaStream_t stream = 0;
    row_sum_kernel<<<(unsigned)x.size(0), kThreads, (kThreads / 32) * sizeof(float), stream>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), (int)x.size(1));
    return out;
}
"""


def test_the_cut_puts_kernels_and_device_code_apart_from_torch():
    units = unit_split.split(HEAD + UNIT, "/b/cuda.cu")
    assert units is not None
    assert units.kernels == {"map_kernel", "shift_kernel", "row_sum_kernel"}
    assert units.templates == {"map_kernel", "shift_kernel"}
    device, host = units.device, units.host
    assert "torch/" not in device and "torch::" not in device  # no torch header, no host function
    assert "__device__ float warp_sum" in device and "warp_sum" not in host  # device-only code stays there
    assert "constexpr int kThreads" in device and "constexpr int kThreads" in host  # shared by both
    assert "struct Scale" in device and "struct Scale" in host
    assert "static __host__ __device__ float clamp_unit" in host  # the device object's copy is the external one
    assert "static __global__" not in device  # the host object names the kernel: external linkage
    assert "<<<" not in host and "__syncthreads" not in host  # launches lowered, kernel bodies gone
    assert re.search(r"template <typename Op>\s*__global__ void map_kernel\([^)]*\);", host)
    assert "((__cudaPushCallConfiguration((n + kThreads - 1) / kThreads, kThreads)) ? (void)0 : map_kernel(" in host
    assert "shift_kernel<scalar_t>(x.data_ptr<scalar_t>()" in host
    assert '#line 9 "/b/cuda.cu"' in device  # diagnostics of a compile that fails name the source's lines


@pytest.mark.parametrize("source", [
    HEAD + "__constant__ float w[4];\n__global__ void k(float* x) { x[0] = w[0]; }\n"
           "void f(float* x) { k<<<1, 1>>>(x); }\n",  # device memory named from host code
    HEAD + "namespace { __global__ void k(float* x) {} }\nvoid f(float* x) { k<<<1, 1>>>(x); }\n",  # internal
    HEAD + "__global__ void child(float* x) {}\n__global__ void k(float* x) { child<<<1, 1>>>(x); }\n"
           "void f(float* x) { k<<<1, 1>>>(x); }\n",  # a launch from device code
    HEAD + "#include <thrust/sort.h>\n__global__ void k(float* x) {}\nvoid f(float* x) { k<<<1, 1>>>(x); }\n",
    HEAD + "__global__ void k(float* x) {}\nPYBIND11_MODULE(m, mod) {}\n",
    HEAD + "__global__ void k(float* x) {}\nvoid f(float* x) { auto g = [] __device__ (float v) { return v; }; }\n",
    HEAD + "void f(float* x) { cudaMemset(x, 0, 4); }\n",  # no kernel: nothing to cut
    HEAD + "#define KERNEL(n) __global__ void n(float* p) { *p = 0.f; }\nKERNEL(zero)\n"
           "void f(float* x) { zero<<<1, 1>>>(x); }\n",  # a kernel made by a macro: its body is host-compilable
])
def test_units_that_cannot_be_cut_are_left_whole(source):
    assert unit_split.split(source, "cuda.cu") is None


def test_launches_keep_every_configuration_and_argument():
    text = ("void f() {\n  ns::k<float, 4> <<< dim3(g, 2), b >>> (p, q(1, 2));\n"
            "  k2<<<g, b, s * sizeof(float), at::cuda::getCurrentCUDAStream()>>>(x); /* k<<<1,1>>>() */\n}\n")
    out = unit_split.launches(text)
    assert out is not None
    assert "((__cudaPushCallConfiguration(dim3(g, 2), b)) ? (void)0 : ns::k<float, 4>(p, q(1, 2)))" in out
    assert ("((__cudaPushCallConfiguration(g, b, s * sizeof(float), at::cuda::getCurrentCUDAStream())) ? (void)0 : "
            "k2(x))") in out
    assert "/* k<<<1,1>>>() */" in out  # a comment is not a launch
    assert unit_split.launches("void f() { k<<<1, 1>>>; }") is None  # no argument list


@pytest.mark.parametrize(("demangled", "base"), [
    ("void ns::k<float, 4>(float const*, int)", "k"),
    ("shift_kernel(float*, long)", "shift_kernel"),
    ("at::Tensor::data_ptr<float>() const", "data_ptr"),
    ("void map_kernel<Scale>(float const*, float*, long, Scale)", "map_kernel"),
])
def test_base_names(demangled, base):
    assert unit_split.base_name(demangled) == base


def test_instantiations_are_written_back_or_refused():
    pairs = [("_Z1", "void map_kernel<Scale>(float const*, float*, long, Scale)"),
             ("_Z2", "row_sum_kernel(float const*, float*, int)")]
    assert unit_split.instantiations(pairs, {"map_kernel"}) == [
        "template __global__ void map_kernel<Scale>(float const*, float*, long, Scale);"]
    lam = [("_Z3", "void map_kernel<f(at::Tensor)::{lambda(float)#1}>(float const*, float*, long, "
                   "f(at::Tensor)::{lambda(float)#1})")]
    assert unit_split.instantiations(lam, {"map_kernel"}) is None


# --- real builds --------------------------------------------------------------------------------------------------

def _build(folder: Path, source: str, units: bool = True, lean: bool = True) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cuda.cu").write_text(source)
    env = {**os.environ, nvcc_split.REAL_NVCC: NVCC or "nvcc", unit_split.SWITCH: "1" if units else "0",
           lean_unit.SWITCH: "1" if lean else "0"}
    args = ["--generate-dependencies-with-compile", "--dependency-output", "cuda.cuda.o.d", "-c",
            str(folder / "cuda.cu"), "-o", "cuda.cuda.o", *_flags(), *build_steps.nvcc_time_flags(folder)]
    return subprocess.run([sys.executable, "-I", nvcc_split.__file__, *args], cwd=folder, capture_output=True,
                          text=True, env=env, timeout=900)


def _symbols(obj: Path) -> set[str]:
    """The object's host functions and kernels (stubs) by demangled name, templates' instances included (not the
    host compiler's outlined `[clone .cold]` parts, which follow its inlining choices)."""
    out = subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    names = {line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2 and "[clone" not in line}
    wanted = ("scale(", "shift(", "row_sums(", "map_kernel<", "shift_kernel<", "row_sum_kernel(")
    return {n for n in names if n.startswith(wanted) or n.startswith(tuple("void " + w for w in wanted))}


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
def test_a_model_style_unit_builds_as_two_into_what_the_lean_unit_defines(tmp_path):
    split, lean = tmp_path / "split", tmp_path / "lean"
    built = _build(split, HEAD + UNIT)
    assert built.returncode == 0, built.stderr[-3000:]
    phases = set(build_steps.steps(split))
    assert "nvcc:units device cicc" in phases and not any(p.startswith("nvcc:lean") for p in phases), phases
    assert not (split / "cuda.km-units.log").exists()
    whole = _build(lean, HEAD + UNIT, units=False)
    assert whole.returncode == 0, whole.stderr[-3000:]
    got, want = _symbols(split / "cuda.cuda.o"), _symbols(lean / "cuda.cuda.o")
    assert {"scale(at::Tensor, double)", "shift(at::Tensor, double)", "row_sums(at::Tensor)"} <= got
    # every kernel and template instance the unit as written has: the functor's, both dispatched scalar types
    assert {"void map_kernel<Scale>(float const*, float*, long, Scale)",
            "void shift_kernel<float>(float const*, float*, float, long)",
            "void shift_kernel<double>(double const*, double*, double, long)"} <= got
    assert want <= got, want - got
    deps = (split / "cuda.cuda.o.d").read_text()
    assert deps.split(":", 1)[0].strip() == "cuda.cuda.o" and str(split / "cuda.cu") in deps
    assert "ATen/core/Tensor.h" in deps and unit_split.HOST_SUFFIX not in deps  # the unit as written, its headers


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
def test_a_unit_that_cannot_be_cut_is_built_lean(tmp_path):
    source = HEAD + "__constant__ float w[1];\n__global__ void k(float* x) { x[0] = w[0]; }\n" \
                    "void f(float* x) { k<<<1, 1>>>(x); }\n"
    built = _build(tmp_path, source)
    assert built.returncode == 0, built.stderr[-3000:]
    phases = set(build_steps.steps(tmp_path))
    assert "nvcc:lean cicc" in phases and not any(p.startswith("nvcc:units") for p in phases)


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")
def test_a_broken_unit_reports_nvccs_own_diagnostics_for_the_source_as_written(tmp_path):
    broken = HEAD + UNIT.replace("auto out = torch::empty({x.size(0)}, x.options());",
                                 "auto out = torch::empty({x.size(0)}, x.options())")  # no `;`
    built = _build(tmp_path / "a", broken)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "cuda.cu").write_text(broken)
    nvcc = subprocess.run([NVCC or "nvcc", "-c", str(plain / "cuda.cu"), "-o", "cuda.cuda.o", *_flags()], cwd=plain,
                          capture_output=True, text=True, timeout=900)
    assert nvcc.returncode != 0 and built.returncode == nvcc.returncode
    assert built.stderr.replace(str(tmp_path / "a"), "DIR") == nvcc.stderr.replace(str(plain), "DIR")
    assert "km-host" not in built.stderr and "__cudaPushCallConfiguration" not in built.stderr
    assert (tmp_path / "a" / "cuda.km-units.log").is_file()  # why the split did not build, kept beside it
