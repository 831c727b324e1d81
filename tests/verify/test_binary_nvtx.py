"""NVTX's loader is the toolkit's, not the candidate's (`verify/binary_check.py`). CUB and Thrust include NVTX, whose
header defines, in every unit that uses it, versioned loader functions calling `dlopen`/`dlsym`/`dlclose`: an honest
CUB block reduction (the corpus's kb_l1_037 cub_double_atomics) was rejected as `dynamic-code` on the H100
(2026-12-07). Those calls are NVTX's only when every function making them is one of its loader functions and the
object holds NVTX's globals; a `dlopen` of the candidate's own, beside NVTX or in a function named like NVTX's
loader, still counts. Real objects and libraries, built here with the host compiler from NVTX's own header."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kernelmosaic.verify.binary_check import build_calls


def _nvtx_include() -> Path | None:
    nvcc = shutil.which("nvcc")
    roots = [Path(nvcc).resolve().parent.parent] if nvcc else []
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        for sub in ("include", "targets/x86_64-linux/include"):
            if (root / sub / "nvtx3" / "nvToolsExt.h").is_file():
                return root / sub
    return None


INCLUDE = _nvtx_include()
pytestmark = pytest.mark.skipif(INCLUDE is None or shutil.which("c++") is None,
                                reason="needs the CUDA toolkit's NVTX headers and a host C++ compiler")

WITH_NVTX = """
#include <nvtx3/nvToolsExt.h>
void scale(float* y, const float* x, long n, float a) {
    nvtxRangePushA("scale");
    for (long i = 0; i < n; ++i) y[i] = a * x[i];
    nvtxRangePop();
}
"""

# a dlopen of the candidate's own behind an assembler label, beside NVTX's
OWN_OPEN = WITH_NVTX + """
extern "C" void* km_open(const char*, int) __asm__("dlopen");
void* find_blas() { return km_open("libopenblas.so.0", 1); }
"""

# a function named like one of NVTX's loader functions, without NVTX
NAMED_LIKE_NVTX = """
extern "C" void* km_open(const char*, int) __asm__("dlopen");
inline void* nvtxMarkA_impl_init_v3(const char* name) { return km_open(name, 1); }
void* use(const char* name) { return nvtxMarkA_impl_init_v3(name); }
"""


def _build(folder: Path, source: str) -> Path:
    """`source` as torch's build folder would hold it: the object beside the shared library linked from it."""
    folder.mkdir()
    (folder / "unit.cpp").write_text(source)
    subprocess.run(["c++", "-O2", "-fPIC", f"-I{INCLUDE}", "-c", "unit.cpp", "-o", "unit.o"], cwd=folder, check=True)
    subprocess.run(["c++", "-shared", "unit.o", "-o", "km_unit.so", "-ldl"], cwd=folder, check=True)
    return folder / "km_unit.so"


def _dl(calls: list[str]) -> set[str]:
    return {c.split("@")[0] for c in calls if c.split("@")[0].startswith("dl")}


def test_nvtx_loader_calls_are_the_toolkits(tmp_path):
    lib = _build(tmp_path / "nvtx", WITH_NVTX)
    undefined = subprocess.run(["nm", "--undefined-only", str(lib.parent / "unit.o")], capture_output=True, text=True)
    assert "dlopen" in undefined.stdout  # NVTX's loader does call it
    assert _dl(build_calls(lib)) == set()


def test_a_dlopen_of_the_candidates_own_beside_nvtx_still_counts(tmp_path):
    assert "dlopen" in _dl(build_calls(_build(tmp_path / "own", OWN_OPEN)))


def test_a_function_named_like_nvtxs_loader_without_nvtx_still_counts(tmp_path):
    assert "dlopen" in _dl(build_calls(_build(tmp_path / "named", NAMED_LIKE_NVTX)))


# a loader-shaped name NVTX's header does not define, beside NVTX
UNLISTED_NAME = WITH_NVTX + """
extern "C" void* km_open(const char*, int) __asm__("dlopen");
inline void* nvtxKmPanel_impl_init_v3(const char* name) { return km_open(name, 1); }
void* use(const char* name) { return nvtxKmPanel_impl_init_v3(name); }
"""


def test_a_loader_shaped_name_nvtx_does_not_define_still_counts(tmp_path):
    assert "dlopen" in _dl(build_calls(_build(tmp_path / "unlisted", UNLISTED_NAME)))
