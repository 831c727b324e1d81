"""The math-spec language: a small tensor-index notation, its parser and its compiler to a PyTorch module."""

from kernelmosaic.tasks.spec.compiler import compile_program, compile_spec, load_spec_module
from kernelmosaic.tasks.spec.lexer import SpecError
from kernelmosaic.tasks.spec.nodes import Program
from kernelmosaic.tasks.spec.parser import parse_spec

__all__ = ["SpecError", "Program", "parse_spec", "compile_spec", "compile_program", "load_spec_module"]
