"""Tensor-ness of names in one function reached from forward: what holds a tensor, an nn module, a kernel.

Tracked on purpose narrowly (parameters passed tensors, allocations, kernel outputs, views of those) so
that shape arithmetic like `(n + 255) // 256` is never mistaken for compute.
"""

from __future__ import annotations

import ast

from kernelmosaic.verify.static.callables import Resolver, Targets, local_values
from kernelmosaic.verify.static.model_index import (
    ClassInfo,
    Kernels,
    class_info,
    is_ext_value,
    is_kernel_callable,
    is_kernel_container,
    is_raw_kernel,
    kernel_function_name,
)
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.vocab import NN_NONCOMPUTE, TRITON_WRAPPERS

__all__ = ["TensorScope"]

_NOT_TENSOR_RESULT = {"size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset", "element_size",
                      "is_contiguous", "get_device", "data_ptr", "item", "tolist", "__len__", "is_cuda", "numpy",
                      "untyped_storage", "dim_order", "is_floating_point", "type"}
_TENSOR_ATTRS = {"T", "mT", "H", "mH", "data", "real", "imag", "grad", "weight", "bias"}
TORCH_NOT_TENSOR = {
    "torch.Size", "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo", "torch.is_tensor",
    "torch.is_floating_point", "torch.is_complex", "torch.numel", "torch.get_default_dtype", "torch.is_grad_enabled",
    "torch.promote_types", "torch.result_type", "torch.broadcast_shapes", "torch.no_grad", "torch.inference_mode",
    "torch.enable_grad", "torch.set_grad_enabled", "torch.get_num_threads", "torch.get_num_interop_threads",
    "torch.is_inference_mode_enabled", "torch.typename", "torch.jit.is_scripting", "torch.jit.is_tracing",
    "torch.compiler.is_compiling",
}
"""torch callables whose result is a size, a device, a dtype, a flag or a context: comparing one is no tensor work."""
_PLAIN_BUILTINS = {"builtins.list", "builtins.dict", "builtins.set", "builtins.tuple", "builtins.sorted",
                   "builtins.range", "builtins.str", "builtins.int", "builtins.float", "builtins.len"}


