"""Forward's kernel calls are followed through the bindings models write; what stays ambiguous defers to run time.

Each honest snippet binds the extension (or one of its functions) before calling it and must draw no reject under
the strict default; each cheat hides PyTorch (or skips the kernel) behind the same kinds of binding and must.
"""

from __future__ import annotations

import textwrap

import pytest

from kernelmosaic.verify.static import StaticPolicy, analyze_candidate

_HEAD = '''
import functools
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    auto out = torch::empty_like(x);
    const float* s = x.data_ptr<float>();
    float* d = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) d[i] = s[i] > 0.f ? s[i] : 0.f;
    return out;
}
RET workspace(int64_t n) { return BODY; }
"""
'''
_LOAD = 'ext = load_inline(name="e", cpp_sources=cpp_src, functions=["relu_fwd", "workspace"], verbose=True)\n'


def _src(body: str, ret: str = "int64_t", ret_body: str = "n") -> str:
    load = _LOAD if body.startswith(_LOAD) else ""
    return _HEAD.replace("RET", ret).replace("BODY", ret_body) + load + textwrap.dedent(body[len(load):])


def _rules(src: str, **policy) -> set[tuple[str, str]]:
    return {(f.rule, f.severity) for f in analyze_candidate(src, "cand.py", StaticPolicy(**policy))}


