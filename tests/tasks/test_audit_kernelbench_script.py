"""`scripts/gpu/audit-kernelbench PATH` end to end on a tiny KernelBench-layout folder of our own problems (one of
them degenerate: its output is always zero), on the CPU; on a GPU the same script runs the references there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu" / "audit-kernelbench"

HEAD = "import torch\nimport torch.nn as nn\n\nbatch_size = 8\ndim = 64\n\n\n"
TAIL = ("\n\ndef get_inputs():\n    return [torch.randn(batch_size, dim)]\n\n\n"
        "def get_init_inputs():\n    return []\n")


def _problem(forward: str, init: str = "        pass") -> str:
    return (HEAD + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"{init}\n\n    def forward(self, x):\n        return {forward}\n" + TAIL)


PROBLEMS = {
    "level1/1_ScaledTanh.py": _problem("torch.tanh(x) * 1.5"),
    "level1/2_ZeroedRelu.py": _problem("torch.relu(x) * 0.0"),
    "level1/helpers.py": "X = 1\n",  # not a problem: no <id>_<Name>.py
    "level2/1_LinearSigmoidScale.py": _problem("torch.sigmoid(self.fc(x)) * 2.0",
                                               "        self.fc = nn.Linear(dim, 32)"),
    "level3/1_TwoLayerNet.py": _problem("self.fc2(torch.relu(self.fc1(x)))",
                                        "        self.fc1 = nn.Linear(dim, 48)\n        self.fc2 = nn.Linear(48, 16)"),
    "level4/1_NotAudited.py": _problem("x + 1.0"),
}


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OUT=str(tmp_path / "out"), KERNELMOSAIC_CACHE=str(tmp_path / "cache" / "build"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name, code in PROBLEMS.items():
        path = tmp_path / "kb" / "KernelBench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    return tmp_path / "kb"


def test_audits_levels_1_to_3_streaming_and_names_the_degenerate_problem(checkout: Path, tmp_path: Path) -> None:
    res = _run([str(checkout), "--jobs", "2"], tmp_path)
    assert res.returncode == 1, res.stderr  # one problem fails its audit
    out = tmp_path / "out"
    lines = [json.loads(line) for line in (out / "audits.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in lines) == ["kb_l1_1_scaledtanh", "kb_l1_2_zeroedrelu",
                                                   "kb_l2_1_linearsigmoidscale", "kb_l3_1_twolayernet"]
    assert {r["task_id"] for r in lines if not r["passed"]} == {"kb_l1_2_zeroedrelu"}
    summary = json.loads((out / "summary.json").read_text())
    assert [p["name"] for p in summary["failed"]["degeneracy"]] == ["2_ZeroedRelu"]
    assert "task-near-zero-output" in summary["failed"]["degeneracy"][0]["rules"]
    assert summary["tasks"] == 4 and summary["passed"] == 3 and set(summary["by_level"]) == {"1", "2", "3"}
    assert summary["devices"] == {"cpu": 4}
    md = (out / "summary.md").read_text()
    assert "## Degenerate problems (1)" in md and "L1 `2_ZeroedRelu`" in md and md in res.stdout
    # Every report was cached: a rerun with --reuse audits nothing again and says so.
    again = _run([str(checkout), "--reuse"], tmp_path)
    assert again.returncode == 1 and json.loads((out / "summary.json").read_text())["from_cache"] == 4


def test_an_unusable_path_exits_2_naming_it(tmp_path: Path) -> None:
    missing = _run([str(tmp_path / "nope")], tmp_path)
    assert missing.returncode == 2 and "nope" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = _run([str(tmp_path / "empty")], tmp_path)
    assert empty.returncode == 2 and "not a KernelBench checkout" in " ".join(empty.stderr.split())
