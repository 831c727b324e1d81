"""Which C++ names hold tensors, so that `a * b` on two tensors is told apart from `n * 2` on sizes.

Typed from declarations only: a variable is a tensor when it is declared `Tensor` (any namespace, `const` and `&`
allowed) or declared `auto` from a tensor expression (an allocation, a view, ATen compute on a tensor). Everything
else — `int`, `int64_t`, `size_t`, `auto n = x.size(0)`, `x.numel() / C`, `block.x` — is never a tensor, and only the
declared names count (never the identifiers of their initialisers).

SIMD registers are typed the same way: ATen's `at::vec::Vectorized<T>` (and the candidate's aliases of it, `using Vec =
at::vec::Vectorized<float>`) has methods named like tensor methods (`.exp()`, `.max()`, `.sqrt()`), which compute on
eight floats in a register, not on a tensor. A scope's name set holds such names as `vec:<name>` (no C++ identifier
has a colon), beside the tensor names.
"""

from __future__ import annotations

import re

from kernelmosaic.verify.static.vocab import TENSOR_METHODS_COMPUTE

__all__ = ["TensorTyping", "iter_nodes", "TENSOR_INIT", "strip_templates"]

# `auto y = ...` initializers that certainly yield a tensor.
TENSOR_INIT = re.compile(r"\s*((at|torch)::(empty|zeros|ones|full|empty_like|zeros_like|ones_like|full_like|"
                         r"empty_strided|from_blob|rand|randn)\b|\w+\.(contiguous|view|reshape|to|clone|transpose|permute|t)\s*\()")
VIEW_METHODS = {"contiguous", "view", "reshape", "to", "t", "transpose", "permute", "clone", "expand", "squeeze",
                "unsqueeze", "flatten", "narrow", "select", "slice", "cuda", "cpu", "float", "half", "index",
                "view_as", "expand_as", "type_as", "detach", "masked_fill", "fill_", "zero_", "copy_"}
_NAMES = ("identifier", "field_identifier")
SIMD = "vec:"
"""The prefix of a SIMD-register name in a scope's name set."""
_SIMD_TYPES = {"Vectorized", "VectorizedN"}
_SIMD_ALIAS = re.compile(r"\busing\s+(\w+)\s*=\s*(?:[\w:]*::)?VectorizedN?\s*<|"
                         r"\btypedef\s+(?:[\w:]*::)?VectorizedN?\s*<[^;]*>\s*(\w+)\s*;")