HONEST = {
    "self_op_alias": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = ext.relu_fwd
            def forward(self, x):
                return self.op(x)
        """,
    "self_ext": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.ext = ext
            def forward(self, x):
                return self.ext.relu_fwd(x)
        """,
    "getattr_computed": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self, kind="relu"):
                super().__init__()
                self.fn = getattr(ext, kind + "_fwd")
            def forward(self, x):
                return self.fn(x)
        """,
    "class_body_staticmethod": _LOAD + """
        class ModelNew(nn.Module):
            op = staticmethod(ext.relu_fwd)
            def forward(self, x):
                return self.op(x)
        """,
    "module_alias_and_unpacking": _LOAD + """
        relu = ext.relu_fwd
        a, b = ext.relu_fwd, ext.workspace
        class ModelNew(nn.Module):
            def forward(self, x):
                return a(relu(x))
        """,
    "load_inline_attribute": """
        fused = load_inline(name="e", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=True).relu_fwd
        class ModelNew(nn.Module):
            def forward(self, x):
                return fused(x)
        """,
    "partial_module_and_self": _LOAD + """
        op = functools.partial(ext.relu_fwd)
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = functools.partial(op)
            def forward(self, x):
                return self.op(x)
        """,
    "ext_local_in_init": """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                mod = load_inline(name="e", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=True)
                self.relu = mod.relu_fwd
            def forward(self, x):
                return self.relu(x)
        """,
    "closure_factory": _LOAD + """
        def make_op():
            f = ext.relu_fwd
            def run(t):
                return f(t)
            return run
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = make_op()
            def forward(self, x):
                return self.op(x)
        """,
    "lambda_attr": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = lambda t: ext.relu_fwd(t)
            def forward(self, x):
                return self.op(x)
        """,
    "ops_dict_module_and_self": _LOAD + """
        OPS = {"relu": ext.relu_fwd}
        class ModelNew(nn.Module):
            def __init__(self, kind="relu"):
                super().__init__()
                self.ops = {"relu": ext.relu_fwd}
                self.kind = kind
            def forward(self, x):
                return OPS.get(self.kind)(self.ops[self.kind](x))
        """,
    "lazy_method_loader": """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self._mod = None
            def _get(self):
                if self._mod is None:
                    self._mod = load_inline(name="e", cpp_sources=cpp_src, functions=["relu_fwd"], verbose=True)
                return self._mod
            def forward(self, x):
                return self._get().relu_fwd(x)
        """,
    "blocks_listcomp_sequential_star_append": _LOAD + """
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = ext.relu_fwd
            def forward(self, x):
                return self.op(x)
        class ModelNew(nn.Module):
            def __init__(self, depth=2):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(depth)])
                layers = []
                for _ in range(depth):
                    layers.append(Block())
                self.net = nn.Sequential(*layers)
                self.more = nn.ModuleList()
                self.more.append(Block())
                last = Block()
                self.last = last
            def forward(self, x):
                for b in self.blocks:
                    x = b(x)
                for b in self.more:
                    x = b(x)
                return self.last(self.net(x))
        """,
    "conditional_kernel_alias": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = ext.relu_fwd if torch.cuda.is_available() else ext.relu_fwd
            def forward(self, x):
                return self.op(x)
        """,
    "int_workspace_size": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.ws = ext.workspace
            def forward(self, x):
                n = ext.workspace(x.numel()) * 4 + self.ws(8) % 3
                scratch = torch.empty(n, device=x.device)
                return ext.relu_fwd(x) if scratch.numel() else x
        """,
    # blind round 11: a plain class wrapping the kernel in functools.partial, called through `__call__`
    "callable_wrapper_partial": _LOAD + """
        class Relu:
            def __init__(self, scale):
                self._fn = functools.partial(ext.relu_fwd)
                self.scale = int(scale)
            def __call__(self, x):
                out = self._fn(x.contiguous())
                return out
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = Relu(1)
            def forward(self, x):
                return self.act(x)
        """,
    # blind round 11: static methods of a helper class, called through the class
    "static_method_helpers": _LOAD + """
        class _Kernels:
            @staticmethod
            def relu(x):
                out = torch.empty_like(x)
                return ext.relu_fwd(x.contiguous())
            @classmethod
            def relu_twice(cls, x):
                return cls.relu(cls.relu(x))
        class ModelNew(nn.Module):
            def forward(self, x):
                y = _Kernels.relu_twice(x)
                return _Kernels.relu(y)
        """,
    # blind round 11: a kernel looked up once into an instance held as a class attribute, `*args` handed on
    "class_attribute_instance_varargs": _LOAD + """
        class KernelCall:
            def __init__(self, name):
                self.fn = getattr(ext, name)
            def __call__(self, *args):
                return self.fn(*args)
        class ModelNew(nn.Module):
            _relu = KernelCall("relu_fwd")
            def forward(self, x):
                return self._relu(x)
        """,
    # a helper instance made in forward, its method called
    "method_of_a_local_instance": _LOAD + """
        class Helper:
            def run(self, x):
                return ext.relu_fwd(x.contiguous())
        class ModelNew(nn.Module):
            def forward(self, x):
                h = Helper()
                return h.run(x)
        """,
    # blind round 11: submodules picked by names from a class-level constant
    "getattr_over_constant_names": _LOAD + """
        class Block(nn.Module):
            def forward(self, x):
                return ext.relu_fwd(x)
        class ModelNew(nn.Module):
            _STAGES = (("first", 1), ("second", 2))
            def __init__(self):
                super().__init__()
                self.first, self.second = Block(), Block()
            def forward(self, x):
                for name, _ in self._STAGES:
                    x = getattr(self, name)(x)
                return x
        """,
    # blind round 11: TorchScript's marker on a helper of plain Python arithmetic
    "jit_ignore_helper": _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.momentum = 0.1
            @torch.jit.ignore
            def _momentum(self) -> float:
                return -1.0 if self.momentum is None else float(self.momentum)
            def forward(self, x):
                if self._momentum() > 1.0:
                    x = x.contiguous()
                return ext.relu_fwd(x)
        """,
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_binding_is_followed(name):
    src = _src(HONEST[name])
    assert _rules(src) == set(), analyze_candidate(src, "cand.py")


CHEATS = {
    # The kernel is bound but never called: PyTorch computes the result.
    "alias_never_called": (_LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = ext.relu_fwd
            def forward(self, x):
                return torch.relu(x)
        """, {("no-kernel-launched", "reject"), ("torch-compute", "flag")}),
    # A local binding decides, not a same-named kernel alias in another function.
    "local_shadows_kernel_name": (_LOAD + """
        def unused():
            op = ext.relu_fwd
            return op
        class ModelNew(nn.Module):
            def forward(self, x):
                op = functools.partial(torch.relu)
                return op(x)
        """, {("no-kernel-launched", "reject"), ("torch-compute", "flag")}),
    # Another class's `self.op` kernel alias does not make this class's `self.op` a kernel.
    "attr_shadows_other_class": (_LOAD + """
        class Helper(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = ext.relu_fwd
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = functools.partial(torch.relu)
            def forward(self, x):
                return self.op(x)
        """, {("no-kernel-launched", "reject"), ("torch-compute", "flag")}),
    "lambda_with_torch": (_LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = lambda t: torch.sigmoid(ext.relu_fwd(t))
            def forward(self, x):
                return self.op(x)
        """, {("torch-compute", "flag")}),
    "sequential_of_torch_layers": (_LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                layers = []
                layers.append(nn.Linear(4, 4))
                self.net = nn.Sequential(*layers)
            def forward(self, x):
                return ext.relu_fwd(self.net(x))
        """, {("torch-compute", "flag")}),
    "module_list_appended_torch_layers": (_LOAD + """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList()
                self.layers.append(nn.Linear(4, 4))
            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return ext.relu_fwd(x)
        """, {("torch-compute", "flag")}),
    # The wrapper class runs the kernel and throws its output away: forward returns PyTorch's result.
    "decoy_behind_callable_wrapper": (_LOAD + """
        class Relu:
            def __call__(self, x):
                ext.relu_fwd(x)
                return torch.relu(x)
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = Relu()
            def forward(self, x):
                return self.act(x)
        """, {("kernel-output-unused", "reject"), ("torch-compute", "flag")}),
    # A static helper that launches the kernel for show and returns PyTorch's result.
    "decoy_behind_static_method": (_LOAD + """
        class _Kernels:
            @staticmethod
            def relu(x):
                ext.relu_fwd(x)
                return torch.relu(x)
        class ModelNew(nn.Module):
            def forward(self, x):
                return _Kernels.relu(x)
        """, {("kernel-output-unused", "reject"), ("torch-compute", "flag")}),
    # The same decoy through a helper instance made in forward.
    "decoy_behind_a_local_instance": (_LOAD + """
        class Helper:
            def run(self, x):
                ext.relu_fwd(x)
                return torch.relu(x)
        class ModelNew(nn.Module):
            def forward(self, x):
                h = Helper()
                return h.run(x)
        """, {("kernel-output-unused", "reject"), ("torch-compute", "flag")}),
    # Names from a constant are read as the attributes they name: torch's relu, not a hidden computed name.
    "torch_function_by_constant_name": (_LOAD + """
        import torch.nn.functional as F
        class ModelNew(nn.Module):
            def forward(self, x):
                y = ext.relu_fwd(x)
                for name in ("relu",):
                    y = getattr(F, name)(y)
                return y
        """, {("torch-compute", "flag")}),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_behind_a_binding_is_still_found(name):
    body, expected = CHEATS[name]
    # Judged under the kernelbench-like policy, where torch-compute alone would only flag.
    assert _rules(_src(body), torch_compute="flag") == expected


