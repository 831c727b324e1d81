"""The candidate's own kernel calls, seen from inside its worker: counted, timed on the host, and on request given
noise instead of their outputs, so the parent can tell whether a custom kernel's output reaches what forward returns.

Four doors are watched: functions of `load_inline` extensions (wrapped on the module object as it is built),
Triton kernels among the candidate's globals (their instance `run`, which `kernel[grid](...)` calls), operators
an extension registered with the dispatcher while it loaded (a dispatch mode, only while a probe runs), and CuPy
RawKernel/RawModule launches of the fast form (kmworker/fastform.py). The wrappers
are installed once and stay: a candidate sees the same objects whether or not it is being probed.
Standard library and torch only.
"""

from __future__ import annotations

import time
import weakref

import torch

__all__ = ["INTERCEPT", "Interceptor", "perturb_value", "op_names"]


def perturb_value(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A same-shape, same-dtype stand-in for a kernel output that differs from it almost everywhere: floats get
    noise at the output's own scale, integers and booleans are shuffled (values stay in range, so indices stay
    valid). The noise is drawn on the output's own device, from a generator seeded by `gen`: no host buffer of the
    output's size (large-output mode's outputs take gigabytes)."""
    if t.numel() == 0:
        return t.clone()
    local = torch.Generator(device=t.device).manual_seed(int(torch.randint(1 << 62, (1,), generator=gen)))
    if t.is_floating_point() or t.is_complex():
        finite = t.detach().nan_to_num(0.0, 0.0, 0.0)  # the one temporary of the output's size beside the noise
        scale = float((finite.abs() if finite.is_complex() else finite.abs_()).max()) + 1.0
        del finite
        noise = torch.randn(t.shape, generator=local, device=t.device, dtype=t.dtype)
        return noise.mul_(scale).add_(t.detach())
    flat = t.detach().reshape(-1)
    order = torch.randperm(flat.numel(), generator=local, device=t.device)
    return flat[order].reshape(t.shape)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.equal(torch.isnan(a), torch.isnan(b))) and bool(torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))
    return bool(torch.equal(a, b))


class Interceptor:
    def __init__(self) -> None:
        self.active = False
        """Counting and timing on (only inside a probe; otherwise calls pass straight through)."""
        self.perturb: set[str] = set()
        self.calls: dict[str, int] = {}
        self.host_s: dict[str, float] = {}
        self.noised: dict[str, int] = {}
        """Tensors replaced by noise per perturbed entry point (none: it returned and wrote no tensor)."""
        self.ops: set[str] = set()
        """Dispatcher operators registered while an extension loaded (`ns::name`)."""
        self.inside: set[str] = set()
        """Operators being called through their `torch.ops` stand-in now (the dispatch mode lets them pass)."""
        self.record = False
        """Record the operators forward dispatches outside the candidate's kernel calls (`torch_ops`)."""
        self.torch_ops: dict[str, int] = {}
        """Calls per dispatcher operator (`aten::mm`) made outside the candidate's kernel calls while recording."""
        self.kernel_ops: dict[str, int] = {}
        """The same for operators dispatched inside a kernel call (an extension function's own ATen calls)."""
        self.depth = 0
        """How many of the candidate's kernel calls are running now (their own operator calls are not recorded)."""
        self.sizes: dict[int, weakref.ref] = {}
        """Tensors forward made from Python numbers while recording (`torch.tensor(x.shape)`), and the small results
        of operators on those alone: size arithmetic, not compute on the problem's data (by id, checked by ref)."""
        self.exempted = 0
        """Operators `sized` let pass in the forward recorded now."""
        self.gen = torch.Generator().manual_seed(0)
        self.sync = lambda: None
        self.cupy = False
        """The fast form's launches are watched (the candidate names CuPy)."""
        self.known: list[torch.Tensor] = []
        """Tensors of the running probe that a fast-form pointer may point at (inputs, weights, op outputs)."""

    def reset(self, perturb: set[str], seed: int, sync, record: bool = False) -> None:
        self.perturb, self.calls, self.host_s, self.noised = set(perturb), {}, {}, {}
        self.record, self.torch_ops, self.kernel_ops, self.depth, self.sizes = record, {}, {}, 0, {}
        self.exempted = 0
        self.gen.manual_seed(seed)
        self.sync = sync

    def call(self, name: str, fn, args: tuple, kwargs: dict):
        if not self.active:
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            return self._counted(name, fn, args, kwargs)
        finally:
            self.depth -= 1

    def _counted(self, name: str, fn, args: tuple, kwargs: dict):
        self.calls[name] = self.calls.get(name, 0) + 1
        perturb = name in self.perturb
        before = [(x, x.clone()) for x in _tensors(args, kwargs)] if perturb else []
        self.sync()
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.sync()
        self.host_s[name] = self.host_s.get(name, 0.0) + time.perf_counter() - t0
        if not perturb:
            return out
        with torch.no_grad():
            written = [x for x, old in before if not _same(x, old)]
            unchanged = [(x, old) for x, old in before if _same(x, old) and _writable(x)]
            written += self._rewritten(fn, args, kwargs, before, written, unchanged)
            for x in written:  # buffers the kernel wrote into are outputs too
                x.copy_(perturb_value(x, self.gen))
            returned = _tensors((out,), {})
            self.noised[name] = self.noised.get(name, 0) + len(written) + len(returned)
            return _map_out(out, lambda t: perturb_value(t, self.gen))

    def _rewritten(self, fn, args: tuple, kwargs: dict, before: list, written: list, unchanged: list) -> list:
        """The unchanged arguments the kernel writes all the same: it rewrote identical values into them (a
        buffer reused across forwards holds the previous forward's result, which equals this one's).

        The call is repeated once with each unchanged argument holding other values (`_scrambled`) and every written
        one its pre-call contents; an argument that no longer holds those values afterwards is one the kernel writes. Afterwards every
        argument is put back as the first call left it. A repeat that raises proves nothing written."""
        if not unchanged:
            return []
        after = [(x, x.clone()) for x in written]
        olds = {id(x): old for x, old in before}
        for x in written:
            x.copy_(olds[id(x)])
        for x, old in unchanged:
            x.copy_(_scrambled(old))
        try:
            fn(*args, **kwargs)
            self.sync()
            found = [x for x, old in unchanged if not _same(x, _scrambled(old))]
        except Exception:  # noqa: BLE001 - a kernel that refuses noise in its inputs: nothing is learnt
            found = []
        for x, old in unchanged:
            x.copy_(old)
        for x, first in after:
            x.copy_(first)
        return found

    def call_raw(self, name: str, launch, grid, block, args, kwargs: dict):
        """A fast-form launch: its pointer arguments' tensors stand in as its buffers (written ones are outputs)."""
        if not self.active:
            return launch(grid, block, args, **kwargs)
        from .fastform import tensors_from_pointers

        self.depth += 1
        try:
            buffers = tuple(tensors_from_pointers(args, self.known))
        finally:
            self.depth -= 1
        return self.call(name, lambda *_buffers: launch(grid, block, args, **kwargs), buffers, {})

    def recording(self, model, inputs: list):
        """While a probe runs: record the tensors a fast-form launch may point at (a no-op without the fast form)."""
        import contextlib

        self.known = []
        if not self.cupy:
            return contextlib.nullcontext()
        from .fastform import recording

        self.known.extend(x for x in inputs if isinstance(x, torch.Tensor))
        self.known.extend(model.parameters())
        self.known.extend(model.buffers())
        return recording(self.known)

    def wrap(self, name: str, fn):
        # No functools.wraps: `__wrapped__` would hand the candidate the unwatched function.
        def wrapper(*args, **kwargs):
            return self.call(name, fn, args, kwargs)

        wrapper.__name__ = wrapper.__qualname__ = getattr(fn, "__name__", name)
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper

    def op_mode(self):
        """A dispatch mode that routes the extension-registered operators through `call` and, while recording,
        counts every other operator dispatched, apart inside and outside kernel calls (a no-op with neither).

        Dispatch modes are per thread: operators run in threads the candidate starts are not seen; nor are those an
        operator routed here dispatches itself (the mode is off while it handles one: a `TORCH_LIBRARY_IMPL`
        kernel's own ATen calls)."""
        import contextlib

        if not self.ops and not self.record:
            return contextlib.nullcontext()
        from torch.utils._python_dispatch import TorchDispatchMode

        interceptor = self

        class _Ops(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func._schema.name
                if name in interceptor.ops and name not in interceptor.inside:
                    return interceptor.call(name, func, tuple(args), dict(kwargs or {}))
                if not (interceptor.record and interceptor.active):
                    return func(*args, **(kwargs or {}))
                out = func(*args, **(kwargs or {}))
                if name in _ACCUMULATING and _accumulates(args, kwargs or {}):
                    name = "aten::index_put_accumulate"  # adds into its target: compute (verify/static/vocab.py)
                if not interceptor.sized(name, args, kwargs or {}, out):
                    seen = interceptor.kernel_ops if interceptor.depth else interceptor.torch_ops
                    seen[name] = seen.get(name, 0) + 1
                return out

        return _Ops()

    def sized(self, name: str, args, kwargs: dict, out) -> bool:
        """Whether an operator was size arithmetic or integer bookkeeping (and so not recorded): an operator on
        integer tensors alone (a counter such as BatchNorm's `num_batches_tracked`, a count read back), a tensor made
        from Python numbers (`aten::lift_fresh`, what `torch.tensor([...])` dispatches), or an operator on such
        tensors alone; its outputs are then sizes too. Every tensor involved holds at most `SIZE_TENSOR_MAX` elements
        in memory of its own that small (a 16-element view of an output is the output's data), and a forward gets at
        most `SIZE_OPS_MAX` such operators: a loop that computes a result 16 elements at a time is compute. Any other
        operator's outputs are not sizes (an in-place write of data into one takes it out)."""
        made = _tensors((out,), {})
        fresh = name in ("aten::lift_fresh", "aten::lift_fresh_copy", "aten::scalar_tensor")
        inputs = _tensors(tuple(args), kwargs)
        small = self.exempted < SIZE_OPS_MAX and all(_small(t) for t in made + inputs)
        ints = bool(made + inputs) and not any(t.is_floating_point() or t.is_complex() for t in made + inputs)
        if small and (ints or fresh or (inputs and all(self._is_size(t) for t in inputs))):
            self.exempted += 1
            for t in made:
                self.sizes[id(t)] = weakref.ref(t)
            return True
        for t in made:
            self.sizes.pop(id(t), None)
        return False

    def _is_size(self, t: torch.Tensor) -> bool:
        ref = self.sizes.get(id(t))
        return ref is not None and ref() is t

    def wrap_ops(self, names: set[str]) -> None:
        """Route calls through `torch.ops.<ns>.<name>` (and its overloads) of each operator an extension registered
        through `call`: one registered as a catch-all (`m.def(schema, &fn)`: CompositeImplicitAutograd) or for an
        autograd key runs before the Python dispatch key, so the dispatch mode never sees it.

        The packet and overload objects stay torch's own (the dispatcher looks them up by type); only the callable
        each holds (`_op`, what their `__call__` runs) is replaced."""
        for full in sorted(names):
            ns, _, op = full.partition("::")
            if not ns or not op or ns in ("aten", "prim", "prims", "_"):
                continue
            try:
                packet = getattr(getattr(torch.ops, ns), op)
                targets = [packet, *(getattr(packet, o) for o in packet.overloads())]
            except (AttributeError, RuntimeError):
                continue
            for target in targets:
                inner = getattr(target, "_op", None)
                if callable(inner) and not getattr(inner, "_km_routed", False):
                    target._op = self._routed(full, inner)

    def _routed(self, name: str, op):
        def routed(*args, **kwargs):
            return self.call_op(name, op, args, kwargs)

        routed._km_routed = True  # type: ignore[attr-defined]
        return routed

    def call_op(self, name: str, op, args: tuple, kwargs: dict):
        """A call through `torch.ops`: counted once (the dispatch mode lets the op pass meanwhile)."""
        if name in self.inside:
            return op(*args, **kwargs)
        self.inside.add(name)
        try:
            return self.call(name, op, args, kwargs)
        finally:
            self.inside.discard(name)

    def wrap_extension(self, module) -> None:
        """Replace every function of a freshly built extension module by a wrapper of the same name."""
        prefix = getattr(module, "__name__", "ext")
        for attr in dir(module):
            value = getattr(module, attr, None)
            if attr.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            if type(value).__name__ in ("builtin_function_or_method", "function"):
                setattr(module, attr, self.wrap(f"{prefix}.{attr}", value))

    def wrap_triton(self, module) -> None:
        """Wrap the instance `run` of Triton kernels among a module's globals (`kernel[grid](...)` goes through it)."""
        for attr, value in list(vars(module).items()):
            if type(value).__module__.startswith("triton.") and callable(getattr(value, "run", None)) \
                    and hasattr(type(value), "__getitem__"):
                value.run = self.wrap(f"triton.{attr}", value.run)


SIZE_TENSOR_MAX = 16
"""Elements a size tensor has at most (a shape has one per dimension): nothing of the problem's data fits there."""
_ACCUMULATING = {"aten::index_put_", "aten::index_put", "aten::_index_put_impl_", "aten::put_", "aten::put",
                 "aten::_unsafe_index_put"}
"""Indexed writes that add into their target when their `accumulate` argument (the fourth) is true."""


def _accumulates(args: tuple, kwargs: dict) -> bool:
    return bool(kwargs.get("accumulate", args[3] if len(args) > 3 else False))


SIZE_OPS_MAX = 64
"""Size or bookkeeping operators one recorded forward may run unrecorded (a shape's product, a counter's step)."""


def _small(t: torch.Tensor) -> bool:
    """At most SIZE_TENSOR_MAX elements, in storage of its own no larger (not a window of a bigger tensor)."""
    try:
        return t.numel() <= SIZE_TENSOR_MAX and t.untyped_storage().nbytes() <= SIZE_TENSOR_MAX * 8
    except (RuntimeError, NotImplementedError):  # no storage to read (a meta or wrapper tensor)
        return False


def op_names() -> set[str]:
    """Operator names (`ns::name`, overloads dropped) known to the dispatcher right now."""
    return {n.split(".", 1)[0] for n in torch._C._dispatch_get_all_op_names()}


def _tensors(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for x in list(args) + list(kwargs.values()):
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            out.extend(t for t in x if isinstance(t, torch.Tensor))
    seen: set[int] = set()
    return [t for t in out if not (id(t) in seen or seen.add(id(t)))]


def _scrambled(t: torch.Tensor) -> torch.Tensor:
    """Other values than `t`'s wherever it can have them, made on its device with no generator (inputs can be
    gigabytes): floats moved off themselves, booleans negated, integers rolled one place (still valid indices)."""
    if t.dtype == torch.bool:
        return ~t
    if t.is_floating_point() or t.is_complex():
        return t * -1.5 + 0.25
    return t.reshape(-1).roll(1).reshape(t.shape)


def _writable(t: torch.Tensor) -> bool:
    """No two elements share memory (an expanded view has), so noise can be written into it and taken back."""
    return torch._debug_has_internal_overlap(t) == 0


def _map_out(out, fn):
    if isinstance(out, torch.Tensor):
        return fn(out)
    if isinstance(out, (list, tuple)):
        return type(out)(_map_out(x, fn) for x in out)
    return out


INTERCEPT = Interceptor()
"""The worker's one interceptor: the loader wraps extensions with it, the candidate role drives the probes."""