class TensorTyping:
    """Mixin for a parsed source: needs `t(node) -> str` (the node's text)."""

    def t(self, node) -> str:
        raise NotImplementedError

    def simd_types(self) -> set[str]:
        """`Vectorized` and the names the source gives it (`using Vec = at::vec::Vectorized<float>;`, a typedef)."""
        if not hasattr(self, "_simd_types"):
            text = self.t(self.tree.root_node)  # type: ignore[attr-defined]
            self._simd_types = _SIMD_TYPES | {a or b for a, b in _SIMD_ALIAS.findall(text)}
        return self._simd_types

    def _simd_type(self, text: str) -> bool:
        return strip_templates(text.replace("const", "")).rstrip("&*").split("::")[-1] in self.simd_types()

    def is_simd(self, node, names: set[str]) -> bool:
        """A SIMD register: a name declared with its type, a call of one of its static functions (`Vec::loadu`) or of
        `at::vec`'s, a method of one (`v.exp()`), or parentheses or arithmetic with one."""
        if node.type == "identifier":
            return SIMD + self.t(node) in names
        if node.type in ("parenthesized_expression", "binary_expression", "unary_expression"):
            return any(self.is_simd(c, names) for c in node.children if c.is_named)
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is None:
                return False
            if fn.type == "field_expression":
                recv = fn.child_by_field_name("argument")
                return recv is not None and self.is_simd(recv, names)
            parts = strip_templates(self.t(fn)).split("::")
            return parts[:2] == ["at", "vec"] or parts[0] == "vec" or any(p in self.simd_types() for p in parts[:-1])
        return False

    def scope_tensors(self, node, outer: set[str]) -> set[str]:
        """The tensor names in force inside `node`, given those of the scope around it: a function or lambda adds
        its parameters, a block (`{ ... }`, a `for` header) its own declarations, a range `for` its loop variable.
        C++ scoping: a name declared again in an inner scope means that declaration there (a `float* rm` in one
        branch is no tensor because the other branch declares `auto rm = t.contiguous()`); other nodes keep `outer`."""
        ty = node.type
        if ty == "function_definition":
            return self._declared(set(), self._params(node))
        if ty == "lambda_expression":
            return self._declared(outer, self._params(node))
        if ty in ("compound_statement", "for_statement"):
            return self._declared(outer, [c for c in node.children if c.type == "declaration"])
        if ty == "for_range_loop":
            typ, var = node.child_by_field_name("type"), node.child_by_field_name("declarator")
            names = set(outer)
            name = self._declared_name(var) if var is not None else ""
            if name:
                names.discard(name)
                if typ is not None and self.t(typ).split("::")[-1].strip() == "Tensor":
                    names.add(name)
            return names
        return outer

    def _params(self, fn) -> list:
        """The parameter declarations of a function definition or a lambda (its body's own scopes left out)."""
        stack = [c for c in fn.children if c.type != "compound_statement"]
        while stack:
            n = stack.pop(0)
            if n.type == "parameter_list":
                return [c for c in n.children if c.type in ("parameter_declaration", "optional_parameter_declaration")]
            stack.extend(c for c in n.children if c.type != "compound_statement")
        return []

    def _declared(self, outer: set[str], decls: list) -> set[str]:
        """`outer` updated by `decls` in source order: each declared name is a tensor or, shadowing, no longer one."""
        names = set(outer)
        for n in decls:
            typ = n.child_by_field_name("type")
            if typ is None:
                continue
            declared = self.t(typ).split("::")[-1].strip() == "Tensor"
            simd = self._simd_type(self.t(typ))
            auto = typ.type == "placeholder_type_specifier"
            for d, value in self._declarators(n):
                if declared or (auto and value is not None and (TENSOR_INIT.match(self.t(value))
                                                                 or self._is_tensor(value, names))):
                    names.add(d)
                else:
                    names.discard(d)
                if simd or (auto and value is not None and self.is_simd(value, names)):
                    names.add(SIMD + d)
                else:
                    names.discard(SIMD + d)
        return names

    def _declarators(self, decl) -> list[tuple[str, object]]:
        """(declared name, initial value or None) for each declarator of a declaration."""
        out = []
        for c in decl.children:
            if c.type == "init_declarator":
                d = c.child_by_field_name("declarator")
                out.append((self._declared_name(d), c.child_by_field_name("value")))
            elif c == decl.child_by_field_name("declarator") or c.type in ("identifier", "reference_declarator",
                                                                          "pointer_declarator"):
                if c.type != "function_declarator":
                    out.append((self._declared_name(c), None))
        return [(name, v) for name, v in out if name]

    def _declared_name(self, d) -> str:
        while d is not None and d.type not in _NAMES:
            d = d.child_by_field_name("declarator") or next((c for c in d.children if c.type in _NAMES
                                                              or c.type.endswith("declarator")), None)
        return self.t(d) if d is not None else ""

    def _is_tensor(self, node, tensors: set[str]) -> bool:
        """A tensor-typed variable, a view/copy or ATen compute of one, `x[i]`, or parentheses/arithmetic on one."""
        if node.type == "identifier":
            return self.t(node) in tensors
        if node.type == "parenthesized_expression":
            return any(self._is_tensor(c, tensors) for c in node.children if c.type not in ("(", ")"))
        if node.type == "subscript_expression":
            arg = node.child_by_field_name("argument")
            return arg is not None and self._is_tensor(arg, tensors)
        if node.type == "binary_expression":
            return any(self._is_tensor(node.child_by_field_name(side), tensors) for side in ("left", "right")
                       if node.child_by_field_name(side) is not None)
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                field, recv = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
                if field is None or recv is None:
                    return False
                name = self.t(field).split("<")[0]
                return (name in VIEW_METHODS or name in TENSOR_METHODS_COMPUTE or name.rstrip("_") in
                        TENSOR_METHODS_COMPUTE) and self._is_tensor(recv, tensors)
            text = self.t(node)
            if TENSOR_INIT.match(text):
                return True
            m = re.match(r"\s*(?:at|torch)::(\w+)\s*\(", text)
            return bool(m and m.group(1) in TENSOR_METHODS_COMPUTE)
        return False


def strip_templates(text: str) -> str:
    """`a::b<c<d>, e>::f` -> `a::b::f`, without whitespace."""
    text = re.sub(r"\s", "", text)
    while True:
        shorter = re.sub(r"<[^<>]*>", "", text)
        if shorter == text:
            return text
        text = shorter


def iter_nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
