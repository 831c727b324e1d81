"""Static anti-reward-hacking analysis of a candidate (Python with ast, C++/CUDA with tree-sitter-cuda).

It runs before anything is compiled and answers: does forward run the candidate's own kernels, and does
the candidate reach for anything that could fake correctness or timing? See docs/threat-model-static.md.
Names load lazily: the policy and the rule table (settings, `verify --explain`) need no parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__all__ = ["analyze_candidate", "StaticPolicy", "RULES", "Rule"]

_WHERE = {"analyze_candidate": "analyze", "StaticPolicy": "policy", "RULES": "rules", "Rule": "rules"}

if TYPE_CHECKING:
    from kernelmosaic.verify.static.analyze import analyze_candidate
    from kernelmosaic.verify.static.policy import StaticPolicy
    from kernelmosaic.verify.static.rules import RULES, Rule


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'kernelmosaic.verify.static' has no attribute {name!r}")
    return getattr(importlib.import_module(f"kernelmosaic.verify.static.{_WHERE[name]}"), name)
