"""Where a build's time went (issue 15: the critical path of a cold batch is one CUDA build): ninja's per-output
times and nvcc's per-phase times, read from the files the real tools leave in the build directory."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.sandbox.kmworker import build_steps

from .kit import PROBLEM_ADD_RELU, candidate, write

pytestmark = pytest.mark.slow


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_nvcc_phases_are_read_from_its_own_table_and_only_the_last_build_counts(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n")
    command = ["nvcc", "-arch=sm_90", *build_steps.nvcc_time_flags(tmp_path), "-c", "k.cu", "-o", "k.o"]
    for _ in range(2):  # nvcc appends to the table; the recorder deletes it before each build, as here
        (tmp_path / build_steps.NVCC_TIME).unlink(missing_ok=True)
        subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, timeout=300)
    got = build_steps.steps(tmp_path)
    assert {"nvcc:cudafe++", "nvcc:cicc", "nvcc:ptxas", "nvcc:gcc (compiling)"} <= set(got), got
    assert all(v >= 0 for v in got.values()) and got["nvcc:cicc"] > 0
    table = (tmp_path / build_steps.NVCC_TIME).read_text()
    assert table.count(", cicc ,") == 1  # one build's rows


def test_a_build_reports_its_ninja_steps_and_a_cache_hit_reports_none(tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=tmp_path / "cache", timing=False, static_checks=False)
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    first = write(tmp_path, "c0.py", candidate("return ext.add_relu(a, b)"))
    again = write(tmp_path, "c1.py", candidate("return ext.add_relu(a, b)") + "# the same extension\n")
    with Verifier(config) as verifier:
        built, hit = verifier.verify(problem, first), verifier.verify(problem, again)
    assert built.accepted and hit.accepted, (built.message, hit.message)
    steps = built.compile.steps
    assert steps["km_test_ext:main.o"] > 0 and "km_test_ext:km_test_ext.so" in steps, steps
    assert steps["km_test_ext:main.o"] <= built.compile.seconds
    assert hit.compile.cache_hit and hit.compile.steps == {}
