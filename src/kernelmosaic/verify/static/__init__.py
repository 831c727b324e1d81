"""Static anti-reward-hacking analysis of a candidate (Python with ast, C++/CUDA with tree-sitter-cuda).

It runs before anything is compiled and answers: does forward run the candidate's own kernels, and does
the candidate reach for anything that could fake correctness or timing? See docs/threat-model-static.md.
"""

from kernelmosaic.verify.static.analyze import analyze_candidate
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.rules import RULES, Rule

__all__ = ["analyze_candidate", "StaticPolicy", "RULES", "Rule"]
