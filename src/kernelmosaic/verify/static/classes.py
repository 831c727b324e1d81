"""What an in-module class holds: its methods, nn submodules, tensors, in-module blocks, and every value bound to
each `self.<attr>` (what `self.op(x)` may run is resolved from those, see callables.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernelmosaic.verify.static.pyscope import ModuleIndex
from kernelmosaic.verify.static.vocab import NN_NONCOMPUTE

__all__ = ["ClassInfo", "class_info", "methods_of", "bases_of", "super_method", "is_super", "assignment_pairs"]

_TENSOR_FACTORIES = ("torch.", )
_CONTAINERS = {"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"}
# Wrappers whose result, when called, runs PyTorch-generated code.
_COMPILERS = {"torch.compile", "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module",
              "torch.cuda.make_graphed_callables"}


@dataclass
class ClassInfo:
    """What `self.<attr>` is, for one in-module class."""

    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    nn_attrs: dict[str, str] = field(default_factory=dict)
    """attr -> dotted nn class (`torch.nn.Conv2d`)."""
    local_attrs: dict[str, list[str]] = field(default_factory=dict)
    """attr -> in-module classes it holds (one instance, or a ModuleList/Sequential of them)."""
    tensor_attrs: set[str] = field(default_factory=set)
    param_attrs: set[str] = field(default_factory=set)
    """The tensor attributes that are weights: `nn.Parameter`s and registered parameters (not buffers)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """attr -> dotted name it is bound to (`op = staticmethod(torch.matmul)`, `self.op = F.relu`)."""
    values: dict[str, list[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None]]] = field(default_factory=dict)
    """attr -> every expression assigned to it, with the method that assigns it (None: the class body)."""


def methods_of(idx: ModuleIndex, cls: ast.ClassDef, seen: set[str] | None = None) -> dict:
    """Methods by name, following in-module base classes (the class's own first)."""
    seen = seen or set()
    seen.add(cls.name)
    out: dict = {}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in idx.classes and base.id not in seen:
            out.update(methods_of(idx, idx.classes[base.id], seen))
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            out[stmt.name] = stmt
    return out


def bases_of(idx: ModuleIndex, cls: ast.ClassDef, seen: set[str] | None = None) -> list[ast.expr]:
    """The base-class expressions of `cls` and of its in-module ancestors (`class Scaled(_Base)` where
    `class _Base(torch.autograd.Function)`), as `methods_of` follows them."""
    seen = seen or set()
    seen.add(cls.name)
    out: list[ast.expr] = []
    for base in cls.bases:
        out.append(base)
        if isinstance(base, ast.Name) and base.id in idx.classes and base.id not in seen:
            out += bases_of(idx, idx.classes[base.id], seen)
    return out


