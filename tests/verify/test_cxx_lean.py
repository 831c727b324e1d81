"""The binding unit compiled lean (`kmworker/cxx_lean.py`, torch's ninja running `km-cxx` as its C++ compiler):
real `load_inline` builds on this machine's compiler and torch, each module called. A model-style C++ extension is
built from its lean form and gives torch's results (a tensor list argument included: the pybind11 type casters are
the umbrella header's); a unit the prelude cannot serve and a unit whose lean form fails are built as written; a
broken unit reports the compiler's own diagnostics for the unit as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelmosaic.verify.sandbox.kmworker import cxx_lean

pytestmark = pytest.mark.slow

# Written as models write a CPU extension: checks, a parallel loop, a factory function, a tensor list.
MODEL_CPP = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor leaky_relu(torch::Tensor x, double slope) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    at::parallel_for(0, xc.numel(), 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = in[i] > 0.f ? in[i] : in[i] * (float)slope;
    });
    return y;
}

torch::Tensor sum_all(std::vector<torch::Tensor> xs) {
    TORCH_CHECK(!xs.empty(), "no tensors");
    auto acc = torch::zeros_like(xs[0]);
    for (auto& t : xs) acc.add_(t);
    return acc;
}
"""


def _load(tmp_path: Path, name: str, source: str, functions: list[str], monkeypatch, switch: str = "1"):
    from torch.utils.cpp_extension import load_inline

    monkeypatch.setenv("CXX", str(cxx_lean.WRAPPER))
    monkeypatch.setenv(cxx_lean.REAL_CXX, "c++")
    monkeypatch.setenv("KM_CXX_PYTHON", sys.executable)
    monkeypatch.setenv(cxx_lean.SWITCH, switch)
    folder = tmp_path / name
    folder.mkdir()
    return load_inline(name, source, functions=functions, build_directory=str(folder)), folder


def test_a_model_style_extension_is_built_lean_and_gives_torchs_results(tmp_path, monkeypatch):
    ext, folder = _load(tmp_path, "km_cxx_lean_model", MODEL_CPP, ["leaky_relu", "sum_all"], monkeypatch)
    assert (folder / ("main" + cxx_lean.LEAN_SUFFIX)).is_file() and not (folder / "main.km-lean.log").exists()
    lean = (folder / ("main" + cxx_lean.LEAN_SUFFIX)).read_text()
    assert "<torch/extension.h>" not in lean.split("#line 1", 1)[1] and "ATen/Parallel.h" in lean
    x = torch.randn(10_000)
    torch.testing.assert_close(ext.leaky_relu(x, 0.1), torch.nn.functional.leaky_relu(x, 0.1))
    parts = [torch.randn(7, 3) for _ in range(3)]
    torch.testing.assert_close(ext.sum_all(parts), parts[0] + parts[1] + parts[2])
    with pytest.raises(RuntimeError, match="float32 only"):  # TORCH_CHECK through torch's error translation
        ext.leaky_relu(x.double(), 0.1)


def test_a_unit_the_prelude_cannot_serve_is_built_as_written(tmp_path, monkeypatch):
    source = ("#include <torch/extension.h>\n"
              "torch::Tensor act(torch::Tensor x) { return torch::nn::functional::relu(x); }\n")
    ext, folder = _load(tmp_path, "km_cxx_lean_nn", source, ["act"], monkeypatch)
    assert not (folder / ("main" + cxx_lean.LEAN_SUFFIX)).exists()  # torch::nn: never tried lean
    x = torch.randn(100)
    torch.testing.assert_close(ext.act(x), x.relu())


def test_a_lean_form_that_fails_falls_back_to_the_unit_as_written(tmp_path, monkeypatch):
    # at::get_num_interop_threads() is declared by ATen/Parallel.h, which the prelude includes only for the names it
    # maps (`parallel_for`, `get_num_threads`, ...)
    source = ("#include <torch/extension.h>\n"
              "int64_t threads() { return at::get_num_interop_threads(); }\n")
    ext, folder = _load(tmp_path, "km_cxx_lean_threads", source, ["threads"], monkeypatch)
    assert "get_num_interop_threads" in (folder / "main.km-lean.log").read_text()
    assert ext.threads() == torch.get_num_interop_threads()


def test_tensor_arithmetic_in_host_code_builds_lean(tmp_path, monkeypatch):
    """ATen's operators on tensors and scalars (`x - mean`, `var * 0.5`, a comparison) are in the lean prelude: a
    batch-norm style host function builds lean (no fallback log) and computes what PyTorch does."""
    source = ("#include <torch/extension.h>\n"
              "torch::Tensor norm(torch::Tensor x) {\n"
              "  auto mean = x.mean(0); auto var = (x - mean).pow(2).mean(0);\n"
              "  auto unbiased = var * (static_cast<double>(x.size(0)) / (x.size(0) - 1));\n"
              "  return ((x - mean) / (unbiased + 1e-5).sqrt()) * (x > -100.0);\n}\n")
    ext, folder = _load(tmp_path, "km_cxx_lean_ops", source, ["norm"], monkeypatch)
    assert not (folder / "main.km-lean.log").exists() and (folder / "main.km-lean.cpp").is_file()
    x = torch.randn(16, 5)
    torch.testing.assert_close(ext.norm(x), (x - x.mean(0)) / (x.var(0) + 1e-5).sqrt())


def test_a_broken_unit_reports_the_compilers_own_diagnostics(tmp_path, monkeypatch):
    source = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x.relu() }\n"  # no `;`
    with pytest.raises(RuntimeError) as failed:
        _load(tmp_path, "km_cxx_lean_broken", source, ["f"], monkeypatch)
    shown = str(failed.value)  # the build's output (torch puts it in the error): the unit as written, never lean
    log = (tmp_path / "km_cxx_lean_broken" / "main.km-lean.log").read_text()
    error = next(line.split("error:", 1)[1] for line in log.splitlines() if "error:" in line)
    assert "expected" in error and "/main.cpp:3:" in log  # the lean attempt failed at the source's own line ...
    # ... and the build reported the compile of the unit as written (its own run of the compiler), the same error
    assert "km-lean" not in shown and error in shown and "/main.cpp:3:" in shown


def test_the_precompiled_torch_header_is_swapped_for_the_lean_one_or_dropped(tmp_path):
    (tmp_path / "km_torch_extension.h").write_text("")
    args = ["-O3", "-include", str(tmp_path / "km_torch_extension.h"), "-Winvalid-pch", "-c", "main.cpp"]
    assert cxx_lean._header_swapped(args) == ["-O3", "-Winvalid-pch", "-c", "main.cpp"]
    (tmp_path / (cxx_lean.BINDING_HEADER + ".gch")).write_text("")
    assert cxx_lean._header_swapped(args) == ["-O3", "-include", str(tmp_path / cxx_lean.BINDING_HEADER),
                                              "-Winvalid-pch", "-c", "main.cpp"]


def test_anything_but_a_compile_is_the_real_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv(cxx_lean.REAL_CXX, "c++")
    out = subprocess.run([str(cxx_lean.WRAPPER), "-dumpfullversion"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", cxx_lean.REAL_CXX: "c++", "KM_CXX_PYTHON": sys.executable})
    real = subprocess.run(["c++", "-dumpfullversion"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == real.stdout
