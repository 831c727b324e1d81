"""Loops over constants, written out: `for layer, kernel in self._STAGES:` where `_STAGES` is a literal of strings
and numbers repeats its body once per item with the loop's names replaced by that item's constants, so that
`getattr(self, layer)` in it is read as `self.linear1`, `self.linear2` (`pyscope.literal_getattr_to_attribute`) and
judged like any attribute, instead of a computed name that could hide anything.

Only loops whose items are certain are written out: the iterable is a literal (or `.items()`, `.keys()`, `.values()`
of a dict literal, or `enumerate` of one), or a module-level name or class attribute bound once to such a literal
and never stored to elsewhere in the module; the target is names only; the body never rebinds them; at most
`_MAX_ITEMS` items. Each copy keeps the source's line numbers. The loop itself stays (its `break`s and `else`)."""

from __future__ import annotations

import ast
import copy

__all__ = ["constant_loops_unrolled"]

_MAX_ITEMS = 16
_Const = str | int | float | bool | None
_NOT = object()


def _constant(node: ast.AST) -> object:
    """The Python value of a literal of constants (nested tuples and lists), else `_NOT`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, _Const):
        return node.value
    if isinstance(node, ast.Tuple | ast.List):
        items = [_constant(e) for e in node.elts]
        return _NOT if any(i is _NOT for i in items) else tuple(items)
    return _NOT


def _items(node: ast.AST) -> list[object] | None:
    """The items iterating a literal gives, when every one is a constant."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [_constant(e) for e in node.elts]
    elif isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        items = [_constant(k) for k in node.keys if k is not None]
    else:
        return None
    return None if any(i is _NOT for i in items) or len(items) > _MAX_ITEMS else items


def _stored_names(tree: ast.AST) -> dict[str, int]:
    """How often each module-level name and each attribute is stored to anywhere in the module."""
    counts: dict[str, int] = {}
    for n in ast.walk(tree):
        key = None
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            key = n.id
        elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
            key = "." + n.attr
        elif isinstance(n, ast.Global | ast.Nonlocal):
            for name in n.names:
                counts[name] = counts.get(name, 0) + 2  # stored from a function: never certain
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    return counts


class _Unroll(ast.NodeTransformer):
    def __init__(self, tree: ast.Module) -> None:
        self.stores = _stored_names(tree)
        self.module = {t.id: s.value for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                       for t in s.targets if isinstance(t, ast.Name) and self.stores.get(t.id) == 1}
        self.classes: list[dict[str, ast.AST]] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.classes.append({t.id: s.value for s in node.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                             for t in s.targets if isinstance(t, ast.Name) and self.stores.get(t.id) == 1
                             and not self.stores.get("." + t.id)})
        self.generic_visit(node)
        self.classes.pop()
        return node

    def _literal(self, node: ast.AST) -> ast.AST | None:
        if isinstance(node, ast.Name):
            return self.module.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.classes:
            if node.value.id == "self" or node.value.id == "cls":
                return self.classes[-1].get(node.attr)
        return node

    def _iter_items(self, node: ast.AST) -> list[object] | None:
        if isinstance(node, ast.Call) and not node.keywords:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in ("items", "keys", "values") and not node.args:
                d = self._literal(f.value)
                if isinstance(d, ast.Dict) and all(k is not None for k in d.keys):
                    keys, values = _items(d), [_constant(v) for v in d.values]
                    if keys is None or any(v is _NOT for v in values):
                        return None
                    return {"items": list(zip(keys, values, strict=True)), "keys": keys, "values": values}[f.attr]
            if isinstance(f, ast.Name) and f.id == "enumerate" and len(node.args) == 1:
                inner = self._iter_items(node.args[0])
                return None if inner is None else list(enumerate(inner))
            return None
        literal = self._literal(node)
        return _items(literal) if literal is not None else None

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        items = self._iter_items(node.iter)
        names = _target_names(node.target)
        if not items or names is None:
            return node
        if any(isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in names
               for stmt in node.body for n in ast.walk(stmt)):
            return node
        body: list[ast.stmt] = []
        for item in items:
            values = _bind(node.target, item)
            if values is None:
                return node
            body += [_Substitute(values).visit(copy.deepcopy(stmt)) for stmt in node.body]
        node.body = body
        return node


def _target_names(target: ast.AST) -> set[str] | None:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        out: set[str] = set()
        for e in target.elts:
            inner = _target_names(e)
            if inner is None:
                return None
            out |= inner
        return out
    return None


def _bind(target: ast.AST, value: object) -> dict[str, object] | None:
    if isinstance(target, ast.Name):
        return {target.id: value}
    if not isinstance(value, tuple) or not isinstance(target, ast.Tuple | ast.List) or len(value) != len(target.elts):
        return None
    out: dict[str, object] = {}
    for t, v in zip(target.elts, value, strict=True):
        inner = _bind(t, v)
        if inner is None:
            return None
        out.update(inner)
    return out


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, object]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            value = self.values[node.id]
            new = ast.Constant(value=value) if not isinstance(value, tuple) else _tuple(value)
            return ast.copy_location(new, node)
        return node


def _tuple(value: tuple) -> ast.Tuple:
    return ast.Tuple(elts=[_tuple(v) if isinstance(v, tuple) else ast.Constant(value=v) for v in value], ctx=ast.Load())


def constant_loops_unrolled(tree: ast.Module) -> ast.Module:
    """`tree` with every loop over certain constants written out (see the module's text)."""
    out = _Unroll(tree).visit(tree)
    return ast.fix_missing_locations(out)
