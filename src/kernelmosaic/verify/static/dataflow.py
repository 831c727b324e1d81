"""`kernel-output-unused`: does anything a custom kernel produced flow into what `ModelNew.forward` returns?

A value is kernel-derived when it is the result of a kernel call (extension function, Triton launch, registered
operator), a buffer bound in the function and passed to a kernel (kernels write their outputs into such
buffers), or any expression that reads a kernel-derived value. Helpers are summarised (returns kernel-derived
data; which parameters a kernel writes) and followed through methods, module functions, in-module nn.Modules and
Python-registered ops. The analysis over-approximates flow (it is flow-insensitive, and any use counts), so it
never rejects a candidate whose kernel output does reach the result; the run-time probes (verify/custom_work.py)
then check that the flow carries work.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernelmosaic.verify.static.callables import Resolver
from kernelmosaic.verify.static.classes import is_super, super_method
from kernelmosaic.verify.static.model_index import ClassInfo, Kernels, class_info
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.tensors import TensorScope

__all__ = ["check_dataflow"]

_Fn = ast.FunctionDef | ast.AsyncFunctionDef
_CALLED = ("forward", "__call__")
_FILLS = {"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"}


@dataclass
class _Summary:
    returns: bool = False
    """Some return value is kernel-derived."""
    writes: set[str] = field(default_factory=set)
    """Parameters passed (unbound in the function) to a kernel: the caller's argument there becomes an output."""


class _Flow:
    def __init__(self, idx: ModuleIndex, kernels: Kernels, policy: StaticPolicy) -> None:
        self.idx, self.k, self.policy = idx, kernels, policy
        self.fns: dict[int, tuple[_Fn, ClassInfo | None]] = {id(f): (f, None) for f in idx.functions.values()}
        self.classes = {name: class_info(idx, node) for name, node in idx.classes.items()}
        for info in self.classes.values():
            for m in info.methods.values():
                self.fns.setdefault(id(m), (m, info))
        self.summary: dict[int, _Summary] = {i: _Summary() for i in self.fns}
        self.resolver = Resolver(idx, kernels, lambda name: self.classes[name])

    def solve(self) -> None:
        for _ in range(6):
            changed, known = False, len(self.fns)
            for key, (fn, cls) in list(self.fns.items()):
                new = self._analyze(fn, cls)
                if new != self.summary[key]:
                    self.summary[key], changed = new, True
            if not changed and len(self.fns) == known:  # a newly met lambda or closure needs a round of its own
                return

    def _callees(self, scope: TensorScope, call: ast.Call) -> list[tuple[_Fn, bool]]:
        """In-module functions a call runs, each with whether its first parameter is `self` (bound)."""
        f = call.func
        if isinstance(f, ast.Name) and f.id in self.idx.functions:
            return [(self.idx.functions[f.id], False)]
        attr = scope._self_attr(f)
        if attr is not None and scope.cls and attr in scope.cls.methods:
            return [(scope.cls.methods[attr], True)]
        # an instance of an in-module class called: an nn.Module runs forward, any other class its __call__
        out = [(m, True) for name in scope.local_modules(f) if name in self.classes
               for m in (self.classes[name].methods.get(k) for k in _CALLED) if m is not None]
        if isinstance(f, ast.Attribute):
            out += self._class_method(f.value, f.attr, scope)
        return out + self._other_callees(scope, f)

    def _class_method(self, recv: ast.AST, name: str, scope: TensorScope) -> list[tuple[_Fn, bool]]:
        """`Helpers.epilogue(y)` (a static, class or plain method through its class), `Fn.apply(x)` (an
        autograd.Function's forward), `self.helper.run(x)` (a method of an in-module instance)."""
        if is_super(recv) and scope.cls is not None:  # `super().forward(x)`: the in-module base's method
            found = super_method(self.idx, scope.cls.node, name)
            return [(found, True)] if found is not None else []
        owner = scope.class_named(recv)
        if owner is not None and owner in self.classes:
            methods = self.classes[owner].methods
            if name == "apply" and "forward" in methods and "apply" not in methods:
                return [(methods["forward"], True)]  # autograd.Function: forward(ctx, ...)
            m = methods.get(name)
            if m is None:
                return []
            kinds = {self.idx.resolve(d) for d in m.decorator_list}
            return [(m, "builtins.classmethod" in kinds)]  # through the class, `self` is an explicit argument
        return [(m, True) for cls in scope.local_modules(recv) if cls in self.classes
                for m in [self.classes[cls].methods.get(name)] if m is not None]

    def _other_callees(self, scope: TensorScope, f: ast.AST) -> list[tuple[_Fn, bool]]:
        out: list[tuple[_Fn, bool]] = []
        q = (self.idx.resolve(f, scope.aliases) or "").split(".")
        if len(q) >= 4 and q[:2] == ["torch", "ops"] and q[2] in self.k.py_ops:
            out += [(fn, False) for fn in self.k.py_ops[q[2]]]
        if _bound_callee(scope, f):
            targets = scope.targets(f)
            for fn, cls, bound in targets.functions:  # lambdas, closures, functions bound to names
                if id(fn) not in self.fns:
                    self.fns[id(fn)], self.summary[id(fn)] = (fn, cls), _Summary()
                out.append((fn, bound))
            out += [(m, True) for name in targets.classes if name in self.classes  # an instance bound to a name
                    for m in (self.classes[name].methods.get(k) for k in _CALLED) if m is not None]
        return out

    @staticmethod
    def _weight(cls: ClassInfo | None, attr: str) -> bool:
        """`self.<attr>` is a weight (a parameter, a submodule) rather than a buffer."""
        return cls is None or attr in cls.nn_attrs or attr in cls.local_attrs or attr in cls.param_attrs

    def _analyze(self, fn: _Fn, cls: ClassInfo | None) -> _Summary:
        scope = TensorScope(self.idx, self.k, cls, fn, set(), self.policy, self.resolver)
        scope._bind()
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        params += [a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None]  # `def __call__(self, *args)`
        bound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        names: set[str] = set()
        attrs: set[str] = set()
        out = _Summary()

        def derived(expr: ast.AST | None) -> bool:
            for n in ast.walk(expr) if expr is not None else []:
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names:
                    return True
                if scope._self_attr(n) in attrs:
                    return True
                if isinstance(n, ast.Call) and (scope._is_kernel_call(n) or any(
                        self.summary[id(c)].returns for c, _ in self._callees(scope, n) if id(c) in self.summary)
                        or (_bound_callee(scope, n.func) and _maybe_kernel(scope.targets(n.func)))):
                    return True  # a callee that cannot be resolved may be a kernel: its result counts as derived
            return False

        def mark(target: ast.AST, attributes: bool = True) -> None:
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    if n.id in bound:
                        names.add(n.id)
                    elif n.id in params and n.id != "self":
                        out.writes.add(n.id)
                elif (attr := scope._self_attr(n)) is not None and (attributes or not self._weight(cls, attr)):
                    attrs.add(attr)

        for _ in range(4):
            before = (len(names), len(attrs), len(out.writes))
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and derived(node.value):
                    for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        mark(t.value if isinstance(t, ast.Subscript) else t)
                elif isinstance(node, ast.For) and derived(node.iter):
                    mark(node.target)
                elif isinstance(node, ast.Call):
                    self._call(scope, node, derived, mark)
            if (len(names), len(attrs), len(out.writes)) == before:
                break
        out.returns = any(derived(n.value) for n in ast.walk(fn) if isinstance(n, ast.Return))
        return out

    def _call(self, scope: TensorScope, node: ast.Call, derived, mark) -> None:
        args = list(node.args) + [k.value for k in node.keywords]
        f = node.func
        if scope._is_kernel_call(node) or (_bound_callee(scope, f) and _maybe_kernel(scope.targets(f))):
            for a in args:  # buffers bound here, and the module's own (a workspace, a reused output), are the
                mark(a, attributes=False)  # kernel's outputs; its parameters and submodules are its weights
            return
        if isinstance(f, ast.Attribute) and (f.attr.endswith("_") or f.attr in _FILLS) and any(map(derived, args)):
            mark(f.value)  # `out.copy_(y)`, `outputs.append(h)`: the receiver now holds kernel-derived data
        for callee, is_method in self._callees(scope, node):
            params = [a.arg for a in callee.args.posonlyargs + callee.args.args][1 if is_method else 0:]
            written = self.summary.get(id(callee), _Summary()).writes
            for p, a in zip(params, node.args, strict=False):
                if p in written:
                    mark(a)
            if callee.args.vararg is not None and callee.args.vararg.arg in written:
                for a in node.args[len(params):]:  # `*args` handed on to a kernel: each of them is written
                    mark(a)
            for kw in node.keywords:
                if kw.arg in written:
                    mark(kw.value)


