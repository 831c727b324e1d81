"""Follows ModelNew.forward through the helpers it reaches and judges what that code computes.

Rules here: torch-compute, torch-aux-op, try-fallback, caching (state in forward, identity-keyed
lookups), no-kernel-launched (kernel-launch-unresolved where it cannot tell), no-custom-kernel-defined,
missing-modelnew; kernel-output-unused (static/dataflow.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernelmosaic.verify.static.callables import Resolver, hidden_callable
from kernelmosaic.verify.static.classes import bases_of
from kernelmosaic.verify.static.compute import FunctionScope
from kernelmosaic.verify.static.dataflow import check_dataflow
from kernelmosaic.verify.static.model_index import ClassInfo, Kernels, class_info, kernel_named
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.vocab import TENSOR_METHODS_COMPUTE, TORCH_ALLOWED

__all__ = ["check_forward"]

_ENTRY = ("forward", "__call__", "_call_impl")
# Run implicitly while forward runs (attribute lookups), without tensor arguments.
_HIDDEN_ENTRY = ("__getattr__", "__getattribute__")


@dataclass
class _Work:
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ClassInfo | None
    tensor_params: set[str] = field(default_factory=set)


_AUTOGRAD_FUNCTION = ("torch.autograd.Function", "torch.autograd.function.Function")
_BACKWARD_PASS = ("backward", "vjp", "jvp")


class _Reach:
    """Worklist over functions reachable from ModelNew's entry points, with tensor-ness of parameters."""

    def __init__(self, idx: ModuleIndex, kernels: Kernels, policy: StaticPolicy):
        self.idx, self.k, self.policy = idx, kernels, policy
        self.work: dict[int, _Work] = {}
        self.queue: list[int] = []
        self.classes: dict[str, ClassInfo] = {}
        self.launched = False
        self.unresolved: list[ast.Call] = []
        self.resolver = Resolver(idx, kernels, self.info)

    def info(self, name: str) -> ClassInfo:
        if name not in self.classes:
            self.classes[name] = class_info(self.idx, self.idx.classes[name])
        return self.classes[name]

    def add(self, fn: ast.AST, cls: ClassInfo | None, tensor_params: set[str]) -> None:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name in self.k.triton:
            return
        w = self.work.get(id(fn))
        if w is None:
            self.work[id(fn)] = _Work(fn, cls, set(tensor_params))
            self.queue.append(id(fn))
        elif not tensor_params <= w.tensor_params:
            w.tensor_params |= tensor_params
            self.queue.append(id(fn))

    def add_class(self, name: str, applied: set[str] | None = None) -> None:
        """The class's entry methods, every parameter after the first a tensor, except an autograd.Function's
        `forward` reached through `apply` with the parameters its call gives a tensor (`applied`)."""
        info = self.info(name)
        # an autograd.Function's backward pass never runs in a forward (the verifier calls forward only)
        function = any((self.idx.resolve(b) or "") in _AUTOGRAD_FUNCTION for b in bases_of(self.idx, info.node))
        skipped = _BACKWARD_PASS if function else ()
        for m in info.methods.values():
            params = {a.arg for a in m.args.args[1:]} if m.name in _ENTRY else set()
            if function and applied and m.name == "forward":
                params = set(applied)
            if m.name != "__init__" and m.name not in skipped:
                self.add(m, info, params)

    def run(self) -> list[Hit]:
        hits: dict[int, list[Hit]] = {}
        while self.queue:
            w = self.work[self.queue.pop()]
            scope = FunctionScope(self.idx, self.k, w.cls, w.fn, w.tensor_params, self.policy, self.resolver)
            hits[id(w.fn)] = scope.check()
            self.launched |= scope.launched
            self.unresolved += [c for c in scope.unresolved if all(c is not u for u in self.unresolved)]
            for callee, cls, tensor_args in scope.calls:
                if isinstance(callee, str):
                    self.add_class(callee, tensor_args)
                else:
                    self.add(callee, cls, tensor_args)
        return [h for hs in hits.values() for h in hs]


def check_forward(idx: ModuleIndex, kernels: Kernels, n_extensions: int, policy: StaticPolicy) -> list[Hit]:
    hits: list[Hit] = []
    model = idx.classes.get("ModelNew")
    if not n_extensions and not kernels.triton:
        hits.append(idx.hit("no-custom-kernel-defined", model or 0,
                            "no load_inline extension and no @triton.jit kernel in the candidate"))
    if kernels.triton and not policy.allow_triton:
        first = next(iter(kernels.triton.values()))
        hits.append(idx.hit("triton-not-allowed", first, "Triton kernels are not allowed by the policy"))
    if model is None:
        return hits + [idx.hit("missing-modelnew", 0, "no `class ModelNew` defined at module level")]
    rebinding = _rebinds_modelnew(idx, model)
    if rebinding is not None:
        # The class analyzed would not be the one the verifier loads.
        return hits + [idx.hit("missing-modelnew", rebinding, "`ModelNew` is rebound after its class definition")]
    swaps = [k for k in model.keywords if k.arg == "metaclass"] + list(model.decorator_list) + [
        m for m in model.body if isinstance(m, ast.FunctionDef) and m.name == "__new__"]
    for node in swaps:
        # Each can make `ModelNew(...)` return some other object than the class analyzed here.
        hits.append(idx.hit("dynamic-code", node, "ModelNew has a metaclass, class decorator or __new__"))
    for base in model.bases:
        q = idx.resolve(base) or ""
        if q.startswith("torch.nn.") and q != "torch.nn.Module":
            hits.append(idx.hit("torch-compute", base, f"ModelNew inherits `{q}`, whose forward computes"))
    reach = _Reach(idx, kernels, policy)
    info = reach.info("ModelNew")
    entries = [m for name, m in info.methods.items() if name in _ENTRY]
    for m in entries:
        star = {m.args.vararg.arg} if m.args.vararg else set()  # forward(self, *inputs)
        reach.add(m, info, {a.arg for a in m.args.args[1:] if _maybe_tensor(a, m)} | star)
    for name in _HIDDEN_ENTRY:
        if name in info.methods:
            reach.add(info.methods[name], info, set())
    hits.extend(_rebound_forward(idx, info, reach))
    # Methods handed over as callbacks (hooks) run inside forward too.
    for m in info.methods.values():
        for node in ast.walk(m):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr.startswith("register_") and node.func.attr.endswith("hook"):
                for arg in node.args:
                    if isinstance(arg, ast.Attribute) and arg.attr in info.methods:
                        reach.add(info.methods[arg.attr], info, set())
                    elif isinstance(arg, ast.Name) and arg.id in idx.functions:
                        reach.add(idx.functions[arg.id], None, set())
    hits.extend(reach.run())
    if (n_extensions or kernels.triton) and not reach.launched:
        hits.append(_not_launched(idx, kernels, reach, entries[0] if entries else model))
    elif reach.launched:
        hits.extend(check_dataflow(idx, kernels, info, policy))
    return hits


