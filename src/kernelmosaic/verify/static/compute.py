"""Judges one function reached from forward: PyTorch compute, exception fallbacks, state kept across calls.

Rules: torch-compute, torch-aux-op, try-fallback, caching. What names hold is `TensorScope`'s job.
"""

from __future__ import annotations

import ast

from kernelmosaic.verify.static.classes import methods_of
from kernelmosaic.verify.static.fastform import on_current_stream
from kernelmosaic.verify.static.guards import guarded_by_metadata
from kernelmosaic.verify.static.model_index import is_ext_value, is_raw_kernel, is_raw_module
from kernelmosaic.verify.static.module_rules import classify_call
from kernelmosaic.verify.static.pyscope import Hit
from kernelmosaic.verify.static.tensors import TensorScope
from kernelmosaic.verify.static.vocab import (
    TENSOR_METHODS_ALLOWED,
    TENSOR_METHODS_COMPUTE,
    TORCH_ALLOWED,
    TORCH_AUX,
    TORCH_NONCALL_OK,
)

__all__ = ["FunctionScope"]

_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor,
          ast.LShift, ast.RShift)
_NN_METHODS_OK = {"parameters", "named_parameters", "buffers", "named_buffers", "children", "modules",
                  "state_dict", "to", "cuda", "cpu", "float", "half", "train", "eval", "requires_grad_",
                  "extra_repr", "register_buffer", "register_parameter"}
_BUILTIN_COMPUTE = {"builtins.sum", "builtins.abs", "builtins.max", "builtins.min", "builtins.pow",
                    "builtins.round", "builtins.sorted", "builtins.divmod"}
_NUMPY_NOT_COMPUTE = {"numpy.asarray", "numpy.array", "numpy.ascontiguousarray", "numpy.shape", "numpy.ndim",
                      "numpy.size", "numpy.copyto", "numpy.empty_like", "numpy.zeros_like", "numpy.ones_like",
                      "numpy.full_like", "numpy.result_type", "numpy.dtype"}
"""NumPy calls that describe, allocate or copy a tensor's values: the rest compute (`np.matmul(x.numpy(), ...)`)."""
_COMPUTE_NAMESPACES = ("torch.nn.functional.", "torch.ops.aten.", "torch.special.", "torch.linalg.", "torch.fft.")
_DICT_LOOKUPS = {"get", "setdefault", "pop", "__contains__", "__getitem__"}
_OPERATOR_ARITH = {"matmul", "add", "sub", "mul", "truediv", "floordiv", "pow", "neg", "abs", "mod"}
# Methods whose result, used as a lookup key, identifies an input (its address or its values).
_KEY_METHODS = {"data_ptr", "item", "tolist", "untyped_storage", "storage"}
_COUNTERS = {"num_batches_tracked"}
"""Module buffers that count, not compute: BatchNorm's batches seen."""
_COUNTER_STEPS = {"add_", "fill_", "zero_"}
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical"}


