"""What the candidate's classes hold: nn submodules, tensors, extension handles, and which names are kernels.

forward analysis needs to know that `self.conv` is an `nn.Conv2d` (calling it computes), that `self.ext`
is a `load_inline` module (calling into it launches a kernel), and which functions are Triton kernels.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kernelmosaic.verify.static.fastform import RAW_KERNEL, RAW_MODULE
from kernelmosaic.verify.static.pyscope import ModuleIndex
from kernelmosaic.verify.static.sources import LOAD_FILES, LOAD_INLINE, Extension, find_triton_kernels

__all__ = ["ClassInfo", "Kernels", "class_info", "find_kernels", "methods_of", "is_raw_kernel", "is_raw_module"]

_TENSOR_FACTORIES = ("torch.", )
_CONTAINERS = {"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"}
# Wrappers whose result, when called, runs PyTorch-generated code.
_COMPILERS = {"torch.compile", "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module",
              "torch.cuda.make_graphed_callables"}


@dataclass
class Kernels:
    """Names through which the candidate reaches its own kernels."""

    ext_names: set[str] = field(default_factory=set)
    """Module/local names bound to an extension module."""
    ext_factories: set[str] = field(default_factory=set)
    """Module functions that return an extension module."""
    ext_functions: set[str] = field(default_factory=set)
    """Names bound to a function of an extension (`add = ext.add`)."""
    triton: dict[str, ast.FunctionDef] = field(default_factory=dict)
    op_namespaces: set[str] = field(default_factory=set)
    """`torch.ops` namespaces the extensions register with TORCH_LIBRARY."""
    ext_attrs: set[str] = field(default_factory=set)
    """`self.<attr>` names (any class) bound to an extension module."""
    py_ops: dict[str, list] = field(default_factory=dict)
    """`torch.ops` namespace -> functions registered for it in Python (`@torch.library.custom_op("ns::op")`)."""
    raw_names: set[str] = field(default_factory=set)
    """Names and `self.<attr>`s (as `self.attr`) bound to a CuPy RawKernel (`cupy.RawKernel(...)`,
    `module.get_function(...)`)."""
    raw_modules: set[str] = field(default_factory=set)
    """Names and `self.<attr>`s (as `self.attr`) bound to a `cupy.RawModule(...)`."""


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
    aliases: dict[str, str] = field(default_factory=dict)
    """attr -> dotted name it is bound to (`op = staticmethod(torch.matmul)`, `self.op = F.relu`)."""


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


def is_ext_value(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """Whether an expression evaluates to an extension module."""
    if isinstance(node, ast.Call):
        if idx.resolve(node.func) in (LOAD_INLINE, LOAD_FILES):
            return True
        return isinstance(node.func, ast.Name) and node.func.id in k.ext_factories
    if isinstance(node, ast.Name):
        return node.id in k.ext_names
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr in k.ext_attrs
    return False


def _bound_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def is_raw_module(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """Whether an expression evaluates to a CuPy RawModule."""
    if isinstance(node, ast.Call):
        return idx.resolve(node.func) == RAW_MODULE
    return _bound_name(node) in k.raw_modules


def is_raw_kernel(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """Whether an expression evaluates to a CuPy RawKernel (calling it launches the candidate's kernel)."""
    if isinstance(node, ast.Call):
        f = node.func
        return idx.resolve(f) == RAW_KERNEL or (isinstance(f, ast.Attribute) and f.attr == "get_function"
                                                and is_raw_module(idx, k, f.value))
    return _bound_name(node) in k.raw_names


def find_kernels(idx: ModuleIndex, exts: list[Extension]) -> Kernels:
    k = Kernels(triton=find_triton_kernels(idx))
    for fn in idx.functions.values():
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Call) and (idx.resolve(dec.func) or "").startswith("torch.library.") \
                    and dec.args and isinstance(dec.args[0], ast.Constant) and isinstance(dec.args[0].value, str) \
                    and "::" in dec.args[0].value:
                k.py_ops.setdefault(dec.args[0].value.split("::")[0], []).append(fn)
    for e in exts:
        k.op_namespaces.update(re.findall(r"TORCH_LIBRARY(?:_FRAGMENT)?\s*\(\s*(\w+)", e.cpp.text + e.cuda.text))
    # A few rounds reach a fixpoint for chains like `ext = get_ext()`, `self.ext = ext`, `f = self.ext.f`.
    for _ in range(4):
        for name, fn in idx.functions.items():
            if any(isinstance(n, ast.Return) and n.value is not None and is_ext_value(idx, k, n.value)
                   for n in ast.walk(fn)):
                k.ext_factories.add(name)
        for node in ast.walk(idx.tree):
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = _bound_name(t)
                if name and is_raw_kernel(idx, k, node.value):
                    k.raw_names.add(name)
                elif name and is_raw_module(idx, k, node.value):
                    k.raw_modules.add(name)
                if is_ext_value(idx, k, node.value):
                    if isinstance(t, ast.Name):
                        k.ext_names.add(t.id)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        k.ext_attrs.add(t.attr)
                elif isinstance(node.value, ast.Attribute) and is_ext_value(idx, k, node.value.value) \
                        and isinstance(t, ast.Name):
                    k.ext_functions.add(t.id)
    return k


def class_info(idx: ModuleIndex, cls: ast.ClassDef) -> ClassInfo:
    info = ClassInfo(node=cls, methods=methods_of(idx, cls))
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            q = _alias_target(idx, stmt.value)
            if q:
                info.aliases[stmt.targets[0].id] = q
    for fn in info.methods.values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("register_buffer", "register_parameter") and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                info.tensor_attrs.add(node.args[0].value)
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    continue
                v = node.value
                q = idx.resolve(v.func) if isinstance(v, ast.Call) else None
                if _alias_target(idx, v):
                    info.aliases[t.attr] = _alias_target(idx, v) or ""
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in idx.classes:
                    info.local_attrs[t.attr] = [v.func.id]
                elif q in _CONTAINERS and _local_only(idx, v):
                    info.local_attrs[t.attr] = _local_only(idx, v)
                elif q in _COMPILERS:
                    info.nn_attrs[t.attr] = q
                elif q == "torch.nn.Parameter" or (q or "").startswith(_TENSOR_FACTORIES) \
                        and not (q or "").startswith("torch.nn.") and not (q or "").startswith("torch.utils."):
                    info.tensor_attrs.add(t.attr)
                elif q and q.startswith("torch.nn.") and q[9:10].isupper():
                    info.nn_attrs[t.attr] = q
    return info


def _local_only(idx: ModuleIndex, container: ast.Call) -> list[str]:
    """In-module classes a container is built from, or [] when it also holds torch.nn modules."""
    local, other = [], False
    for n in ast.walk(container):
        if n is container or not isinstance(n, ast.Call):
            continue
        if isinstance(n.func, ast.Name) and n.func.id in idx.classes:
            local.append(n.func.id)
        elif (idx.resolve(n.func) or "").startswith("torch.nn."):
            other = True
    return [] if other else local


def _alias_target(idx: ModuleIndex, value: ast.AST) -> str | None:
    """Dotted function name a value stands for, looking through staticmethod/classmethod/partial."""
    if isinstance(value, ast.Call) and idx.resolve(value.func) in (
            "builtins.staticmethod", "builtins.classmethod", "functools.partial") and value.args:
        value = value.args[0]
    if isinstance(value, ast.Call):
        return None
    q = idx.resolve(value)
    return q if q and not q.startswith("builtins.") else None