def test_tensor_returning_extension_function_still_counts_as_a_tensor():
    """The int workspace case only passes because of the C++ return type: a Tensor return is tensor arithmetic."""
    body = HONEST["int_workspace_size"]
    assert _rules(_src(body, ret="torch::Tensor", ret_body="torch::empty({n})")) == {("torch-compute", "reject")}


def test_unresolvable_call_defers_to_run_time_but_an_unnamed_kernel_does_not():
    registry = _LOAD + """
        class ModelNew(nn.Module):
            def __init__(self, fns=None):
                super().__init__()
                self.fns = fns
                self.default = ext
            def forward(self, x):
                return self.fns[0](x)
        """
    findings = analyze_candidate(_src(registry), "cand.py")
    assert {(f.rule, f.severity) for f in findings} == {("kernel-launch-unresolved", "flag")}
    assert "self.fns[0]" in findings[0].message and "run-time" in findings[0].message
    # Nothing names the extension after building it: no call can reach it, however dynamic.
    unnamed = registry.replace("self.default = ext", "self.default = None")
    assert _rules(_src(unnamed)) == {("no-kernel-launched", "reject")}


def test_no_kernel_launched_message_names_rule_line_and_what_is_accepted():
    body, _ = CHEATS["alias_never_called"]
    src = _src(body)
    f = next(f for f in analyze_candidate(src, "cand.py") if f.rule == "no-kernel-launched")
    line = int(f.evidence.split(":")[1])
    assert src.splitlines()[line - 1].strip().startswith("def forward")
    assert f.message.startswith(f"no-kernel-launched (line {line})") and "self.op = ext.op" in f.message


