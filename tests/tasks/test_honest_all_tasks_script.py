"""`scripts/gpu/honest_all_tasks.py OUT SOURCE LEVELS` on a tiny KernelBench-layout checkout, on the CPU: a pair per
problem of the levels asked for, manifests by dtype, and candidates whose reference half is the problem's own model
(the custom CUDA half needs a GPU: `scripts/gpu/gpu-all-tasks` judges the pairs there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from tests.tasks.test_audit_kernelbench_script import PROBLEMS

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu" / "honest_all_tasks.py"
SRC = Path(__file__).resolve().parents[2] / "src"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def _module(source: str) -> dict:
    scope: dict = {"__name__": "km_pair"}
    exec(compile(source, "<pair>", "exec"), scope)  # noqa: S102 - our own problem files
    return scope


def test_a_pair_per_problem_of_the_levels_asked_for(tmp_path):
    for name, code in PROBLEMS.items():
        path = tmp_path / "kb" / "KernelBench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    done = _run(str(tmp_path / "out"), f"kernelbench:{tmp_path / 'kb'}", "1,2,3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "fp32: 4 pairs"
    rows = [json.loads(line) for line in (tmp_path / "out" / "fp32.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["kb_l1_1_scaledtanh", "kb_l1_2_zeroedrelu", "kb_l2_1_linearsigmoidscale",
                                             "kb_l3_1_twolayernet"]
    for row in rows:
        problem = (tmp_path / "out" / row["problem"]).read_text()
        candidate = (tmp_path / "out" / row["candidate"]).read_text()
        reference_half = candidate[: candidate.index("from torch.utils.cpp_extension import load_inline")]
        want, got = _module(problem), _module(reference_half)
        assert "Model" not in got and "class ModelNew(_KmReference)" in candidate
        torch.manual_seed(0)
        ref = want["Model"](*want["get_init_inputs"]())
        torch.manual_seed(0)
        mine = got["_KmReference"](*got["get_init_inputs"]())
        x = want["get_inputs"]()
        assert torch.equal(ref(*x), mine(*x)), row["id"]


def test_a_source_that_does_not_load_exits_2_naming_it(tmp_path):
    done = _run(str(tmp_path / "out"), f"kernelbench:{tmp_path / 'missing'}")
    assert done.returncode == 2 and "not a KernelBench checkout" in done.stderr and str(tmp_path) in done.stderr
    assert not (tmp_path / "out").exists()
