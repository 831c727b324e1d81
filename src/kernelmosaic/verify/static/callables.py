"""What a called expression runs, when it is not a plain name: the value bound to `self.op`, a local, a closure.

Models bind before they call: `self.op = lambda t: ext.op(t)`, `self.act = make_act()` (a factory returning a
nested function), `self.fns = {"relu": relu_helper}`, `fn = self.op`. This resolver follows such bindings to
the Python code they run (followed in turn by the reachability walk), to in-module classes, or to the
candidate's kernels; what it cannot follow is reported as unknown, and a static rule then defers to run time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernelmosaic.verify.static.classes import is_super, super_method
from kernelmosaic.verify.static.model_index import (
    ClassInfo,
    Kernels,
    is_ext_value,
    is_kernel_callable,
    is_kernel_container,
)
from kernelmosaic.verify.static.pyscope import ModuleIndex

__all__ = ["Targets", "Resolver", "Fn", "local_values"]

Fn = ast.FunctionDef | ast.AsyncFunctionDef
_WRAPPERS = ("functools.partial", "builtins.staticmethod", "builtins.classmethod", "functools.wraps")
_DEPTH = 8


@dataclass
class Targets:
    """Everything calling one expression may run."""

    kernel: bool = False
    """It calls into the candidate's kernels (an extension function)."""
    functions: list[tuple[Fn, ClassInfo | None, bool]] = field(default_factory=list)
    """Python functions it runs: (definition, its class, whether `self` is bound)."""
    classes: list[str] = field(default_factory=list)
    """In-module classes whose instance is called (their forward runs)."""
    names: list[str] = field(default_factory=list)
    """Dotted names it may stand for (`torch.relu` behind `self.op`): judged by the compute rules."""
    unknown: bool = False
    """Part of it could not be resolved statically."""

    def add(self, other: Targets) -> None:
        self.kernel |= other.kernel
        self.unknown |= other.unknown
        self.functions += [f for f in other.functions if all(f[0] is not g[0] for g in self.functions)]
        self.classes += [c for c in other.classes if c not in self.classes]
        self.names += [n for n in other.names if n not in self.names]


