"""Which C++ names hold tensors, so that `a * b` on two tensors is told apart from `n * 2` on sizes.

Only what is certain counts: variables declared `Tensor` (any namespace) and `auto` variables
initialised by an allocation or a view of a tensor.
"""

from __future__ import annotations

import re

__all__ = ["TensorTyping", "iter_nodes", "TENSOR_INIT"]

# `auto y = ...` initializers that certainly yield a tensor.
TENSOR_INIT = re.compile(r"\s*((at|torch)::(empty|zeros|ones|full|empty_like|zeros_like|ones_like|full_like|"
                         r"empty_strided|from_blob)\b|\w+\.(contiguous|view|reshape|to|clone|transpose|permute|t)\s*\()")
VIEW_METHODS = {"contiguous", "view", "reshape", "to", "t", "transpose", "permute", "clone", "expand", "squeeze",
                "unsqueeze", "flatten", "narrow", "select", "slice", "cuda", "cpu", "float", "half"}


class TensorTyping:
    """Mixin for a parsed source: needs `t(node) -> str` (the node's text)."""

    def t(self, node) -> str:
        raise NotImplementedError

    def _tensor_params(self, fn) -> set[str]:
        names: set[str] = set()
        for n in iter_nodes(fn):
            if n.type in ("parameter_declaration", "declaration"):
                typ = n.child_by_field_name("type")
                if typ is not None and self.t(typ).split("::")[-1].strip() == "Tensor":
                    names.update(self.t(i) for i in iter_nodes(n) if i.type == "identifier")
                elif typ is not None and typ.type == "placeholder_type_specifier":
                    for init in (c for c in n.children if c.type == "init_declarator"):
                        value = init.child_by_field_name("value")
                        if value is not None and TENSOR_INIT.match(self.t(value)):
                            d = init.child_by_field_name("declarator")
                            if d is not None:
                                names.add(self.t(d))
        return names

    def _is_tensor(self, node, tensors: set[str]) -> bool:
        """A tensor-typed variable, a view/copy of one (`x.contiguous()`), `x[i]`, or parentheses around one."""
        if node.type == "identifier":
            return self.t(node) in tensors
        if node.type in ("parenthesized_expression", "subscript_expression"):
            return any(self._is_tensor(c, tensors) for c in node.children if c.type not in ("(", ")"))
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                field, recv = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
                return field is not None and recv is not None and self.t(field) in VIEW_METHODS \
                    and self._is_tensor(recv, tensors)
            return bool(TENSOR_INIT.match(self.t(node)))
        return False


def iter_nodes(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
