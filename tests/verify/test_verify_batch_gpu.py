"""`verify-batch` on CUDA (scripts/gpu/gpu-check): the CPU suite's failure modes with real CUDA candidates, plus an
illegal memory access and a kernel that never ends, in one batch over every visible GPU. Each gets its own
status, and the verdicts after each crash are unaffected."""

from __future__ import annotations

import json

import pytest
import torch

from kernelmosaic.verify import Status, VerifyConfig
from kernelmosaic.verify.batch import discover_pairs, run_batch

from . import gpu_kit as gk

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

_BOOM = "def boom():\n    raise RuntimeError('kernel exploded')\n"

CASES = [  # sorted by name = the order the batch takes them
    ("01_correct", gk.cuda_candidate("ext.add_relu(a, b)"), Status.accepted),
    ("02_wrong", gk.cuda_candidate("ext.add_relu(a, b) + 1"), Status.output_mismatch),
    ("03_python_syntax", gk.cuda_candidate("ext.add_relu(a, b"), Status.compile_error),
    ("04_no_modelnew", gk.cuda_candidate("ext.add_relu(a, b)").replace("class ModelNew", "class ModelOther"),
     Status.load_error),
    ("05_raises", gk.cuda_candidate("boom()", prelude=_BOOM), Status.runtime_error),
    ("06_illegal_access", gk.cuda_candidate("ext.out_of_bounds(a, b)"), Status.cuda_error),
    ("07_correct_after_illegal_access", gk.cuda_candidate("ext.add_relu(a, b)  # 07"), Status.accepted),
    ("08_kernel_never_ends", gk.cuda_candidate("ext.hang(a, b)"), Status.timeout),
    ("09_segfault", gk.cuda_candidate("ctypes.string_at(0)", prelude="import ctypes"), Status.crash),
    ("10_os_exit", gk.cuda_candidate("os._exit(3)", prelude="import os"), Status.crash),
    ("11_ten_terabytes", gk.cuda_candidate("torch.empty(10 << 40, dtype=torch.uint8, device=a.device)"),
     Status.resource_error),
    ("12_wrong_shape", gk.cuda_candidate("ext.add_relu(a, b)[:-1]"), Status.shape_mismatch),
    ("13_correct_again", gk.cuda_candidate("ext.add_relu(a, b)  # after every failure above"), Status.accepted),
]


def test_batch_on_every_gpu_gives_each_failure_its_status(build_cache, tmp_path):
    folder = tmp_path / "pairs" / "add_relu"
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(gk.PROBLEM_ADD_RELU)
    for name, source, _ in CASES:
        (folder / f"candidate_{name}.py").write_text(source)
    # runtime defences only (static checks would stop ctypes before it ran); a short run timeout for the hang
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing=False, static_checks=False,
                          run_timeout_s=30)
    out = tmp_path / "verdicts.jsonl"
    rows = list(run_batch(discover_pairs(tmp_path / "pairs"), config, out))
    got = {r["id"].split("candidate_", 1)[1]: r["verdict"] for r in rows}
    for name, _, expected in CASES:
        v = got[name]
        assert v["status"] == expected.value, f"{name}: {v['status']} {v['message']}"
        assert v["accepted"] == (expected == Status.accepted) and v["message"]
    assert "kernel exploded" in got["05_raises"]["message"]
    assert "ModelNew" in got["04_no_modelnew"]["message"]
    assert got["02_wrong"]["correctness"]["max_abs_error"] > 0
    assert {v["env"]["device"] for v in got.values() if v["accepted"]} == {"cuda"}
    assert len([json.loads(line) for line in out.read_text().splitlines()]) == len(CASES)
