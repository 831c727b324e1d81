"""nvcc_split runs nvcc's own commands with the two front ends side by side: the same object, the same diagnostics
and exit status, the same dependency file, and nvcc itself for anything else. Needs the real nvcc (CI has it); the
units include no torch header, so each compile takes about a second."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelmosaic.verify.sandbox.kmworker import nvcc_split

NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc on PATH")

ARCH = ["-gencode=arch=compute_90,code=sm_90"]
GOOD = """
static __device__ int counter;
namespace { __device__ float table[4]; }
__global__ void body(const float* pa, float* po, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { po[i] = pa[i] + table[i & 3]; atomicAdd(&counter, 1); }
}
void launch(const float* a, float* o, int n) { body<<<(n + 255) / 256, 256>>>(a, o, n); }
"""
BROKEN = {
    "host_syntax": GOOD.replace("atomicAdd(&counter, 1);", "atomicAdd(&counter, 1)"),  # cudafe++ refuses it
    "device_only": "int hostfn(int x) { return x + 1; }\n"  # only the device side refuses it
                   "__global__ void body(int* po) { po[threadIdx.x] = hostfn(threadIdx.x); }\n",
    "missing_header": "#include <km_no_such_header.h>\n__global__ void body() {}\n",  # the preprocessors refuse it
}


def _split(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", nvcc_split.__file__, *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, nvcc_split.REAL_NVCC: NVCC, **env}, timeout=300)


def _nvcc(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([NVCC, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _symbols(obj: Path) -> list[str]:
    """nm's names and kinds, the translation unit's module id and temporary file names made neutral."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    rows = [re.sub(r"^[0-9a-f]{16} ", "", line) for line in out.splitlines()]
    rows = [re.sub(r"_[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}", "<module-id>", r) for r in rows]
    return sorted(re.sub(r"_GLOBAL__sub_I_\S+", "_GLOBAL__sub_I_<unit>", r) for r in rows)


def test_the_object_is_nvccs_and_the_front_ends_ran_apart(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    plain = _nvcc(["-c", "k.cu", "-o", "plain.o", *ARCH, "-O3"], tmp_path)
    split = _split(["-c", "k.cu", "-o", "split.o", *ARCH, "-O3", "-time", "t.csv"], tmp_path)
    assert plain.returncode == 0 and split.returncode == 0, split.stderr
    assert _symbols(tmp_path / "split.o") == _symbols(tmp_path / "plain.o")
    table = (tmp_path / "t.csv").read_text()
    phases = [row.split(",")[1].strip() for row in table.splitlines()[1:]]
    # the split wrote the table (nvcc's own run adds a driver row), every phase once
    assert sorted(phases) == sorted(["gcc (preprocessing 1)", "gcc (preprocessing 4)", "cudafe++", "cicc", "ptxas",
                                     "fatbinary", "gcc (compiling)"])


def test_the_plan_puts_cudafe_and_cicc_on_separate_chains(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    plan = nvcc_split.plan(NVCC, ["-c", str(tmp_path / "k.cu"), "-o", str(tmp_path / "k.o"), *ARCH],
                           tmp_path / "keep")
    assert plan is not None
    assert [s.phase for s in plan.host] == ["gcc (preprocessing 4)", "cudafe++"]
    assert [s.phase for s in plan.device] == ["gcc (preprocessing 1)", "cicc", "ptxas", "fatbinary"]
    assert plan.final.phase == "gcc (compiling)"
    assert "--gen_module_id_file" not in plan.host[1].command  # cudafe++ reads the id written first, as cicc does


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_refused_source_reads_as_nvccs_refusal(tmp_path, case):
    (tmp_path / "k.cu").write_text(BROKEN[case])
    plain = _nvcc(["-c", "k.cu", "-o", "plain.o", *ARCH], tmp_path)
    split = _split(["-c", "k.cu", "-o", "split.o", *ARCH], tmp_path)
    assert plain.returncode != 0
    assert split.returncode == plain.returncode
    assert split.stderr == plain.stderr and split.stdout == plain.stdout
    assert not (tmp_path / "split.o").exists()


def test_the_dependency_file_names_the_object_and_its_headers(tmp_path):
    (tmp_path / "k.cu").write_text('#include "local.cuh"\n' + GOOD)
    (tmp_path / "local.cuh").write_text("#pragma once\n")
    split = _split(["--generate-dependencies-with-compile", "--dependency-output", "k.o.d", "-c", "k.cu", "-o", "k.o",
                    *ARCH], tmp_path)
    assert split.returncode == 0, split.stderr
    deps = (tmp_path / "k.o.d").read_text()
    assert deps.split(":", 1)[0].strip() == "k.o"
    assert "k.cu" in deps and "local.cuh" in deps and "cuda_runtime.h" in deps


def test_anything_else_is_nvcc_itself(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    assert _split(["--version"], tmp_path).stdout == _nvcc(["--version"], tmp_path).stdout
    assert not nvcc_split._plain_compile(["-E", "k.cu", "-o", "k.ii"])
    assert not nvcc_split._plain_compile(["-c", "a.cu", "b.cu", "-o", "k.o"])
    off = _split(["-c", "k.cu", "-o", "k.o", *ARCH, "-time", "t.csv"], tmp_path, **{nvcc_split.SWITCH: "0"})
    assert off.returncode == 0
    assert "nvcc (driver)" in (tmp_path / "t.csv").read_text()  # the real nvcc wrote its own table
