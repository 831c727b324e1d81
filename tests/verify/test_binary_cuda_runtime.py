"""A CUDA extension links the CUDA runtime statically (nvcc's default), and the runtime itself calls `dlopen`,
`syscall`, `open` and `mprotect`: those calls are the runtime's, not the candidate's. The 2026-12-06 GPU run rejected
every honest CUDA build as `dynamic-code` for `syscall@GLIBC_2.2.5` until the candidate's own calls were read from the
objects compiled from its sources (`binary_check.build_calls`). Real nvcc builds, linked the way torch links them:
objects beside the shared object, the runtime archive linked into it. Needs nvcc (on this project's machines)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kernelmosaic.verify.binary_check import library_symbols, runtime_calls

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")

HONEST = r'''
#include <cuda_runtime.h>
__global__ void scale_kernel(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
extern "C" int scale(float* x, float s, int n) {
  scale_kernel<<<(n + 255) / 256, 256>>>(x, s, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

# the same kernel, and a raw system call the candidate makes itself (the clock, the reply channel: issue 36)
RAW_SYSCALL = HONEST.replace("#include <cuda_runtime.h>", "#include <cuda_runtime.h>\n#include <unistd.h>\n"
                             "#include <sys/syscall.h>").replace(
    "  return cudaGetLastError()", "  syscall(SYS_getpid);\n  return cudaGetLastError()")


def _build(folder: Path, source: str, keep_objects: bool = True) -> Path:
    folder.mkdir()
    (folder / "unit.cu").write_text(source)
    compile_ = ["nvcc", "-c", "-Xcompiler", "-fPIC", "unit.cu", "-o", "unit.o"]
    subprocess.run(compile_, cwd=folder, check=True, capture_output=True, timeout=300)
    subprocess.run(["nvcc", "-shared", "unit.o", "-o", "ext.so"], cwd=folder, check=True, capture_output=True, timeout=300)
    if not keep_objects:
        (folder / "unit.o").unlink()
    return folder / "ext.so"


def test_the_static_cuda_runtime_calls_are_not_the_candidates(tmp_path):
    runtime = runtime_calls()
    assert {"dlopen", "syscall"} <= runtime, "the toolkit's static runtime archive was not found or read"
    honest = _build(tmp_path / "honest", HONEST)
    # the library's own list has the runtime's calls (what the GPU run rejected) ...
    from kernelmosaic.verify.binary_check import _undefined
    assert "syscall" in {s.split("@")[0] for s in _undefined(honest)}
    assert library_symbols([honest]) == {}
    # ... and the candidate's own raw system call is still read from its object
    cheat = _build(tmp_path / "cheat", RAW_SYSCALL)
    assert library_symbols([cheat]) == {"dynamic-code": ["syscall"]}


def test_a_library_without_its_objects_is_judged_by_its_whole_list(tmp_path):
    lone = _build(tmp_path / "lone", HONEST, keep_objects=False)
    found = library_symbols([lone])
    assert "syscall" in {s.split("@")[0] for s in found.get("dynamic-code", [])}