def _not_launched(idx: ModuleIndex, kernels: Kernels, reach: _Reach, where: ast.AST) -> Hit:
    """No call forward reaches is tied to a kernel. Unambiguous only when nothing it calls is unresolved, or when no
    code names a kernel at all; otherwise the run-time census and probes decide."""
    hidden = hidden_callable(idx, kernels, TENSOR_METHODS_COMPUTE) if reach.unresolved else None
    if reach.unresolved and hidden is not None and reach.policy.action("torch-compute") == "reject":
        # Under strict the run time does not reject a candidate whose kernel calls it never observes (CPU), so an
        # unresolved call is left to it only when nothing uncalled in the module could compute in the kernel's place.
        call = reach.unresolved[0]
        return idx.hit("no-kernel-launched", where, (
            f"no-kernel-launched (line {getattr(where, 'lineno', 0)}): forward reaches no call the analysis can tie "
            f"to a custom kernel; `{ast.unparse(call.func)[:60]}` (line {call.lineno}) cannot be resolved and the "
            f"module hands `{ast.unparse(hidden)[:40]}` (line {hidden.lineno}) around uncalled, which could stand "
            "behind it; call the kernel directly or through a binding the analysis follows (`self.op = ext.op`, a "
            "helper, a submodule), or judge under `--policy kernelbench`, where the run-time probes decide"))
    if reach.unresolved and kernel_named(idx, kernels):
        call = reach.unresolved[0]
        return idx.hit("kernel-launch-unresolved", call, (
            f"forward calls `{ast.unparse(call.func)[:60]}` (line {call.lineno}), which the static view cannot "
            "resolve, and reaches no other call into a custom kernel; whether a kernel runs and reaches the result "
            "is left to the run-time kernel census and output probes"))
    line = getattr(where, "lineno", 0)
    return idx.hit("no-kernel-launched", where, (
        f"no-kernel-launched (line {line}): a custom kernel is defined but nothing forward reaches calls into it; "
        "forward must call an extension function, a Triton launch or a registered op (directly, or through an alias "
        "such as `self.op = ext.op`, a helper, a lambda or an in-module submodule)"))


def _maybe_tensor(arg: ast.arg, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """forward's parameters are tensors unless annotated or defaulted as something else."""
    if arg.annotation is not None:
        return "Tensor" in ast.unparse(arg.annotation)
    args = fn.args.args
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults):]], fn.args.defaults, strict=False))
    d = defaults.get(arg.arg)
    return d is None or not isinstance(d, ast.Constant)


def _rebound_forward(idx: ModuleIndex, info: ClassInfo, reach: _Reach) -> list[Hit]:
    """`forward = ...` in the class body or `self.forward = ...` anywhere replaces what the verifier calls."""
    values = [s.value for s in info.node.body if isinstance(s, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id in _ENTRY for t in s.targets)]
    for m in info.methods.values():
        values += [n.value for n in ast.walk(m) if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            and t.attr in _ENTRY for t in n.targets)]
    hits = []
    for value in values:
        for sub in ast.walk(value):
            q = idx.resolve(sub) if isinstance(sub, ast.Name | ast.Attribute) else None
            if q and q.startswith("torch.") and q not in TORCH_ALLOWED:
                hits.append(idx.hit("torch-compute", value, f"forward is rebound to something built with `{q}`"))
                break
            if isinstance(sub, ast.Attribute) and sub.attr in info.methods:
                reach.add(info.methods[sub.attr], info, set(a.arg for a in info.methods[sub.attr].args.args[1:]))
            elif isinstance(sub, ast.Name) and sub.id in idx.functions:
                fn = idx.functions[sub.id]
                reach.add(fn, None, {a.arg for a in fn.args.args})
    return hits


def _rebinds_modelnew(idx: ModuleIndex, model: ast.ClassDef) -> ast.AST | None:
    for node in ast.walk(idx.tree):
        if isinstance(node, ast.Name) and node.id == "ModelNew" and isinstance(node.ctx, ast.Store | ast.Del):
            return node
        if isinstance(node, ast.Global | ast.Nonlocal) and "ModelNew" in node.names:
            return node
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == "ModelNew" and node is not model:
            return node
        if isinstance(node, ast.alias) and (node.asname or node.name) == "ModelNew":
            return idx.parent(node) or node
    return None