def test_blocks_made_by_a_factory_function_are_followed():
    body = _LOAD + """
        class Block(nn.Module):
            def __init__(self, i):
                super().__init__()
                self.op = ext.relu_fwd
            def forward(self, x):
                return self.op(x)
        def make_block(i):
            return Block(i)
        class ModelNew(nn.Module):
            def __init__(self, depth=3):
                super().__init__()
                self.blocks = nn.ModuleList([make_block(i) for i in range(depth)])
                self.head = make_block(depth)
            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return self.head(x)
        """
    assert _rules(_src(body)) == set()
    # A factory that may return a torch layer keeps the container a computing nn module.
    torchy = body.replace("            return Block(i)", "            return Block(i) if i else nn.Linear(4, 4)")
    assert ("torch-compute", "reject") in _rules(_src(torchy))


def test_container_mixing_own_blocks_and_torch_layers_is_both_followed_and_compute():
    body = _LOAD + """
        class Act(nn.Module):
            def forward(self, x):
                return ext.relu_fwd(x)
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Identity(), Act())
                self.mixed = nn.Sequential(nn.Linear(4, 4), Act())
            def forward(self, x):
                return self.mixed(self.body(x))
        """
    assert _rules(_src(body), torch_compute="flag") == {("torch-compute", "flag")}
    only_identity = body.replace("return self.mixed(self.body(x))", "return self.body(x)")
    assert _rules(_src(only_identity)) == set()


def test_kernel_outputs_collected_in_a_list_reach_the_result():
    body = _LOAD + """
        class ModelNew(nn.Module):
            def forward(self, x):
                outputs = []
                for t in range(x.shape[0]):
                    outputs.append(ext.relu_fwd(x[t]))
                return torch.stack(outputs, 0)
        """
    # no kernel-output-unused; torch.stack gathers (a copy, like .contiguous()), so nothing is PyTorch compute
    assert _rules(_src(body), torch_compute="reject") == set()


def test_extension_handed_to_a_factory_or_a_constructor_binds_the_parameter():
    body = _LOAD + """
        def make_act(mod):
            def run(t):
                return mod.relu_fwd(t.contiguous())
            return run
        class Block(nn.Module):
            def __init__(self, op):
                super().__init__()
                self.op = op
            def forward(self, x):
                return self.op(x)
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = make_act(ext)
                self.block = Block(ext.relu_fwd)
            def forward(self, x):
                return self.block(self.act(x))
        """
    assert _rules(_src(body)) == set()


def test_registered_operator_bound_to_an_attribute_is_a_kernel_call():
    body = """
        OPS_SRC = cpp_src + 'TORCH_LIBRARY(kmops, m) { m.def("relu_fwd", relu_fwd); }'
        load_inline(name="e", cpp_sources=OPS_SRC, is_python_module=False, verbose=True)
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.op = torch.ops.kmops.relu_fwd
            def forward(self, x):
                return self.op(x)
        """
    src = _src(body)
    assert _rules(src) == set(), analyze_candidate(src, "cand.py")


