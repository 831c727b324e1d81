"""Operator signature of a reference: which torch operators `Model.forward` applies, in evaluation order.

Read from the AST only (task code is never imported here). `self.conv(x)` resolves to the module built in
`__init__` (`nn.Conv2d` -> `conv2d`), `nn.Sequential` expands to its members, helper methods called as
`self.f(...)` are inlined once, tensor methods (`x.relu()`) and operators (`a @ b` -> `matmul`) count too.
"""

from __future__ import annotations

import ast

from kernelmosaic.curate.normalize import normalized_tree

__all__ = ["operator_signature"]

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul",
           ast.Pow: "pow", ast.FloorDiv: "floordiv", ast.Mod: "remainder"}
_UNARY = {ast.USub: "neg"}
_COMPARE = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
_TRANSPOSES = {"T", "mT", "H", "mH"}
_IGNORED = {"super", "len", "range", "int", "float", "list", "tuple", "isinstance", "zip", "enumerate", "print"}


def _op_name(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1].lower()


class _Reader:
    def __init__(self, cls: ast.ClassDef) -> None:
        self.methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
        self.modules: dict[str, list[str]] = {}
        init = self.methods.get("__init__")
        self.init = init
        for node in ast.walk(init) if init else []:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id == "self":
                        self.modules[target.attr] = self._constructed(node.value)

    def _constructed(self, call: ast.Call) -> list[str]:
        name = ast.unparse(call.func)
        if name.endswith("Sequential"):
            members: list[ast.Call] = []
            for arg in call.args:
                if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                    members += self._list_members(arg.value.id)  # nn.Sequential(*layers)
                elif isinstance(arg, ast.Call):
                    members.append(arg)
            return [op for member in members for op in self._constructed(member)]
        if name.endswith(("ModuleList", "Parameter", "Tensor")) or "." not in name:
            return []
        return [_op_name(name)]

    def _list_members(self, name: str) -> list[ast.Call]:
        """Module constructions put into the local list `name` in `__init__` (by `=`, `+=`, append, extend)."""
        found: list[ast.Call] = []
        for node in ast.walk(self.init) if self.init else []:
            value = None
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    value = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                value = node.args[0] if node.args else None
            if value is not None:
                found += [c for c in ast.walk(value) if isinstance(c, ast.Call) and "." in ast.unparse(c.func)]
        return sorted(found, key=lambda c: (c.lineno, c.col_offset))

    def expr(self, node: ast.AST, out: list[str], inlined: frozenset[str]) -> None:
        """Append the operators of `node` in evaluation order (arguments before the call)."""
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name | ast.Attribute):
                self.expr(func.value, out, inlined)  # a method on a computed tensor: its receiver first
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
                if not ast.unparse(func.value).startswith("torch"):
                    self.expr(func.value, out, inlined)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self.expr(arg, out, inlined)
            out.extend(self._call_ops(func, out, inlined))
            return
        if isinstance(node, ast.BinOp):
            self.expr(node.left, out, inlined)
            self.expr(node.right, out, inlined)
            out.append(_BINOPS.get(type(node.op), type(node.op).__name__.lower()))
            return
        if isinstance(node, ast.Attribute) and node.attr in _TRANSPOSES:
            self.expr(node.value, out, inlined)
            out.append("t")
            return
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            self.expr(node.operand, out, inlined)
            if not isinstance(node.operand, ast.Constant):
                out.append(_UNARY[type(node.op)])
            return
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            self.expr(node.left, out, inlined)
            self.expr(node.comparators[0], out, inlined)
            out.append(_COMPARE[type(node.ops[0])])
            return
        for child in ast.iter_child_nodes(node):
            self.expr(child, out, inlined)

    def _call_ops(self, func: ast.expr, out: list[str], inlined: frozenset[str]) -> list[str]:
        if isinstance(func, ast.Name):
            return [] if func.id in _IGNORED else [_op_name(func.id)]
        if not isinstance(func, ast.Attribute):
            return []
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            if func.attr in self.modules:
                return self.modules[func.attr]
            if func.attr in self.methods and func.attr not in inlined:
                inner: list[str] = []
                self.body(self.methods[func.attr], inner, inlined | {func.attr})
                return inner
            return []
        return [_op_name(func.attr)]

    def body(self, fn: ast.FunctionDef, out: list[str], inlined: frozenset[str]) -> None:
        for stmt in fn.body:
            self.expr(stmt, out, inlined)


def operator_signature(source: str) -> list[str]:
    """Operator names applied by `Model.forward`, in order; [] when the source has no parsable Model."""
    try:
        tree = normalized_tree(source)
    except SyntaxError:
        return []
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if cls is None:
        return []
    reader = _Reader(cls)
    forward = reader.methods.get("forward")
    if forward is None:
        return []
    ops: list[str] = []
    reader.body(forward, ops, frozenset({"forward"}))
    return ops