class TensorScope:
    """Names of one function and what they hold; `FunctionScope` adds the checks."""

    def __init__(self, idx: ModuleIndex, k: Kernels, cls: ClassInfo | None, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                 tensor_params: set[str], policy: StaticPolicy, resolver: Resolver | None = None):
        self.idx, self.k, self.cls, self.fn, self.policy = idx, k, cls, fn, policy
        self.resolver = resolver or Resolver(idx, k, lambda name: class_info(idx, idx.classes[name]))
        self.aliases = idx.scope_aliases(fn.body, idx.aliases)
        self.tensors = set(tensor_params)
        self.nn_names: set[str] = set()
        self.plain: set[str] = set()
        self.sizes: set[str] = set()
        """Names holding a tensor made from a shape or sizes (`size_tensor`): size arithmetic, not data."""
        self.ints: set[str] = set()
        """Names assigned an expression of sizes only (`n = x.shape[0]`)."""
        self.arrays: set[str] = set()
        """Names holding a NumPy view or copy of a tensor's values (`a = x.numpy()`)."""
        self.local_names: dict[str, list[str]] = {}
        self.calls: list[tuple[ast.AST | str, ClassInfo | None, set[str]]] = []
        self.launched = False
        self.unresolved: list[ast.Call] = []
        """Calls whose callee could not be resolved statically (it may or may not be a kernel)."""
        self.hits: list[Hit] = []
        self.extra = set(policy.allowed_torch_ops)

    # ---- what names hold --------------------------------------------------------------------------
    def _bind(self) -> None:
        stores = sorted((n for n in ast.walk(self.fn) if isinstance(n, ast.Assign | ast.AnnAssign | ast.For
                                                                     | ast.AugAssign | ast.withitem)),
                        key=lambda n: getattr(n, "lineno", 0))
        for _ in range(3):
            self._appended_arrays()
            for n in stores:
                if isinstance(n, ast.For):
                    target, value = n.target, n.iter
                elif isinstance(n, ast.withitem):
                    target, value = n.optional_vars, n.context_expr
                elif isinstance(n, ast.Assign):
                    target, value = (n.targets[0] if len(n.targets) == 1 else None), n.value
                else:
                    target, value = n.target, n.value
                if target is None or value is None:
                    continue
                names = _bound_names(target)
                if self.size_tensor(value):
                    self.sizes.update(names)
                    continue
                if self.array_of_tensor(value) or self._holds_array(value):
                    self.arrays.update(names)
                    continue
                if isinstance(n, ast.Assign | ast.AnnAssign) and self._sizes(value):
                    self.ints.update(names)
                if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp
                              | ast.Constant | ast.JoinedStr) or (isinstance(value, ast.Call) and self.idx.resolve(
                                  value.func) in _PLAIN_BUILTINS):
                    self.plain.update(names)
                elif self.local_modules(value):
                    self.local_names.update({name: self.local_modules(value) for name in names})
                    if isinstance(n, ast.For) and self._is_nn_container(value):
                        self.nn_names.update(names)  # a container mixing own blocks and torch layers
                elif self.is_nn(value) or (isinstance(n, ast.For) and self._is_nn_container(value)):
                    self.nn_names.update(names)
                elif self.is_tensor(value) or (isinstance(n, ast.For) and self._iter_of_tensors(value)):
                    self.tensors.update(names)

    def _iter_of_tensors(self, value: ast.AST) -> bool:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            return value.func.attr in ("split", "chunk", "unbind") and self.is_tensor(value.func.value)
        return self.is_tensor(value)

    def class_named(self, node: ast.AST) -> str | None:
        """The in-module class an expression names: its name, or a classmethod's `cls` (the method's own class)."""
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.idx.classes:
            return node.id
        first = (self.fn.args.posonlyargs + self.fn.args.args)[:1]
        if self.cls and first and first[0].arg == node.id and any(
                self.idx.resolve(d) == "builtins.classmethod" for d in self.fn.decorator_list):
            return self.cls.node.name
        return None

    def _self_attr(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None

    def _is_nn_container(self, node: ast.AST) -> bool:
        attr = self._self_attr(node)
        return bool(self.cls and attr in self.cls.nn_attrs and self.cls.nn_attrs[attr] not in NN_NONCOMPUTE)

    def local_modules(self, node: ast.AST) -> list[str]:
        """In-module classes an expression holds instances of (`self.block`, `self.blocks[0]`, a loop variable)."""
        if isinstance(node, ast.Name):
            return self.local_names.get(node.id, [])
        if isinstance(node, ast.Subscript):
            return self.local_modules(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.idx.classes:
            return [node.func.id]  # `h = Helper()`: an instance made here
        attr = self._self_attr(node)
        return self.cls.local_attrs.get(attr, []) if self.cls and attr else []

    def is_nn(self, node: ast.AST) -> bool:
        """A computing nn module (`self.conv`, `self.layers[0]`, a loop variable over `self.layers`)."""
        if isinstance(node, ast.Name):
            return node.id in self.nn_names
        if isinstance(node, ast.Subscript):
            return self.is_nn(node.value)
        attr = self._self_attr(node)
        if attr == "_modules":
            return True
        return bool(self.cls and attr in self.cls.nn_attrs and self.cls.nn_attrs[attr] not in NN_NONCOMPUTE)

    def _holds_array(self, value: ast.AST) -> bool:
        """A list, tuple, set or dict (or a comprehension of one) holding a NumPy array of a tensor's values: its
        elements are such arrays too (`panels = [a.numpy(), b.numpy()]; np.matmul(panels[0], panels[1])`)."""
        if isinstance(value, ast.List | ast.Tuple | ast.Set):
            return any(self.array_of_tensor(e) or self._holds_array(e) for e in value.elts)
        if isinstance(value, ast.Dict):
            return any(v is not None and (self.array_of_tensor(v) or self._holds_array(v)) for v in value.values)
        if isinstance(value, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.array_of_tensor(value.elt)
        if isinstance(value, ast.DictComp):
            return self.array_of_tensor(value.value)
        return False

    def _appended_arrays(self) -> None:
        """Names of containers an array of a tensor's values is appended or inserted into (`held.append(x.numpy())`)."""
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.attr in ("append", "extend", "insert", "add", "setdefault") \
                    and any(self.array_of_tensor(a) or self._holds_array(a) for a in n.args):
                self.arrays.add(n.func.value.id)

    def array_of_tensor(self, node: ast.AST) -> bool:
        """A NumPy array holding a tensor's values: `x.numpy()`, `np.asarray(x)`, a name bound to one, its `.T`, a
        slice of it."""
        if isinstance(node, ast.Name):
            return node.id in self.arrays
        if isinstance(node, ast.Attribute) and node.attr == "T" or isinstance(node, ast.Subscript):
            return self.array_of_tensor(node.value)
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "numpy" and not node.args:
            return self.is_tensor(f.value)
        q = self.idx.resolve(f, self.aliases) or ""
        return q in ("numpy.asarray", "numpy.array", "numpy.ascontiguousarray") and bool(node.args) \
            and (self.is_tensor(node.args[0]) or self.array_of_tensor(node.args[0]))

    def size_tensor(self, node: ast.AST) -> bool:
        """A tensor forward made from a shape or from sizes (`torch.tensor(x.shape)`, `torch.tensor([n, c])`), or a
        method's result on one (`.prod()`): arithmetic on it is size arithmetic, not compute on the problem's data."""
        if isinstance(node, ast.Name):
            return node.id in self.sizes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and self.size_tensor(node.func.value):
            return True
        if not (isinstance(node, ast.Call) and node.args
                and self.idx.resolve(node.func, self.aliases) in ("torch.tensor", "torch.as_tensor", "torch.LongTensor")):
            return False
        return self._sizes(node.args[0])

    def _sizes(self, node: ast.AST) -> bool:
        """An expression of sizes only: a tensor's `.shape`/`.size()` (whole, indexed or sliced), ints, names
        holding neither tensors nor data, and lists/tuples of those."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int)
        if isinstance(node, ast.List | ast.Tuple):
            return all(self._sizes(e) for e in node.elts)
        if isinstance(node, ast.Subscript):
            return self._sizes(node.value)
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            return True
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in ("size", "dim", "numel"):
                return True
            return self.idx.resolve(f, self.aliases) in ("builtins.list", "builtins.tuple", "builtins.len") \
                and all(self._sizes(a) for a in node.args)
        if isinstance(node, ast.Name):
            return node.id in self.sizes or (node.id not in self.tensors and node.id in self.ints)
        return False

    def is_tensor(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.tensors
        if isinstance(node, ast.Attribute):
            if node.attr in _TENSOR_ATTRS and (self.is_tensor(node.value) or self.is_nn(node.value)):
                return True
            attr = self._self_attr(node)
            return bool(self.cls and attr in self.cls.tensor_attrs)
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value) or (isinstance(node.value, ast.Call) and self.is_tensor(node.value))
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_tensor(node.operand)
        if isinstance(node, ast.IfExp):
            return self.is_tensor(node.body) or self.is_tensor(node.orelse)
        if isinstance(node, ast.Call):
            if self.size_tensor(node):
                return False
            f = node.func
            q = self.idx.resolve(f, self.aliases) or ""
            if q.startswith("torch.") and not q.startswith(("torch.cuda.", "torch.utils.")):
                return q not in TORCH_NOT_TENSOR
            if self.is_nn(f):
                return True
            if self._is_kernel_call(node):
                return not self._scalar_kernel(node)
            if isinstance(f, ast.Attribute) and self.is_tensor(f.value):
                return f.attr not in _NOT_TENSOR_RESULT
        return False

    # ---- kernels ------------------------------------------------------------------------------------
    def is_raw_launch(self, node: ast.Call) -> bool:
        """A call of a CuPy RawKernel (the fast form): it launches the candidate's kernel."""
        return is_raw_kernel(self.idx, self.k, node.func)

    def targets(self, func: ast.AST) -> Targets:
        """What calling `func` from this function may run (see callables.py)."""
        return self.resolver.of(func, self.fn, self.cls)

    def _scalar_kernel(self, node: ast.Call) -> bool:
        """A call of an extension function whose C++ return type is not a tensor (an int, a size, a float)."""
        f = node.func
        if isinstance(f, ast.Call) and f.args:  # `partial(ext.op, ...)(x)`
            f = f.args[0]
        return kernel_function_name(self.idx, self.k, f) in self.k.scalar_fns

    def _is_kernel_call(self, node: ast.Call) -> bool:
        f = node.func
        if self.is_raw_launch(node):
            return True
        if isinstance(f, ast.Name) and (f.id in self.aliases or self.idx.resolve(f, self.aliases)):
            return False  # a name bound here to a dotted name (`op = torch.relu`) is that name, not a kernel
        if isinstance(f, ast.Name) and f.id in local_values(self.fn):
            # Bound in this function: what it holds here decides, not a same-named binding elsewhere.
            return any(is_kernel_callable(self.idx, self.k, v) for v in local_values(self.fn)[f.id])
        attr = self._self_attr(f)
        if attr is not None and self.cls is not None and attr in self.cls.values:
            return any(is_kernel_callable(self.idx, self.k, v) for v, _ in self.cls.values[attr])
        if attr is not None and self.cls is not None and attr in self.cls.aliases:
            return False
        if is_kernel_callable(self.idx, self.k, f):
            return True
        if isinstance(f, ast.Subscript) and is_kernel_container(self.idx, self.k, f.value):
            return True
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in self.k.triton:
            return True
        if isinstance(f, ast.Subscript) and _bound(f.value) in self.k.triton_aliases:
            return True  # `self.kernel[grid](...)` after `self.kernel = add_kernel`
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Call) and f.value.args \
                and self.idx.resolve(f.value.func) in TRITON_WRAPPERS and isinstance(f.value.args[0], ast.Name) \
                and f.value.args[0].id in self.k.triton:
            return True  # `wrap_triton(add_kernel)[grid](...)` inside a `@torch.library.triton_op`
        if isinstance(f, ast.Attribute) and f.attr == "run" and isinstance(f.value, ast.Name) \
                and f.value.id in self.k.triton:
            return True
        q = self.idx.resolve(f, self.aliases) or ""
        parts = q.split(".")
        return len(parts) >= 4 and parts[:2] == ["torch", "ops"] and parts[2] in self.k.op_namespaces

    def _plain(self, recv: ast.AST) -> bool:
        """Receivers that are certainly not tensors of the problem's data: literals, containers, modules, extensions,
        a tensor made from a shape (`size_tensor`) and what its methods return."""
        if isinstance(recv, ast.Constant | ast.List | ast.Dict | ast.Set | ast.JoinedStr):
            return True
        if self.size_tensor(recv):
            return True
        if isinstance(recv, ast.Name) and recv.id in self.plain:
            return True
        return is_ext_value(self.idx, self.k, recv) or self.idx.resolve(recv, self.aliases) is not None


def _bound(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _bound_names(target: ast.AST) -> list[str]:
    """The names an assignment target binds or writes into: `a, b = ...` binds both, `buf[:, i:j] = ...` writes into
    `buf` (its indices `i`, `j` are read, not bound), `ctx.k = v` sets an attribute of an object (no name)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in _bound_names(elt)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, ast.Subscript):
        base = target.value
        while isinstance(base, ast.Subscript):
            base = base.value
        return [base.id] if isinstance(base, ast.Name) else []
    return []