class Resolver:
    """Resolves called expressions within one module; `infos` gives the ClassInfo of an in-module class."""

    def __init__(self, idx: ModuleIndex, k: Kernels, infos) -> None:
        self.idx, self.k, self.infos = idx, k, infos

    # ---- entry ----------------------------------------------------------------------------------------------
    def of(self, expr: ast.AST, fn: Fn | None, cls: ClassInfo | None, depth: int = 0) -> Targets:
        """What calling `expr` (evaluated inside `fn` of `cls`) may run."""
        out = Targets()
        if depth > _DEPTH:
            out.unknown = True
            return out
        if isinstance(expr, ast.Name) or _self_attr(expr) is not None:
            pass  # a binding: resolved below, locals before same-named bindings elsewhere
        elif is_kernel_callable(self.idx, self.k, expr) or (
                isinstance(expr, ast.Subscript) and is_kernel_container(self.idx, self.k, expr.value)):
            out.kernel = True
            if (isinstance(expr, ast.Attribute) and is_ext_value(self.idx, self.k, expr.value)) \
                    or isinstance(expr, ast.Call):
                return out  # `ext.op`, `partial(ext.op)`, `getattr(ext, name)`: nothing else it could be
        if isinstance(expr, ast.Lambda):
            out.functions.append((self.idx.lambda_def(expr), cls, False))
        elif isinstance(expr, ast.Name):
            out.add(self._name(expr.id, fn, cls, depth))
        elif isinstance(expr, ast.Attribute):
            out.add(self._attribute(expr, fn, cls, depth))
        elif isinstance(expr, ast.Call):
            out.add(self._result(expr, fn, cls, depth))
        elif isinstance(expr, ast.Subscript):
            inner = self.of(expr.value, fn, cls, depth + 1) if isinstance(expr.value, ast.Attribute) else Targets()
            if any(f.name in self.k.triton for f, _, _ in inner.functions):
                out.kernel = True  # `kernels.last[grid](...)`: a Triton kernel reached through an attribute, launched
            else:
                out.add(self.elements(expr.value, fn, cls, depth + 1))
        elif isinstance(expr, ast.IfExp):
            out.add(self.of(expr.body, fn, cls, depth + 1))
            out.add(self.of(expr.orelse, fn, cls, depth + 1))
        elif isinstance(expr, ast.BoolOp):
            for v in expr.values:
                out.add(self.of(v, fn, cls, depth + 1))
        else:
            out.unknown = True
        return out

    # ---- pieces -------------------------------------------------------------------------------------------
    def _name(self, name: str, fn: Fn | None, cls: ClassInfo | None, depth: int) -> Targets:
        out = Targets()
        scope: ast.AST | None = fn
        while isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            nested = [n for n in ast.walk(scope) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                      and n is not scope and n.name == name]
            values = local_values(scope).get(name, [])
            if nested or values:
                out.functions += [(n, None, False) for n in nested]
                for v in values:
                    out.add(self.of(v, scope, cls, depth + 1))
                return out
            if name in _params(scope):
                out.unknown = True  # a callback handed in by the caller
                return out
            scope = self._enclosing(scope)
        if name in self.idx.functions:
            out.functions.append((self.idx.functions[name], None, False))
        elif name in self.idx.classes:
            out.classes.append(name)
        elif name in self.idx.values:
            out.add(self.of(self.idx.values[name], None, None, depth + 1))
        elif (q := self.idx.resolve(ast.Name(id=name, ctx=ast.Load()))) is not None:
            out.names.append(q)
        elif name in self.k.ext_functions:
            out.kernel = True
        else:
            out.unknown = True
        return out

    def _enclosing(self, fn: ast.AST) -> ast.AST | None:
        node = self.idx.parent(fn)
        while node is not None and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            node = self.idx.parent(node)
        return node

    def _attribute(self, expr: ast.Attribute, fn: Fn | None, cls: ClassInfo | None, depth: int) -> Targets:
        out = Targets()
        recv = expr.value
        if isinstance(recv, ast.Name) and recv.id == "self" and cls is not None:
            if expr.attr in cls.methods:
                out.functions.append((cls.methods[expr.attr], cls, True))
            elif expr.attr in cls.local_attrs:
                out.classes += cls.local_attrs[expr.attr]
            elif expr.attr in cls.values:
                for value, where in cls.values[expr.attr]:
                    out.add(self.of(value, where, cls, depth + 1))
            elif expr.attr in cls.aliases:
                out.names.append(cls.aliases[expr.attr])
            elif expr.attr in self.k.fn_attrs:
                out.kernel = True  # set from elsewhere (a base class, another object)
            else:
                out.unknown = expr.attr not in cls.nn_attrs
            return out
        if is_super(recv) and cls is not None:  # `super().forward(x)`: the in-module base's method
            found = super_method(self.idx, cls.node, expr.attr)
            if found is not None:
                out.functions.append((found, cls, True))
            out.unknown = found is None
            return out
        if (q := self.idx.resolve(expr)) is not None:
            out.names.append(q)
            return out
        if is_ext_value(self.idx, self.k, recv):
            return out
        if (fields := self.namespace(recv, fn, depth)) is not None:  # `kernels = SimpleNamespace(mid=_k, ...)`
            named = [v for key, v in fields if key == expr.attr]
            for value in named or [v for key, v in fields if key is None]:
                out.add(self.of(value, fn, None, depth + 1))
            out.unknown |= not named and not any(key is None for key, _ in fields)
            return out
        # A method of an object of an in-module class (`self.helper.run`, `Helper().run`).
        holders = self.instances(recv, fn, cls, depth + 1)
        for name in holders.classes:
            info = self.infos(name)
            if expr.attr in info.methods:
                out.functions.append((info.methods[expr.attr], info, True))
        out.unknown = holders.unknown or not holders.classes
        return out

    def namespace(self, recv: ast.AST, fn: Fn | None, depth: int = 0) -> list[tuple[str | None, ast.AST]] | None:
        """The (name, value) fields of a `types.SimpleNamespace(...)` that a name holds (a module-level one or a
        local); None when it holds anything else. A `**mapping` field has no name: its value stands for them all."""
        if not isinstance(recv, ast.Name) or depth > _DEPTH:
            return None
        values = local_values(fn).get(recv.id, []) if fn is not None else []
        if not values and recv.id in self.idx.values:
            values = [self.idx.values[recv.id]]
        calls = [v for v in values if isinstance(v, ast.Call) and self.idx.resolve(v.func) == "types.SimpleNamespace"]
        if not calls or len(calls) != len(values):
            return None
        return [(kw.arg, kw.value) for c in calls for kw in c.keywords]

    def instances(self, expr: ast.AST, fn: Fn | None, cls: ClassInfo | None, depth: int) -> Targets:
        """In-module classes whose instances an expression holds (not what calling it runs)."""
        out = Targets()
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.idx.classes:
            out.classes.append(expr.func.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self" \
                and cls is not None and expr.attr in cls.local_attrs:
            out.classes += cls.local_attrs[expr.attr]
        elif isinstance(expr, ast.Name) and fn is not None and expr.id in local_values(fn) and depth <= _DEPTH:
            for v in local_values(fn)[expr.id]:
                out.add(self.instances(v, fn, cls, depth + 1))
        else:
            out.unknown = True
        return out

    def _result(self, call: ast.Call, fn: Fn | None, cls: ClassInfo | None, depth: int) -> Targets:
        """What calling the *result* of `call` runs: `partial(f)`, a factory's returned function."""
        out = Targets()
        q = self.idx.resolve(call.func)
        if q in _WRAPPERS and call.args:
            return self.of(call.args[0], fn, cls, depth + 1)
        if q == "builtins.getattr":  # `getattr(self.ext, name)` (an extension the static view did not bind): any
            out.unknown = True  # of the holder's attributes; the run-time census decides
            return out
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("get", "pop", "setdefault", "__getitem__") \
                and q is None:
            return self.elements(call.func.value, fn, cls, depth + 1)  # `OPS.get(kind)`
        if isinstance(call.func, ast.Name) and call.func.id in self.idx.classes:
            out.classes.append(call.func.id)  # `Block()(x)`, or an instance called later
            return out
        made = self.of(call.func, fn, cls, depth + 1)
        out.unknown = made.unknown or bool(made.classes) or made.kernel
        for factory, fcls, _ in made.functions:
            for ret in (n for n in ast.walk(factory) if isinstance(n, ast.Return) and n.value is not None):
                out.add(self.of(ret.value, factory, fcls, depth + 1))
        return out

    def elements(self, container: ast.AST, fn: Fn | None, cls: ClassInfo | None, depth: int) -> Targets:
        """What calling an element of a container (`OPS[name]`, `self.fns[i]`) may run."""
        out = Targets()
        if depth > _DEPTH:
            out.unknown = True
        elif isinstance(container, ast.Dict):
            out.unknown = not container.values  # filled later (`self.ops[name] = ...`)
            for v in container.values:
                out.add(self.of(v, fn, cls, depth + 1))
        elif isinstance(container, ast.List | ast.Tuple | ast.Set):
            out.unknown = not container.elts
            for v in container.elts:
                out.add(self.of(v.value if isinstance(v, ast.Starred) else v, fn, cls, depth + 1))
        elif isinstance(container, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            out.add(self.of(container.elt, fn, cls, depth + 1))
        elif isinstance(container, ast.DictComp):
            out.add(self.of(container.value, fn, cls, depth + 1))
        elif isinstance(container, ast.Name) and container.id in self.idx.values and not (
                fn is not None and container.id in local_values(fn)):
            out.add(self.elements(self.idx.values[container.id], None, None, depth + 1))
        elif isinstance(container, ast.Name) and fn is not None and container.id in local_values(fn):
            for v in local_values(fn)[container.id]:
                out.add(self.elements(v, fn, cls, depth + 1))
        elif isinstance(container, ast.Attribute) and isinstance(container.value, ast.Name) \
                and container.value.id == "self" and cls is not None and container.attr in cls.values:
            for value, where in cls.values[container.attr]:
                out.add(self.elements(value, where, cls, depth + 1))
        else:
            out.unknown = True
        return out


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def local_values(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """Name -> expressions assigned to it anywhere in `fn` (cached on the node)."""
    cached = getattr(fn, "_km_locals", None)
    if cached is not None:
        return cached
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
                elif isinstance(t, ast.Tuple | ast.List) and isinstance(node.value, ast.Tuple | ast.List) \
                        and len(t.elts) == len(node.value.elts):
                    for te, ve in zip(t.elts, node.value.elts, strict=True):
                        if isinstance(te, ast.Name):
                            out.setdefault(te.id, []).append(ve)
    fn._km_locals = out  # type: ignore[attr-defined]
    return out


def _params(fn: Fn) -> set[str]:
    a = fn.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    return names | {x.arg for x in (a.vararg, a.kwarg) if x is not None}


_COMPUTE_PREFIXES = ("torch.nn.functional.", "torch.ops.aten.", "torch.special.", "torch.linalg.", "torch.fft.",
                     "operator.")


def hidden_callable(idx: ModuleIndex, k: Kernels, compute_names: set[str]) -> ast.AST | None:
    """The first value anywhere in the module that could stand behind an unresolved call and compute without a
    kernel: a PyTorch/`operator` compute function handed around uncalled (`register("relu", F.relu)`), a module
    function referenced uncalled, or a lambda that calls no kernel. None when every callable value is a kernel's."""
    for node in ast.walk(idx.tree):
        if isinstance(node, ast.Lambda):
            if not any(isinstance(n, ast.Call) and is_kernel_callable(idx, k, n.func) for n in ast.walk(node.body)):
                return node
            continue
        if not isinstance(node, ast.Name | ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        parent = idx.parent(node)
        if isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Call) and parent.func is node) \
                or isinstance(parent, ast.ClassDef) or _decorates(parent, node):
            continue
        q = idx.resolve(node) or ""
        if q.startswith(_COMPUTE_PREFIXES) or (q.startswith("torch.") and q.rsplit(".", 1)[-1] in compute_names):
            return node
        if isinstance(node, ast.Name) and node.id in idx.functions and node.id not in k.triton \
                and node.id not in k.fn_factories and node.id not in k.ext_factories:
            return node
    return None


def _decorates(parent: ast.AST | None, node: ast.AST) -> bool:
    return isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node in parent.decorator_list
