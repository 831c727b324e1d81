"""The worker side imports only the standard library and torch (so it starts fast on a bare GPU image)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kernelmosaic.verify.pool import WORKER_PACKAGE_DIR

PROBE = """
import json, sys
import torch, torch.utils.cpp_extension, torch.profiler, torch.utils.flop_counter
before = {m.split('.')[0] for m in sys.modules}
import kmworker.__main__, kmworker.reference, kmworker.candidate, kmworker.compiler, kmworker.census
import kmworker.integrity, kmworker.timing, kmworker.inputs, kmworker.loader, kmworker.protocol, kmworker.profile_one
after = {m.split('.')[0] for m in sys.modules}
print(json.dumps(sorted(after - before - set(sys.stdlib_module_names))))
"""


def test_worker_package_imports_nothing_but_stdlib_and_torch():
    env = {**os.environ, "PYTHONPATH": str(WORKER_PACKAGE_DIR)}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["kmworker"]


def test_worker_path_holds_only_the_worker_package():
    entries = {p.name for p in WORKER_PACKAGE_DIR.iterdir() if p.name != "__pycache__"}
    assert entries == {"kmworker", "__init__.py"}
