"""Return types of the functions an extension binds for Python, read from its C++ with tree-sitter-cuda.

An extension function declared `int64_t workspace_size(int64_t n)` hands Python an int, not a tensor: arithmetic
on what it returns is size arithmetic, never PyTorch compute.
"""

from __future__ import annotations

import re

import tree_sitter
import tree_sitter_cuda

from kernelmosaic.verify.static.cuda_tensors import iter_nodes
from kernelmosaic.verify.static.sources import Extension

__all__ = ["scalar_functions"]

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
# Types whose value reaches Python as an int, float, bool, None or a list of numbers.
_SCALAR = re.compile(r"^(?:const\s+)?(?:(?:std::)?u?int(?:8|16|32|64)_t|(?:unsigned\s+|signed\s+)?(?:int|long|long\s+long|"
                     r"short|char)|unsigned|(?:std::)?size_t|int64_t|double|float|bool|void|c10::SymInt|"
                     r"std::vector<\s*(?:(?:std::)?u?int(?:32|64)_t|int|long|double|float|(?:std::)?size_t|bool)\s*>)$")
_PYBIND_DEF = re.compile(r"\.def\s*\(\s*\"(\w+)\"\s*,\s*&?\s*([\w:]+)")


def _signatures(text: str) -> dict[str, str]:
    """C++ function name -> its declared return type, for every definition and declaration in `text`."""
    out: dict[str, str] = {}
    src = text.encode()
    for node in iter_nodes(_PARSER.parse(src).root_node):
        if node.type not in ("function_definition", "declaration"):
            continue
        typ = node.child_by_field_name("type")
        decl = node.child_by_field_name("declarator")
        if typ is None or decl is None or decl.type != "function_declarator":
            continue  # a pointer or reference return (`Tensor& f(...)`) keeps its declarator wrapped: not scalar
        name = decl.child_by_field_name("declarator")
        if name is None:
            continue
        qualifiers = " ".join(src[c.start_byte:c.end_byte].decode() for c in node.children if c.type == "type_qualifier")
        typ_text = src[typ.start_byte:typ.end_byte].decode()
        out[src[name.start_byte:name.end_byte].decode().split("::")[-1]] = f"{qualifiers} {typ_text}".strip()
    return out


def scalar_functions(ext: Extension) -> set[str]:
    """Names Python calls on this extension whose C++ return type is not a tensor (ints, floats, sizes, void)."""
    text = ext.cpp.text + "\n" + ext.cuda.text
    sigs = _signatures(text)
    bound = {name: name for name in ext.functions}
    bound.update({py: cpp.split("::")[-1] for py, cpp in _PYBIND_DEF.findall(text)})
    return {py for py, cpp in bound.items() if cpp in sigs and _SCALAR.match(re.sub(r"\s+", " ", sigs[cpp]))}