def super_method(idx: ModuleIndex, cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """What `super().<name>` runs in a method of `cls`: the first in-module base (in order) that has it."""
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in idx.classes and base.id != cls.name:
            found = methods_of(idx, idx.classes[base.id]).get(name)
            if found is not None:
                return found
    return None


def is_super(node: ast.AST) -> bool:
    """`super()` or `super(Cls, self)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def assignment_pairs(targets: list[ast.expr], value: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) pairs of an assignment, unpacking `a, b = ext.a, ext.b` element by element."""
    out: list[tuple[ast.AST, ast.AST]] = []
    for t in targets:
        if isinstance(t, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(t.elts) == len(value.elts):
            for te, ve in zip(t.elts, value.elts, strict=True):
                out.extend(assignment_pairs([te], ve))
        else:
            out.append((t, value))
    return out


def class_info(idx: ModuleIndex, cls: ast.ClassDef) -> ClassInfo:
    info = ClassInfo(node=cls, methods=methods_of(idx, cls))
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            info.values.setdefault(stmt.targets[0].id, []).append((stmt.value, None))
            q = _alias_target(idx, stmt.value)
            if q:
                info.aliases[stmt.targets[0].id] = q
    for fn in info.methods.values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("register_buffer", "register_parameter") and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                info.tensor_attrs.add(node.args[0].value)
                if node.func.attr == "register_parameter":
                    info.param_attrs.add(node.args[0].value)
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            for t, v in assignment_pairs(node.targets if isinstance(node, ast.Assign) else [node.target], node.value):
                if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    continue
                info.values.setdefault(t.attr, []).append((v, fn))
                _classify_attr(idx, info, fn, t.attr, _through_local(fn, v))
    return info


def _through_local(fn: ast.AST, value: ast.AST) -> ast.AST:
    """`blocks = nn.ModuleList(...); self.blocks = blocks`: the expression a local name was bound to."""
    if isinstance(value, ast.Name):
        found = [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == value.id]
        if len(found) == 1:
            return found[0]
    return value


def _classify_attr(idx: ModuleIndex, info: ClassInfo, fn: ast.AST, attr: str, v: ast.AST) -> None:
    q = idx.resolve(v.func) if isinstance(v, ast.Call) else None
    if _alias_target(idx, v):
        info.aliases[attr] = _alias_target(idx, v) or ""
    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in idx.classes:
        info.local_attrs[attr] = [v.func.id]
    elif q in _CONTAINERS:
        local, computing = _members(idx, fn, attr, v)
        if local:
            info.local_attrs[attr] = local  # followed; a torch layer beside them still computes
        if computing or not local:
            info.nn_attrs[attr] = q
    elif q in _COMPILERS:
        info.nn_attrs[attr] = q
    elif q == "torch.nn.Parameter" or (q or "").startswith(_TENSOR_FACTORIES) \
            and not (q or "").startswith("torch.nn.") and not (q or "").startswith("torch.utils."):
        info.tensor_attrs.add(attr)
        if q == "torch.nn.Parameter":
            info.param_attrs.add(attr)
    elif q and q.startswith("torch.nn.") and q[9:10].isupper():
        info.nn_attrs[attr] = q


def _contents(fn: ast.AST, attr: str, container: ast.Call) -> list[ast.AST]:
    """What a container holds: its arguments, the lists named or starred there (with what the method appends to
    them), and what the method appends or adds to `self.<attr>` itself."""
    local: set[str] = set()
    out: list[ast.AST] = []
    for a in list(container.args) + [k.value for k in container.keywords]:
        a = a.value if isinstance(a, ast.Starred) else a
        if isinstance(a, ast.Name):
            local.add(a.id)
            out += [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AugAssign) and n.value is not None
                    and any(isinstance(t, ast.Name) and t.id == a.id
                            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        else:
            out.append(a)
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in ("append", "extend", "insert", "add_module", "update", "__setitem__"):
            recv = n.func.value
            if (isinstance(recv, ast.Name) and recv.id in local) or (
                    isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"
                    and recv.attr == attr):
                out += list(n.args)
    return out


def _members(idx: ModuleIndex, fn: ast.AST, attr: str, container: ast.Call) -> tuple[list[str], bool]:
    """In-module classes a container is built from, and whether it may also hold a computing module (a torch.nn
    layer other than Identity/Flatten, or what a factory of unknown result returns)."""
    local, computing = [], False
    for part in _contents(fn, attr, container):
        for n in ast.walk(part):
            if not isinstance(n, ast.Call):
                continue
            q = idx.resolve(n.func) or ""
            if isinstance(n.func, ast.Name) and n.func.id in idx.classes:
                local.append(n.func.id)
            elif isinstance(n.func, ast.Name) and n.func.id in idx.functions:
                made = _made_by(idx, idx.functions[n.func.id])  # `[make_block(i) for i in range(n)]`
                local += made
                computing |= not made
            elif q.startswith("torch.nn.") and q[9:10].isupper() and q not in NN_NONCOMPUTE \
                    and q not in _CONTAINERS:
                computing = True
    return local, computing


def _made_by(idx: ModuleIndex, factory: ast.AST) -> list[str]:
    """In-module classes a module function returns instances of ([] when it may return anything else)."""
    out: list[str] = []
    for ret in (n for n in ast.walk(factory) if isinstance(n, ast.Return)):
        v = ret.value
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in idx.classes):
            return []
        out.append(v.func.id)
    return out


def _alias_target(idx: ModuleIndex, value: ast.AST) -> str | None:
    """Dotted function name a value stands for, looking through staticmethod/classmethod/partial."""
    if isinstance(value, ast.Call) and idx.resolve(value.func) in (
            "builtins.staticmethod", "builtins.classmethod", "functools.partial") and value.args:
        value = value.args[0]
    if isinstance(value, ast.Call):
        return None
    q = idx.resolve(value)
    return q if q and not q.startswith("builtins.") else None