def _maybe_kernel(t) -> bool:
    return t.kernel or t.unknown


def _bound_callee(scope: TensorScope, f: ast.AST) -> bool:
    """Callees whose target is a bound value (a local, `self.op`, `OPS[k]`, `make()`), not a method of a tensor."""
    if isinstance(f, ast.Name):
        return f.id not in scope.tensors and f.id not in scope.idx.functions and f.id not in scope.idx.classes \
            and scope.idx.resolve(f, scope.aliases) is None
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and scope.resolver.namespace(f.value, scope.fn):
        return True  # a field of a `types.SimpleNamespace`
    attr = scope._self_attr(f)
    if attr is not None:
        cls = scope.cls
        return cls is not None and attr not in cls.methods and attr not in cls.nn_attrs and attr not in cls.tensor_attrs
    return isinstance(f, ast.Subscript | ast.Call | ast.Lambda) and not scope.is_nn(f)


def check_dataflow(idx: ModuleIndex, kernels: Kernels, model: ClassInfo, policy: StaticPolicy) -> list[Hit]:
    """A hit when forward returns values, yet none of them is kernel-derived."""
    forward = model.methods.get("forward")
    if forward is None or not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(forward)):
        return []
    flow = _Flow(idx, kernels, policy)
    flow.solve()
    if flow.summary[id(forward)].returns:
        return []
    return [idx.hit("kernel-output-unused", forward, "no value a custom kernel produced (its result, or a buffer it "
                    "writes) flows into what forward returns")]
