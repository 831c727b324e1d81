"""A candidate whose kernel is registered as an operator (`TORCH_LIBRARY`, `load_inline(..., is_python_module=False)`,
called through `torch.ops.NS.op`) is judged like any other: `load_inline` then returns the library's path, not a
module, which the verifier's build path must not treat as one (it raised `'str' object attribute 'capitalize'
is read-only`, a load failure of an honest candidate)."""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.verify import Status

from . import kit

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "static" / "legit_torch_library_op.py"

PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha: float = 2.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * x


def get_inputs():
    return [torch.randn(64, 33)]


def get_init_inputs():
    return []
'''


def test_an_operator_registered_with_torch_library_is_a_custom_kernel(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    verdict = cpu_verifier.verify(problem, FIXTURE, timing=False)
    assert verdict.status == Status.accepted, verdict.message
