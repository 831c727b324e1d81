"""Lean CUDA units (`kmworker/lean_unit.py` through `nvcc_split`): a model-style unit compiles against the torch
declarations it names into the object the unit as written gives, and a unit the prelude cannot serve is built as
written with nvcc's own diagnostics. Real nvcc (CI has it) with this machine's torch headers; the units include no
CUDA header of torch's (a CPU wheel has none), so each as-written compile parses torch once (~25-60 s here)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from kernelmosaic.verify.sandbox.kmworker import build_steps, lean_unit, nvcc_split, unit_split

NVCC = shutil.which("nvcc")
pytestmark = [pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH"), pytest.mark.slow]

# What load_inline writes at the top of every CUDA unit, then the unit as a model writes it.
LOAD_INLINE_HEAD = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
MODEL_UNIT = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

template <typename scalar_t>
__global__ void scale_shift_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, scalar_t a,
                                   scalar_t b, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = x[i] * a + b;
}

torch::Tensor scale_shift_cuda(torch::Tensor x, double a, double b) {
    CHECK_INPUT(x);
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat64, "float tensors only");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 4096);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale_shift_cuda", [&] {
        scale_shift_kernel<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                                                          (scalar_t)a, (scalar_t)b, n);
    });
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "scale_shift_kernel: ", cudaGetErrorString(err));
    return y;
}

torch::Tensor row_sums_cuda(torch::Tensor x) {
    CHECK_INPUT(x);
    auto out = torch::zeros({x.size(0)}, x.options());
    return out.add_(x.sum(1));
}
"""
# ATen.h is an umbrella too; a global context call needs more than the prelude declares (the build falls back).
NEEDS_MORE = "#include <ATen/ATen.h>\nbool deterministic() { return at::globalContext().deterministicAlgorithms(); }\n"
REFUSED = "#include <ATen/ATen.h>\n__global__ void k(float* p) { p[threadIdx.x] = 1.0f }\n"  # no `;`


