"""What the candidate's classes hold: nn submodules, tensors, extension handles, and which names are kernels.

forward analysis needs to know that `self.conv` is an `nn.Conv2d` (calling it computes), that `self.ext`
is a `load_inline` module (calling into it launches a kernel), and which functions are Triton kernels.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kernelmosaic.verify.static.cuda_signatures import scalar_functions
from kernelmosaic.verify.static.fastform import RAW_KERNEL, RAW_MODULE
from kernelmosaic.verify.static.pyscope import ModuleIndex
from kernelmosaic.verify.static.sources import LOAD_FILES, LOAD_INLINE, Extension, find_triton_kernels
from kernelmosaic.verify.static.vocab import NN_NONCOMPUTE

__all__ = ["ClassInfo", "Kernels", "class_info", "find_kernels", "methods_of", "is_raw_kernel", "is_raw_module",
           "is_kernel_callable", "is_kernel_container", "is_ext_value", "kernel_function_name", "kernel_named"]

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
    fn_attrs: set[str] = field(default_factory=set)
    """`self.<attr>` names (any class; class-body names too) bound to an extension function (`self.op = ext.op`,
    `op = staticmethod(ext.op)`, `self.fn = getattr(ext, name)`, `functools.partial(ext.op, ...)`)."""
    ext_methods: set[str] = field(default_factory=set)
    """Methods (any class) that return an extension module (`def _get(self): ... return self._mod`)."""
    fn_factories: set[str] = field(default_factory=set)
    """Module functions and methods that return an extension function."""
    containers: set[str] = field(default_factory=set)
    """Names and `self.<attr>`s (as `self.attr`) bound to a dict/list/tuple holding extension functions."""
    scalar_fns: set[str] = field(default_factory=set)
    """Extension functions whose C++ return type is not a tensor (`int64_t workspace_size(...)`), and the names
    (`self.attr` as such) bound to them."""


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
        return is_ext_value(idx, k, node.value) or _self_attr(node) in k.fn_attrs
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


def _pairs(targets: list[ast.expr], value: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) pairs of an assignment, unpacking `a, b = ext.a, ext.b` element by element."""
    out: list[tuple[ast.AST, ast.AST]] = []
    for t in targets:
        if isinstance(t, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(t.elts) == len(value.elts):
            for te, ve in zip(t.elts, value.elts, strict=True):
                out.extend(_pairs([te], ve))
        else:
            out.append((t, value))
    return out


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
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            in_class = isinstance(idx.parent(node), ast.ClassDef)
            for t, value in _pairs(node.targets if isinstance(node, ast.Assign) else [node.target], node.value):
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
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            for t, v in _pairs(node.targets if isinstance(node, ast.Assign) else [node.target], node.value):
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