class FunctionScope(TensorScope):
    """Checks one reachable function; fills `calls` (what it reaches) and `launched`."""

    # ---- checks -------------------------------------------------------------------------------------
    def check(self) -> list[Hit]:
        self._bind()
        for dec in self.fn.decorator_list:
            q = self.idx.resolve(dec.func if isinstance(dec, ast.Call) else dec) or ""
            if self._torch_compute_name(q):
                self._compute(dec, f"is decorated with `{q}`")
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.MatMult):
                    self._compute(node, "uses the `@` operator")
                elif isinstance(node.op, _ARITH) and (self.is_tensor(node.left) or self.is_tensor(node.right)):
                    self._compute(node, "does tensor arithmetic in Python")
            elif isinstance(node, ast.AugAssign):
                if isinstance(node.op, ast.MatMult) or self.is_tensor(node.target) or self.is_tensor(node.value):
                    self._compute(node, "does in-place tensor arithmetic in Python")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Invert) \
                    and self.is_tensor(node.operand):
                self._compute(node, "negates a tensor in Python")
            elif isinstance(node, ast.Compare) and not any(isinstance(o, ast.Is | ast.IsNot | ast.In | ast.NotIn)
                                                            for o in node.ops):
                if any(self.is_tensor(x) for x in [node.left, *node.comparators]):
                    self._compute(node, "compares tensors in Python")
            elif isinstance(node, ast.Try | ast.TryStar):
                self._try(node)
            elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
                self._reference(node)
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                self._state(node)
            if isinstance(node, ast.Subscript | ast.Compare | ast.Call):
                self._identity_key(node)
        return self.hits

    def _apply_params(self, cls_name: str, method: str, tensor_args: list[bool]) -> set[str]:
        """`Fn.apply(x, dim)` of an autograd.Function: the parameters of its `forward` (after `ctx`) that get a
        tensor here, so `dim != x.dim() - 1` on an int argument is size arithmetic; empty (every parameter then
        counts as a tensor, `_Reach.add_class`) for any other call of a class."""
        methods = methods_of(self.idx, self.idx.classes[cls_name])  # as `_Reach.add_class` sees them: bases too
        forward = methods.get("forward")
        if method != "apply" or forward is None:
            return set()
        # forward(ctx, ...) unless the class takes its context in setup_context (forward(*inputs), PyTorch 2.0 on)
        params = forward.args.args if "setup_context" in methods else forward.args.args[1:]
        return {a.arg for a, t in zip(params, tensor_args, strict=False) if t}

    def _compute(self, node: ast.AST, what: str) -> None:
        if self.policy.action("torch-compute") != "allow":
            if guarded_by_metadata(self.idx, self.fn, node):  # a fallback for other inputs: the run decides
                self.hits.append(self.idx.hit("torch-compute-guarded", node, f"`{self.fn.name}` {what} in a branch "
                                              "chosen by the inputs' shape, dtype or device (the run-time operator "
                                              "probe judges whether it runs)"))
                return
            self.hits.append(self.idx.hit("torch-compute", node, f"`{self.fn.name}` {what}"))

    def _call(self, node: ast.Call) -> None:
        f = node.func
        tensor_args = [self.is_tensor(a) or (isinstance(a, ast.List | ast.Tuple) and any(map(self.is_tensor, a.elts)))
                       for a in node.args]
        if self._is_kernel_call(node):
            self.launched = True
            for a in [*node.args, *(k.value for k in node.keywords)]:
                if self.is_nn(a) or (isinstance(a, ast.Attribute | ast.Name)
                                     and self._torch_compute_name(self.idx.resolve(a, self.aliases) or "")):
                    # the extension can call what it is handed (a pybind11 std::function): PyTorch compute run from C++
                    self._compute(a, f"hands `{ast.unparse(a)}` to a kernel call, which can call it")
            if self.is_raw_launch(node) and not self.policy.allow_streams and not on_current_stream(self.idx, self.fn, node):
                self.hits.append(self.idx.hit("streams-python", node, f"`{self.fn.name}` launches a CuPy kernel outside "
                                              "`with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)`"))
            elif isinstance(f, ast.Name | ast.Subscript) or self._self_attr(f) is not None:
                self._follow(node, f, tensor_args)  # a binding may hold something else too (`ext.op if c else F.relu`)
            return
        mods = self.local_modules(f) or (self.local_modules(f.value) if isinstance(f, ast.Attribute) else [])
        if mods:
            # An in-module nn.Module (or a container of them): its code runs, so follow it.
            self.calls.extend((name, None, set()) for name in mods)
            if not (self.is_nn(f) or (isinstance(f, ast.Attribute) and self.is_nn(f.value))):
                return  # nothing else is in there; a container also holding torch layers is judged below too
        q = self.idx.resolve(f, self.aliases)
        if q:
            self._named_call(node, q, tensor_args)
            return
        if isinstance(f, ast.Name):
            if f.id in self.idx.classes:
                self.calls.append((f.id, None, set()))
            elif f.id in self.idx.functions:
                fn = self.idx.functions[f.id]
                self.calls.append((fn, None, {a.arg for a, t in zip(fn.args.args, tensor_args, strict=False) if t}))
            elif self.is_nn(f):
                self._compute(node, f"calls nn module `{f.id}`")
            else:
                if f.id in self.idx.values:
                    self._bound_value(node, self.idx.values[f.id])
                self._follow(node, f, tensor_args)
            return
        if isinstance(f, ast.Subscript):
            if self.is_nn(f):
                self._compute(node, "calls an nn submodule")
                return
            if isinstance(f.value, ast.Name) and f.value.id in self.idx.values:
                self._bound_value(node, self.idx.values[f.value.id])
            self._follow(node, f, tensor_args)
            return
        if not isinstance(f, ast.Attribute):
            self._follow(node, f, tensor_args)  # `make_op()(x)`, `(lambda t: ...)(x)`
            return
        recv, name = f.value, f.attr
        attr = self._self_attr(f)
        if attr is not None and self.cls:
            if attr in self.cls.aliases:
                self._named_call(node, self.cls.aliases[attr], tensor_args)
            elif attr in self.cls.methods:
                m = self.cls.methods[attr]
                params = {a.arg for a, t in zip(m.args.args[1:], tensor_args, strict=False) if t}
                self.calls.append((m, self.cls, params))
            elif self.is_nn(f):
                self._compute(node, f"calls nn submodule `self.{attr}` ({self.cls.nn_attrs[attr]})")
            elif attr not in self.cls.nn_attrs and attr not in self.cls.tensor_attrs:
                self._follow(node, f, tensor_args)  # `self.op = lambda ...`, `self.act = make_act()`
            return
        recv_attr = self._self_attr(recv)
        if self.cls and recv_attr in self.cls.aliases:
            self._named_call(node, f"{self.cls.aliases[recv_attr]}.{name}", tensor_args)
            return
        owner = self.class_named(recv)
        if owner is not None:
            self.calls.append((owner, None, self._apply_params(owner, name, tensor_args)))
            return
        if self.is_nn(recv):
            if name not in _NN_METHODS_OK:
                self._compute(node, f"calls `.{name}()` of an nn submodule")
            return
        if name in self.extra:
            return
        if isinstance(recv, ast.Name) and self.resolver.namespace(recv, self.fn) is not None:
            self._follow(node, f, tensor_args)  # `kernels.relu(x)`, `kernels = types.SimpleNamespace(relu=ext.relu)`
            return
        if isinstance(recv, ast.Attribute) and recv.attr in _COUNTERS and name in _COUNTER_STEPS and not node.keywords \
                and all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
            return  # BatchNorm's batch counter stepped as nn.BatchNorm steps it (`+= 1` is not a call either)
        if self.is_tensor(recv):
            if name not in TENSOR_METHODS_ALLOWED:
                self._compute(node, f"calls tensor method `.{name}()`")
        elif (name in TENSOR_METHODS_COMPUTE or name[:-1] in TENSOR_METHODS_COMPUTE and name.endswith("_")) \
                and not self._plain(recv):
            self._compute(node, f"calls `.{name}()`, a tensor compute method")
        elif not self._plain(recv) and name not in TENSOR_METHODS_ALLOWED:
            self._follow(node, f, tensor_args)  # a method of an object held somewhere (`self.helper.run(x)`)

    def _follow(self, node: ast.Call, f: ast.AST, tensor_args: list[bool]) -> None:
        """A call whose callee is a bound value: follow what the resolver finds; remember what it cannot resolve."""
        t = self.targets(f)
        self.launched |= t.kernel
        for fn, cls, bound in t.functions:
            params = fn.args.args[1:] if bound else fn.args.args
            self.calls.append((fn, cls, {a.arg for a, tt in zip(params, tensor_args, strict=False) if tt}))
        self.calls.extend((name, None, set()) for name in t.classes)
        for q in t.names:
            self._named_call(node, q, tensor_args)
        if t.unknown:
            self.unresolved.append(node)

    def _bound_value(self, node: ast.Call, value: ast.AST) -> None:
        """A call through a module-level value (`mm = partial(torch.mm)`, `OPS["mm"](...)`)."""
        for sub in ast.walk(value):
            q = self.idx.resolve(sub) if isinstance(sub, ast.Attribute | ast.Name) else None
            if q and self._torch_compute_name(q):
                self._compute(node, f"calls `{q}` through a module-level binding")
                return

    def _torch_compute_name(self, q: str) -> bool:
        """A torch callable that is neither allowed, owned by another rule, nor a dtype/type name, nor one of the
        candidate's own operators (`torch.ops.<the namespace its extension registers>`)."""
        parts = q.split(".")
        if q == "torch.ops":
            return False  # the root of every namespace (`torch.ops.aten` below it is judged as itself)
        if len(parts) >= 3 and parts[:2] == ["torch", "ops"] and (parts[2] in self.k.op_namespaces
                                                                   or parts[2] in self.k.py_ops):
            return False
        return q.startswith("torch.") and q not in TORCH_ALLOWED and q not in TORCH_AUX and q not in self.extra \
            and not classify_call(q) and q.rsplit(".", 1)[-1] not in TORCH_NONCALL_OK \
            and not q.startswith(("torch.nn.Module", "torch.autograd.Function", "torch.library."))

    def _named_call(self, node: ast.Call, q: str, tensor_args: list[bool]) -> None:
        if classify_call(q) or q.startswith(("torch.library.", "torch.backends.")):
            return  # owned by a whole-module rule (or a read-only backend query)
        if q == "builtins.getattr" and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            # A literal name was already turned into `self.name`; a computed one can hide a submodule call.
            self.hits.append(self.idx.hit("dynamic-code", node, "getattr() on self with a computed name"))
            return
        parts = q.split(".")
        if len(parts) >= 4 and parts[:2] == ["torch", "ops"] and parts[2] in self.k.op_namespaces:
            self.launched = True  # an operator the extension registers, reached through an alias (`self.op = ...`)
            return
        if len(parts) >= 4 and parts[:2] == ["torch", "ops"] and parts[2] in self.k.py_ops:
            # An op the candidate registered in Python: follow into its implementation.
            for fn in self.k.py_ops[parts[2]]:
                self.calls.append((fn, None, {a.arg for a, t in zip(fn.args.args, tensor_args, strict=False) if t}))
            return
        if q.startswith("torch."):
            if q in TORCH_ALLOWED or q in self.extra:
                return
            if q in TORCH_AUX:
                self.hits.append(self.idx.hit("torch-aux-op", node, f"`{self.fn.name}` calls `{q}`"))
                return
            self._compute(node, f"calls `{q}`")
        elif q.startswith(("numpy.", "scipy.")) and q not in _NUMPY_NOT_COMPUTE and any(
                self.array_of_tensor(a) for a in [*node.args, *(k.value for k in node.keywords)]):
            self._compute(node, f"calls `{q}` on a tensor's values (NumPy compute in place of a kernel)")
        elif q in ("operator.matmul", "operator.imatmul") or (
                q.startswith("operator.") and any(tensor_args)) or (q in _BUILTIN_COMPUTE and any(tensor_args)):
            self._compute(node, f"calls `{q.removeprefix('builtins.')}` on tensors")

    def _reference(self, node: ast.Attribute | ast.Name) -> None:
        attr = self._self_attr(node)
        if self.cls and attr in self.cls.methods:
            # A bound method handed on (a property, a callback) runs on behalf of forward too.
            self.calls.append((self.cls.methods[attr], self.cls, set()))
        parent = self.idx.parent(node)
        if isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Call) and parent.func is node):
            return
        q = self.idx.resolve(node, self.aliases) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.") and q not in TORCH_ALLOWED and last not in TORCH_NONCALL_OK and \
                (last in TENSOR_METHODS_COMPUTE or q.startswith(_COMPUTE_NAMESPACES)) and q not in self.extra:
            self._compute(node, f"passes `{q}` as a function")
        elif q.startswith("operator.") and last.lstrip("i") in _OPERATOR_ARITH:
            self._compute(node, f"passes `{q}` as a function (on tensors it is PyTorch compute)")
        elif not q and isinstance(node, ast.Attribute) and node.attr not in self.extra and (
                (self.is_tensor(node.value) and node.attr not in TENSOR_METHODS_ALLOWED
                 and node.attr in TENSOR_METHODS_COMPUTE)
                or (node.attr in TENSOR_METHODS_COMPUTE and not self._plain(node.value)
                    and not self.is_nn(node.value) and self._self_attr(node) is None)):
            self._compute(node, f"takes the bound method `.{node.attr}` of a tensor")

    def _try(self, node: ast.Try | ast.TryStar) -> None:
        for h in node.handlers:
            if not all(self._harmless(s) for s in h.body):
                self.hits.append(self.idx.hit("try-fallback", h, f"`{self.fn.name}` computes in an exception handler"))

    def _harmless(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Pass | ast.Raise):
            return True
        if isinstance(stmt, ast.Expr):
            v = stmt.value
            if isinstance(v, ast.Constant):
                return True
            return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _LOG_METHODS
        return False

    def _state(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for sub in ast.walk(t):
                attr = self._self_attr(sub)
                if attr is not None and isinstance(sub.ctx, ast.Store) and not (node.value is not None and (
                        is_ext_value(self.idx, self.k, node.value) or is_raw_kernel(self.idx, self.k, node.value)
                        or is_raw_module(self.idx, self.k, node.value))):
                    self.hits.append(self.idx.hit("caching", sub, f"`{self.fn.name}` stores `self.{attr}` "
                                                                  "while running"))

    def _identity_key(self, node: ast.Subscript | ast.Compare | ast.Call) -> None:
        if isinstance(node, ast.Call):
            f = node.func
            key = node.args[:1] if isinstance(f, ast.Attribute) and f.attr in _DICT_LOOKUPS else []
        elif isinstance(node, ast.Subscript):
            key = [node.slice]
        elif any(isinstance(o, ast.In | ast.NotIn) for o in node.ops):
            key = [node.left]
        else:
            return
        for n in (x for k in key for x in ast.walk(k)):
            if isinstance(n, ast.Call) and ((isinstance(n.func, ast.Attribute) and n.func.attr in _KEY_METHODS)
                                            or self.idx.resolve(n.func) in ("builtins.id", "builtins.hash")):
                self.hits.append(self.idx.hit("caching", node, "looks up state keyed on tensor identity or values"))
                return