def _flags() -> list[str]:
    from torch.utils.cpp_extension import include_paths

    inc = [w for p in include_paths() for w in ("-isystem", p)]
    return [*inc, "-isystem", sysconfig.get_paths()["include"], "-DTORCH_EXTENSION_NAME=km_lean",
            "-DTORCH_API_INCLUDE_EXTENSION_H", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr",
            "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "-fPIC", "-std=c++17", "-O3"]


def _build(folder: Path, source: str, lean: bool, name: str = "cuda.cu") -> subprocess.CompletedProcess:
    (folder / name).write_text(source)
    env = {**os.environ, nvcc_split.REAL_NVCC: NVCC, lean_unit.SWITCH: "1" if lean else "0",
           unit_split.SWITCH: "0"}  # the lean unit itself (test_unit_split.py: the unit built as two first)
    args = ["--generate-dependencies-with-compile", "--dependency-output", "cuda.cuda.o.d", "-c", str(folder / name),
            "-o", "cuda.cuda.o", *_flags(), *build_steps.nvcc_time_flags(folder)]
    return subprocess.run([sys.executable, "-I", nvcc_split.__file__, *args], cwd=folder, capture_output=True,
                          text=True, env=env, timeout=600)


def _defined(obj: Path) -> list[str]:
    """The object's defined text symbols (the unit's functions, kernels and their stubs), demangled."""
    out = subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    rows = [line.split(" ", 2) for line in out.splitlines() if " T " in line or " W " in line]
    return sorted(r[2] for r in rows if "scale_shift" in r[2] or "row_sums" in r[2])


def _phases(folder: Path) -> set[str]:
    return set(build_steps.steps(folder))


def test_a_model_style_unit_builds_lean_into_the_functions_the_unit_as_written_defines(tmp_path):
    lean, full = tmp_path / "lean", tmp_path / "full"
    lean.mkdir()
    full.mkdir()
    built = _build(lean, LOAD_INLINE_HEAD + MODEL_UNIT, lean=True)
    assert built.returncode == 0, built.stderr[-3000:]
    phases = _phases(lean)
    assert "nvcc:lean cicc" in phases and "nvcc:cicc" not in phases  # the lean unit alone was compiled
    assert "warning" not in built.stderr  # the prelude adds no diagnostics of its own
    as_written = _build(full, LOAD_INLINE_HEAD + MODEL_UNIT, lean=False)
    assert as_written.returncode == 0, as_written.stderr[-3000:]
    assert _defined(lean / "cuda.cuda.o") == _defined(full / "cuda.cuda.o")
    assert any("scale_shift_cuda(at::Tensor, double, double)" in s for s in _defined(lean / "cuda.cuda.o"))
    deps = (lean / "cuda.cuda.o.d").read_text()
    assert deps.split(":", 1)[0].strip() == "cuda.cuda.o" and "ATen/core/Tensor.h" in deps


def test_a_unit_the_prelude_cannot_serve_is_built_as_written(tmp_path):
    built = _build(tmp_path, NEEDS_MORE, lean=True)
    assert built.returncode == 0, built.stderr[-3000:]
    phases = _phases(tmp_path)
    assert "nvcc:lean cicc" in phases or "nvcc:lean gcc (preprocessing 4)" in phases  # tried first...
    assert "nvcc:cicc" in phases  # ...then the unit as written
    assert "km-lean" not in built.stdout + built.stderr  # the lean attempt's output is not the build's
    assert "globalContext" in (tmp_path / "cuda.km-lean.log").read_text()  # why, kept beside it
    assert (tmp_path / "cuda.cuda.o").is_file()


def test_a_refused_unit_reports_nvccs_own_diagnostics_for_the_source_as_written(tmp_path):
    lean, plain = tmp_path / "lean", tmp_path / "plain"
    lean.mkdir()
    plain.mkdir()
    built = _build(lean, REFUSED, lean=True)
    (plain / "cuda.cu").write_text(REFUSED)
    nvcc = subprocess.run([NVCC, "-c", str(plain / "cuda.cu"), "-o", "cuda.cuda.o", *_flags()], cwd=plain,
                          capture_output=True, text=True, timeout=600)
    assert nvcc.returncode != 0 and built.returncode == nvcc.returncode
    assert built.stderr.replace(str(lean), "DIR") == nvcc.stderr.replace(str(plain), "DIR")
    assert not (lean / "cuda.cuda.o").exists()


def test_the_rewrite_keeps_every_line_where_the_source_has_it():
    ops = frozenset({"empty_like", "zeros", "sum", "add"})
    out = lean_unit.rewrite(LOAD_INLINE_HEAD + MODEL_UNIT, ops, "/b/cuda.cu")
    assert out is not None
    head, body = out.split('#line 1 "/b/cuda.cu"\n', 1)
    assert body.splitlines()[5:] == (LOAD_INLINE_HEAD + MODEL_UNIT).splitlines()[5:]  # after the blanked includes
    assert len(body.splitlines()) == len((LOAD_INLINE_HEAD + MODEL_UNIT).splitlines())
    assert "<torch/extension.h>" not in body and "<torch/types.h>" not in body
    included = set(re.findall(r"#include <ATen/ops/(\w+)\.h>", head))
    assert included == {"empty_like", "zeros", "sum"}  # named in the source; `add` only as `add_`


@pytest.mark.parametrize("source", [
    "#include <cuda_runtime.h>\n__global__ void k() {}\n",  # no torch umbrella: nothing to save
    LOAD_INLINE_HEAD + "PYBIND11_MODULE(m, mod) {}\n",
    LOAD_INLINE_HEAD + "TORCH_LIBRARY(ns, m) {}\n",
    LOAD_INLINE_HEAD + "auto t = torch::zeros({2}, torch::dtype(torch::kFloat).requires_grad(true));\n",
    LOAD_INLINE_HEAD + "torch::nn::functional::relu(x);\n",
    LOAD_INLINE_HEAD + "#include <torch/python.h>\n",
])
def test_units_the_prelude_cannot_serve_are_left_as_written(source):
    assert lean_unit.rewrite(source, frozenset({"zeros"}), "cuda.cu") is None
