"""Which names reach the candidate's kernels: extension modules, their functions and the names bound to them.

forward analysis needs to know that `self.ext` is a `load_inline` module, that `self.op = ext.op` or a parameter
handed `ext` is a way into it, and which functions are Triton kernels. What classes hold is classes.py's job.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kernelmosaic.verify.static.classes import ClassInfo, assignment_pairs, class_info, methods_of
from kernelmosaic.verify.static.cuda_signatures import scalar_functions
from kernelmosaic.verify.static.fastform import RAW_KERNEL, RAW_MODULE
from kernelmosaic.verify.static.pyscope import ModuleIndex
from kernelmosaic.verify.static.sources import LOAD_FILES, LOAD_INLINE, Extension, find_triton_kernels

__all__ = ["ClassInfo", "Kernels", "class_info", "find_kernels", "methods_of", "is_raw_kernel", "is_raw_module",
           "is_kernel_callable", "is_kernel_container", "is_ext_value", "kernel_function_name", "kernel_named"]



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
    fn_attrs: set[str] = field(default_factory=set)
    """`self.<attr>` names (any class; class-body names too) bound to an extension function (`self.op = ext.op`,
    `op = staticmethod(ext.op)`, `self.fn = getattr(ext, name)`, `functools.partial(ext.op, ...)`)."""
    ext_methods: set[str] = field(default_factory=set)
    """Methods (any class) that return an extension module (`def _get(self): ... return self._mod`)."""
    fn_factories: set[str] = field(default_factory=set)
    """Module functions and methods that return an extension function."""
    containers: set[str] = field(default_factory=set)
    """Names and `self.<attr>`s (as `self.attr`) bound to a dict/list/tuple holding extension functions."""
    triton_aliases: set[str] = field(default_factory=set)
    """Names and `self.<attr>`s (as `self.attr`) bound to a Triton kernel (`self.kernel = add_kernel`)."""
    scalar_fns: set[str] = field(default_factory=set)
    """Extension functions whose C++ return type is not a tensor (`int64_t workspace_size(...)`), and the names
    (`self.attr` as such) bound to them."""


def is_ext_value(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """Whether an expression evaluates to an extension module."""
    if isinstance(node, ast.Call):
        if idx.resolve(node.func) in (LOAD_INLINE, LOAD_FILES):
            return True
        if isinstance(node.func, ast.Name):
            return node.func.id in k.ext_factories
        return _self_attr(node.func) in k.ext_methods
    if isinstance(node, ast.Name):
        return node.id in k.ext_names
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr in k.ext_attrs
    return False


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


_WRAPPERS = ("functools.partial", "builtins.staticmethod", "builtins.classmethod")


def is_kernel_callable(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """Whether an expression evaluates to a function of an extension (calling it calls into the extension)."""
    if isinstance(node, ast.Attribute):
        if is_ext_value(idx, k, node.value) or _self_attr(node) in k.fn_attrs:
            return True
        parts = (idx.resolve(node) or "").split(".")  # an operator the extension registers: `torch.ops.ns.op`
        return len(parts) >= 4 and parts[:2] == ["torch", "ops"] and parts[2] in k.op_namespaces
    if isinstance(node, ast.Name):
        return node.id in k.ext_functions
    if isinstance(node, ast.IfExp):  # `ext.relu_cuda if x.is_cuda else ext.relu_cpu`
        return is_kernel_callable(idx, k, node.body) or is_kernel_callable(idx, k, node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(is_kernel_callable(idx, k, v) for v in node.values)
    if isinstance(node, ast.Call):
        q = idx.resolve(node.func)
        if q in _WRAPPERS and node.args:
            return is_kernel_callable(idx, k, node.args[0])
        if q == "builtins.getattr" and node.args:  # `getattr(ext, f"relu_{dtype}")`: any attribute is its function
            return is_ext_value(idx, k, node.args[0])
        f = node.func
        return (isinstance(f, ast.Name) and f.id in k.fn_factories) or _self_attr(f) in k.fn_factories
    return False


def kernel_function_name(idx: ModuleIndex, k: Kernels, node: ast.AST) -> str | None:
    """The extension function (or alias of one) an expression names, for looking up its return type."""
    if isinstance(node, ast.Attribute) and is_ext_value(idx, k, node.value):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    attr = _self_attr(node)
    return f"self.{attr}" if attr else None


def is_kernel_container(idx: ModuleIndex, k: Kernels, node: ast.AST) -> bool:
    """A dict, list or tuple (or a name bound to one) that holds extension functions: `OPS = {"relu": ext.relu}`."""
    if isinstance(node, ast.Dict):
        return any(is_kernel_callable(idx, k, v) or is_kernel_container(idx, k, v) for v in node.values)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(is_kernel_callable(idx, k, v) or is_kernel_container(idx, k, v) for v in node.elts)
    if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
        return is_kernel_callable(idx, k, node.elt)
    if isinstance(node, ast.DictComp):
        return is_kernel_callable(idx, k, node.value)
    return _bound_name(node) in k.containers


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
    for e in exts:
        k.scalar_fns |= scalar_functions(e)
    # A few rounds reach a fixpoint for chains like `ext = get_ext()`, `self.ext = ext`, `f = self.ext.f`.
    fns = [n for n in ast.walk(idx.tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for _ in range(5):
        for fn in fns:
            returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
            method = isinstance(idx.parent(fn), ast.ClassDef)
            if any(is_ext_value(idx, k, v) for v in returns):
                (k.ext_methods if method else k.ext_factories).add(fn.name)
            if any(is_kernel_callable(idx, k, v) for v in returns):
                k.fn_factories.add(fn.name)
        for node in ast.walk(idx.tree):
            if isinstance(node, ast.Call):
                _bind_arguments(idx, k, node)
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            in_class = isinstance(idx.parent(node), ast.ClassDef)
            for t, value in assignment_pairs(node.targets if isinstance(node, ast.Assign) else [node.target], node.value):
                _bind(idx, k, t, value, in_class)
    return k


def kernel_named(idx: ModuleIndex, k: Kernels) -> bool:
    """Whether any code reads a name through which a kernel can be reached (beyond the binding that defines it).
    When none does, no call can reach a kernel, however dynamic the calls are."""
    names = k.ext_names | k.ext_functions | k.ext_factories | k.fn_factories | k.containers | k.raw_names \
        | k.raw_modules | set(k.triton)
    attrs = k.ext_attrs | k.fn_attrs | k.ext_methods | k.fn_factories
    for node in ast.walk(idx.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _self_attr(node) in attrs:
            return True
        if isinstance(node, ast.Attribute) and idx.resolve(node) in {f"torch.ops.{ns}" for ns in
                                                                    k.op_namespaces | set(k.py_ops)}:
            return True
        if isinstance(node, ast.Call) and idx.resolve(node.func) in (LOAD_INLINE, LOAD_FILES) \
                and not isinstance(idx.parent(node), ast.Assign | ast.AnnAssign):
            return True  # `load_inline(...).op` used where it is built
    return False


def _bind_arguments(idx: ModuleIndex, k: Kernels, call: ast.Call) -> None:
    """An extension (or one of its functions) passed to an in-module function, class or method binds the parameter
    it lands in: `make_gelu(ext)` then `ext.new_gelu(t)` inside, `Block(ext.op)` then `self.op = op`."""
    f = call.func
    targets: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    if isinstance(f, ast.Name) and f.id in idx.functions:
        targets = [idx.functions[f.id]]
    elif isinstance(f, ast.Name) and f.id in idx.classes:
        targets = [m for m in [methods_of(idx, idx.classes[f.id]).get("__init__")] if m is not None]
    elif _self_attr(f) is not None:
        targets = [m for c in idx.classes.values() for m in [methods_of(idx, c).get(f.attr)] if m is not None]
    for fn in targets:
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if params and params[0] in ("self", "cls") and not (isinstance(f, ast.Name) and f.id in idx.functions):
            params = params[1:]
        pairs = list(zip(params, call.args, strict=False)) + [(kw.arg, kw.value) for kw in call.keywords if kw.arg]
        for name, value in pairs:
            if isinstance(value, ast.Starred):
                continue
            if is_ext_value(idx, k, value):
                k.ext_names.add(name)
            elif is_kernel_callable(idx, k, value):
                k.ext_functions.add(name)


def _bind(idx: ModuleIndex, k: Kernels, t: ast.AST, value: ast.AST, in_class: bool) -> None:
    """Record what one assignment target now holds (extension, one of its functions, a container of them...)."""
    if isinstance(t, ast.Subscript) and _bound_name(t.value) and (
            is_kernel_callable(idx, k, value) or is_ext_value(idx, k, value)):
        k.containers.add(_bound_name(t.value) or "")  # `self.ops[name] = getattr(ext, name)`
        return
    name = _bound_name(t)
    if name and is_raw_kernel(idx, k, value):
        k.raw_names.add(name)
    elif name and is_raw_module(idx, k, value):
        k.raw_modules.add(name)
    if name is None:
        return
    attr = _self_attr(t)
    if (isinstance(value, ast.Name) and value.id in k.triton) or _bound_name(value) in k.triton_aliases:
        k.triton_aliases.add(name)
    if is_ext_value(idx, k, value):
        if attr is not None:
            k.ext_attrs.add(attr)
        else:
            k.ext_names.add(name)
    elif is_kernel_callable(idx, k, value):
        if attr is not None or in_class:  # a class-body name is read as `self.<name>`
            k.fn_attrs.add(attr or name)
        else:
            k.ext_functions.add(name)
        target = kernel_function_name(idx, k, value.args[0] if isinstance(value, ast.Call) and value.args else value)
        if target in k.scalar_fns:
            k.scalar_fns.add(name)
    elif is_kernel_container(idx, k, value):
        k.containers.add(name)


