"""Which C++ names hold tensors, so that `a * b` on two tensors is told apart from `n * 2` on sizes.

Typed from declarations only: a variable is a tensor when it is declared `Tensor` (any namespace, `const` and `&`
allowed) or declared `auto` from a tensor expression (an allocation, a view, ATen compute on a tensor). Everything
else — `int`, `int64_t`, `size_t`, `auto n = x.size(0)`, `x.numel() / C`, `block.x` — is never a tensor, and only the
declared names count (never the identifiers of their initialisers).
"""

from __future__ import annotations

import re

from kernelmosaic.verify.static.vocab import TENSOR_METHODS_COMPUTE

__all__ = ["TensorTyping", "iter_nodes", "TENSOR_INIT"]

# `auto y = ...` initializers that certainly yield a tensor.
TENSOR_INIT = re.compile(r"\s*((at|torch)::(empty|zeros|ones|full|empty_like|zeros_like|ones_like|full_like|"
                         r"empty_strided|from_blob|rand|randn)\b|\w+\.(contiguous|view|reshape|to|clone|transpose|permute|t)\s*\()")
VIEW_METHODS = {"contiguous", "view", "reshape", "to", "t", "transpose", "permute", "clone", "expand", "squeeze",
                "unsqueeze", "flatten", "narrow", "select", "slice", "cuda", "cpu", "float", "half", "index",
                "view_as", "expand_as", "type_as", "detach", "masked_fill", "fill_", "zero_", "copy_"}
_NAMES = ("identifier", "field_identifier")


class TensorTyping:
    """Mixin for a parsed source: needs `t(node) -> str` (the node's text)."""

    def t(self, node) -> str:
        raise NotImplementedError

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
            auto = typ.type == "placeholder_type_specifier"
            for d, value in self._declarators(n):
                if declared or (auto and value is not None and (TENSOR_INIT.match(self.t(value))
                                                                 or self._is_tensor(value, names))):
                    names.add(d)
                else:
                    names.discard(d)
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


def iter_nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
