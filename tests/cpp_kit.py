"""Problem modules and C++ `load_inline` candidates as text, for the tests that run the real CPU verifier.

Each folder's kit (agent/e2e_kit.py, sft/sft_kit.py, evaluate/eval_kit.py) names its own expressions and kernels;
this module writes them as files the same way. A kit keeps every working candidate on ONE extension source (they
differ only in the call `forward` makes), so the verifier's content-keyed build cache builds it once per session.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["problem", "candidate"]


def problem(expr: str, n: int = 1024) -> str:
    """A problem module whose `Model.forward(x)` returns `expr`, for x of shape (n,) drawn from a standard normal."""
    return f'''\
import torch
import torch.nn as nn

n = {n}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {expr}


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
'''


def candidate(extension: str, cpp: str, functions: Sequence[str], call: str) -> str:
    """A candidate that builds `cpp` as the extension `extension` (binding `functions`) and returns `ext.{call}`."""
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{cpp}"""

ext = load_inline(name="{extension}", cpp_sources=CPP, functions={list(functions)!r}, extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.{call}
'''