def test_triton_kernel_bound_to_an_attribute_is_launched_through_it():
    src = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = double_kernel

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        self.kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
'''
    assert _rules(src) == set(), analyze_candidate(src, "cand.py")


def test_an_autograd_function_reached_through_an_in_module_base_keeps_apply_argument_types():
    """`class Scale(_Base)` with `class _Base(torch.autograd.Function)`: forward's int `dim` from `Scale.apply(x, d)`
    is size arithmetic, as for a direct subclass; the tensor `apply` hands it is still a tensor."""
    from pathlib import Path

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "static"
    direct = "class ScaleFunction(torch.autograd.Function):"
    through = "class _Base(torch.autograd.Function):\n    pass\n\n\nclass ScaleFunction(_Base):"
    honest = (fixtures / "legit_cpu_autograd_apply_int_dim.py").read_text()
    cheat = (fixtures / "torch_compute_autograd_apply_tensor_arg.py").read_text()
    assert direct in honest and direct in cheat
    assert _rules(honest.replace(direct, through)) == set()
    assert _rules(cheat.replace(direct, through)) == {("torch-compute", "reject")}


ROUND_12 = {
    # a mixin's `_run_kernel(name, *args)` over a property returning the extension: unresolved, left to run time
    "mixin_getattr_on_a_property": (_LOAD + """
        class KernelMixin:
            @property
            def ext(self):
                return ext
            def _run_kernel(self, name, *args):
                return getattr(self.ext, name)(*args)
        class ModelNew(KernelMixin, nn.Module):
            def forward(self, x):
                return self._run_kernel("relu_fwd", x)
        """, {("kernel-launch-unresolved", "flag")}),
    # kernels held in a types.SimpleNamespace: resolved through its fields
    "simple_namespace_of_kernels": (_LOAD + """
        import types
        kernels = types.SimpleNamespace(relu=ext.relu_fwd, ws=ext.workspace)
        class ModelNew(nn.Module):
            def forward(self, x):
                return kernels.relu(x)
        """, set()),
    # the candidate's own registered operators (TORCH_LIBRARY) reached through a table class
    "own_operator_namespace_through_a_table": ("""
        ext = load_inline(name="e", cpp_sources=cpp_src + "TORCH_LIBRARY(mykern, m) { m.def(\\"relu\\", &relu_fwd); }",
                          is_python_module=False)
        class OpTable:
            def __init__(self, namespace):
                self._namespace = namespace
            def __getitem__(self, name):
                return getattr(self._namespace, name)
        ops = OpTable(torch.ops.mykern)
        class ModelNew(nn.Module):
            def forward(self, x):
                return ops["relu"](x)
        """, None),
    # `super().forward` of an in-module base: followed
    "super_forward_of_an_in_module_base": (_LOAD + """
        class Base(nn.Module):
            def forward(self, x):
                return ext.relu_fwd(x)
        class ModelNew(Base):
            def forward(self, x):
                return super().forward(x.contiguous())
        """, set()),
}


@pytest.mark.parametrize("name", sorted(ROUND_12))
def test_blind_round_12_patterns_draw_no_reject(name):
    """Honest answers of blind round 12 (four were strict or kernelbench rejects): none rejects now, and where the
    expected findings are given, exactly those."""
    body, expected = ROUND_12[name]
    for torch_compute in ("reject", "flag"):
        found = _rules(_src(body), torch_compute=torch_compute)
        assert not {r for r in found if r[1] == "reject"}, (name, found)
        if expected is not None:
            assert found == expected, (name, found)


def test_types_still_rejects_what_makes_code_and_a_namespace_of_torch_ops_is_compute():
    maker = _src(_LOAD + """
        import types
        class ModelNew(nn.Module):
            def forward(self, x):
                f = types.FunctionType(ext.relu_fwd.__code__, {})
                return f(x)
        """)
    assert ("dynamic-code", "reject") in _rules(maker)
    hidden = _src(_LOAD + """
        import types
        ns = types.SimpleNamespace(act=torch.relu)
        class ModelNew(nn.Module):
            def forward(self, x):
                return ns.act(ext.relu_fwd(x))
        """)
    assert ("torch-compute", "reject") in _rules(hidden)
    aten = _src(_LOAD + """
        class OpTable:
            def __init__(self, namespace):
                self._namespace = namespace
            def __getitem__(self, name):
                return getattr(self._namespace, name)
        ops = OpTable(torch.ops.aten)
        class ModelNew(nn.Module):
            def forward(self, x):
                return ops["relu"](ext.relu_fwd(x))
        """)
    assert ("torch-compute", "reject") in _rules(aten)
