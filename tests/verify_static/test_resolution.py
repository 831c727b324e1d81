"""Name and source resolution: the two places where a wrong answer would hide a rule violation."""

from __future__ import annotations

import ast

import pytest

from kernelmosaic.verify.static.pyscope import ModuleIndex
from kernelmosaic.verify.static.sources import find_extensions

IMPORTS = """
import torch as T
import torch.nn.functional as Fn
from torch import nn as N
from torch.nn import functional as F2
from torch import matmul as mm
import time as clock
alias = T.bmm
"""


@pytest.mark.parametrize(("expr", "dotted"), [
    ("T.matmul", "torch.matmul"),
    ("Fn.relu", "torch.nn.functional.relu"),
    ("N.Conv2d", "torch.nn.Conv2d"),
    ("F2.softmax", "torch.nn.functional.softmax"),
    ("mm", "torch.matmul"),
    ("clock.perf_counter", "time.perf_counter"),
    ("alias", "torch.bmm"),
    ('getattr(T, "exp")', "torch.exp"),
    ("exec", "builtins.exec"),
])
def test_names_resolve_through_imports_and_aliases(expr, dotted):
    idx = ModuleIndex.build(IMPORTS + f"probe = {expr}\n", "c.py")
    probe = idx.tree.body[-1]
    assert isinstance(probe, ast.Assign)
    assert idx.resolve(probe.value) == dotted


def test_local_variables_do_not_resolve_to_builtins():
    idx = ModuleIndex.build("def f(input, sum):\n    return sum(input)\n", "c.py")
    call = idx.tree.body[0].body[0].value
    assert idx.resolve(call.func) is None


def _sources(code: str):
    head = "from torch.utils.cpp_extension import load_inline\nimport textwrap\n"
    (ext,) = find_extensions(ModuleIndex.build(head + code, "c.py"))
    return ext


def test_sources_resolve_fstrings_format_percent_join_and_augassign():
    ext = _sources(
        "B = 128\n"
        "src = f'const int kB = {B};\\n'\n"
        "src += '{x}\\n'.format(x='int a;') + '%d\\n' % (7,)\n"
        "src += '\\n'.join(['int b;', 'int c;'])\n"
        "cu = textwrap.dedent('''\n    __global__ void k() {}\n''')\n"
        "load_inline(name='e', cpp_sources=src, cuda_sources=[cu], functions=['f'])\n")
    assert ext.opaque == []
    assert "const int kB = 128;" in ext.cpp.text and "int a;" in ext.cpp.text and "7" in ext.cpp.text
    assert "int b;\nint c;" in ext.cpp.text
    assert "__global__ void k() {}" in ext.cuda.text
    assert ext.functions == ["f"] and ext.name == "e"


def test_source_lines_map_back_to_the_candidate():
    ext = _sources("x = 1\nsrc = '''\nint a;\nint b;\n'''\nload_inline(name='e', cpp_sources=src)\n")
    offset = ext.cpp.text.index("int b;")
    assert ext.cpp.line_of(offset) == 6  # two header lines + `x = 1` + `src = '''` + `int a;`


@pytest.mark.parametrize("value", ["open('k.cu').read()", "''.join(chr(c) for c in [105])", "SRC", "f'{n}'"])
def test_unresolvable_sources_are_reported_opaque(value):
    ext = _sources(f"n = len([1])\nload_inline(name='e', cpp_sources={value})\n")
    assert ext.opaque and ext.cpp.text == ""
