"""Patterns from honest answers written blind, the way models answer KernelBench, that the static analysis rejected:
an extension compiled once into a class attribute, a classmethod that builds the op lazily, a module-held output
buffer the kernel fills and forward returns a copy of, and an autograd.Function whose backward uses PyTorch. Each
case here was rejected before the fix; the cheats next to them still are."""

from __future__ import annotations

import pytest

from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.static import analyze_candidate

HEAD = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
#include <torch/extension.h>
torch::Tensor twice(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* p = x.data_ptr<float>();
    float* q = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) q[i] = 2.0f * p[i];
    return y;
}
void twice_into(torch::Tensor x, torch::Tensor out) {
    const float* p = x.data_ptr<float>();
    float* q = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) q[i] = 2.0f * p[i];
}
"""


def _build():
    return load_inline(name="fresh", cpp_sources=SRC, functions=["twice", "twice_into"], verbose=False)
'''

CLASS_ATTRIBUTE = {
    "assigned on the class, called through self": ("ModelNew._ext = LOAD", "self._ext.twice(x)"),
    "assigned on the class, called through type(self)": ("ModelNew._ext = LOAD", "type(self)._ext.twice(x)"),
    "assigned through type(self), called through __class__": ("type(self)._ext = LOAD",
                                                               "self.__class__._ext.twice(x)"),
    "assigned and called on the class": ("ModelNew._ext = LOAD", "ModelNew._ext.twice(x)"),
}


def _rules(src: str, policy: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in analyze_candidate(src, "c.py", VerifyConfig(policy=policy).static_policy())]


def _rejects(src: str, policy: str) -> list[str]:
    return [rule for rule, severity in _rules(src, policy) if severity == "reject"]


@pytest.mark.parametrize("how", sorted(CLASS_ATTRIBUTE))
def test_an_extension_kept_as_a_class_attribute_is_followed(how):
    assign, call = CLASS_ATTRIBUTE[how]
    assign = assign.replace("LOAD", 'load_inline(name="fresh", cpp_sources=SRC, functions=["twice"])')
    src = HEAD + f'''

class ModelNew(nn.Module):
    _ext = None  # compiled once, shared by every instance

    def __init__(self):
        super().__init__()
        if ModelNew._ext is None:
            {assign}

    def forward(self, x):
        return {call}
'''
    for policy in ("strict", "kernelbench"):  # followed: neither rejected nor left to the run time
        assert not {"no-kernel-launched", "kernel-launch-unresolved"} & {r for r, _ in _rules(src, policy)}, (
            how, policy, _rules(src, policy))


def test_a_classmethod_that_builds_the_op_lazily_is_followed():
    src = HEAD + '''

class ModelNew(nn.Module):
    _ext = None

    @classmethod
    def _get_op(cls):
        if cls._ext is None:
            cls._ext = load_inline(name="fresh", cpp_sources=SRC, functions=["twice"])
        fn = cls._ext.twice
        return lambda t: fn(t)

    def __init__(self):
        super().__init__()
        self._op = None

    def forward(self, x):
        if self._op is None:
            self._op = self._get_op()
        return self._op(x)
'''
    for policy in ("strict", "kernelbench"):
        assert _rejects(src, policy) == [], (policy, _rules(src, policy))


BUFFER = HEAD + '''
_ext = _build()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._buf = None  # reused output buffer

    def forward(self, x):
        if self._buf is None or self._buf.shape != x.shape:
            self._buf = torch.empty(x.shape, dtype=torch.float32)
        _ext.twice_into(x, self._buf)
        return RESULT
'''


def test_a_module_held_buffer_the_kernel_fills_reaches_the_result():
    for result in ("self._buf.clone()", "self._buf"):
        src = BUFFER.replace("RESULT", result)
        assert "kernel-output-unused" not in _rejects(src, "strict"), (result, _rules(src, "strict"))


def test_a_buffer_the_kernel_fills_while_pytorch_computes_the_result_is_still_unused():
    src = BUFFER.replace("RESULT", "torch.relu(x) * 2")
    assert "kernel-output-unused" in _rejects(src, "kernelbench"), _rules(src, "kernelbench")


AUTOGRAD = HEAD + '''
_ext = _build()


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _ext.twice(x)

    @staticmethod
    def backward(ctx, grad):
        return grad @ torch.eye(grad.shape[-1]) * 2


class ModelNew(nn.Module):
    def forward(self, x):
        return Twice.apply(x)
'''


def test_an_autograd_functions_backward_is_not_forward_compute():
    """The verifier runs forward only: PyTorch in backward never runs in a judgement."""
    assert _rejects(AUTOGRAD, "strict") == [], _rules(AUTOGRAD, "strict")


def test_pytorch_in_an_autograd_functions_forward_still_rejects_under_strict():
    src = AUTOGRAD.replace("return _ext.twice(x)", "return _ext.twice(x) + torch.tanh(x)")
    assert "torch-compute" in _rejects(src, "strict"), _rules(src, "strict")


def test_an_attribute_set_on_ctx_does_not_make_ctx_a_tensor():
    """`ctx.divisor = divisor` sets an attribute of the autograd context; `ctx.save_for_backward(z)` is then a method of
    the context, not a tensor method (third round of blind answers)."""
    src = AUTOGRAD.replace("        return _ext.twice(x)",
                           "        ctx.save_for_backward(x)\n        ctx.scale = x\n        return _ext.twice(x)")
    assert "ctx.save_for_backward(x)" in src
    assert _rejects(src, "strict") == [], _rules(src, "strict")
    tensor_method = src.replace("ctx.save_for_backward(x)", "ctx.scale = x\n        x.exp_()")
    assert "torch-compute" in _rejects(tensor_method, "strict")


WORKSPACE = HEAD + '''
_ext = _build()


class ModelNew(nn.Module):
    def _workspace(self, like, shape):
        buf = getattr(self, "_buf", None)
        if buf is None or buf.shape != torch.Size(shape) or buf.device != like.device or buf.dtype != like.dtype:
            buf = torch.empty(shape, device=like.device, dtype=like.dtype)
            self._buf = buf
        return buf

    def forward(self, x):
        out = self._workspace(x, x.shape)
        _ext.twice_into(x, out)
        return out.clone()
'''


def test_comparing_a_shape_a_device_or_a_dtype_is_not_tensor_compute():
    """`buf.shape != torch.Size(shape)` compares sizes: a workspace's reuse test, not a comparison of tensors."""
    assert _rejects(WORKSPACE, "strict") == [], _rules(WORKSPACE, "strict")
    compared = WORKSPACE.replace("return out.clone()", "return out.clone() if (x > torch.zeros(1)).all() else x")
    assert "torch-compute" in _rejects(compared, "strict"), _rules(compared, "strict")


SELF_TEST = HEAD + '''
_ext = _build()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.twice(x)
PREFIX
if __name__ == "__main__":  # a quick self-test, as models append one
    torch.manual_seed(0)
    x = torch.randn(16)
    ref = x * 2
    print("max err", (ModelNew()(x) - ref).abs().max().item())
ELSE'''


def test_a_self_test_under_the_main_guard_is_not_judged():
    """It never runs when the verifier imports the candidate (under a module name of its own)."""
    src = SELF_TEST.replace("PREFIX", "").replace("ELSE", "")
    for policy in ("strict", "kernelbench"):
        assert _rejects(src, policy) == [], (policy, _rules(src, policy))
    reversed_test = src.replace('if __name__ == "__main__":', 'if "__main__" == __name__:')
    assert _rejects(reversed_test, "strict") == [], _rules(reversed_test, "strict")


@pytest.mark.parametrize("how", ['__name__ = "__main__"', 'def _main():\n    global __name__\n    __name__ = "__main__"\n',
                                 '(__name__ := "__main__")'])
def test_the_main_block_is_judged_where_the_module_can_make_its_test_true(how):
    src = SELF_TEST.replace("PREFIX", how + "\n").replace("ELSE", "")
    assert "rng-control" in _rejects(src, "kernelbench"), (how, _rules(src, "kernelbench"))


def test_the_else_of_the_main_guard_runs_on_import_and_is_judged():
    src = SELF_TEST.replace("PREFIX", "").replace("ELSE", "else:\n    torch.manual_seed(1)\n")
    assert "rng-control" in _rejects(src, "kernelbench"), _rules(src, "kernelbench")


def test_a_computed_include_path_keeps_the_source_in_view():
    """`extra_include_paths=[os.path.join(CUDA_HOME or "/usr/local/cuda", "include")]`, with a build folder made
    first, as models write it: the sources are literals, so nothing is opaque."""
    src = HEAD.replace("from torch.utils.cpp_extension import load_inline",
                       "import os\nfrom torch.utils.cpp_extension import CUDA_HOME, load_inline") + '''
_build_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_twice")
os.makedirs(_build_dir, exist_ok=True)
_ext = load_inline(name="fresh", cpp_sources=SRC, functions=["twice"], build_directory=_build_dir,
                   extra_include_paths=[os.path.join(CUDA_HOME or "/usr/local/cuda", "include")])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.twice(x)
'''
    for policy in ("strict", "kernelbench"):
        assert _rejects(src, policy) == [], (policy, _rules(src, policy))


def test_computed_link_flags_stay_opaque():
    """They decide which library does the work (`vendor-library`)."""
    src = HEAD + '''
_libs = ["-l" + name for name in ("cublas",)]
_ext = load_inline(name="fresh", cpp_sources=SRC, functions=["twice"], extra_ldflags=_libs)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.twice(x)
'''
    assert "opaque-source" in _rejects(src, "kernelbench"), _rules(src, "kernelbench")


def test_the_references_dropout_modules_called_in_forward_are_not_compute():
    """Attention answers keep the reference's `attn_dropout`/`resid_dropout` (p=0 in KernelBench) and call them."""
    src = HEAD + '''
_ext = _build()


class ModelNew(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.resid_dropout = nn.Dropout(p)

    def forward(self, x):
        return self.resid_dropout(_ext.twice(x))
'''
    assert _rejects(src, "strict") == [], _rules(src, "strict")
    # a module that computes is still compute
    assert "torch-compute" in _rejects(src.replace("nn.Dropout(p)", "nn.GELU()"), "strict")


def test_helpers_defined_in_if_blocks_are_followed_whichever_runs():
    """Each definition is judged: honest in both branches, nothing is rejected; PyTorch in one, strict rejects."""
    src = HEAD + '''
_ext = _build()

if hasattr(torch, "compile"):
    def _op(x):
        return _ext.twice(x)
else:
    def _op(x):
        return _ext.twice(x.contiguous())


class ModelNew(nn.Module):
    def forward(self, x):
        return _op(x)
'''
    assert _rejects(src, "strict") == [], _rules(src, "strict")
    cheat = src.replace("return _ext.twice(x.contiguous())", "return torch.relu(x) * 2")
    assert "torch-compute" in _rejects(cheat, "strict"), _rules(cheat, "strict")


def test_stepping_batchnorms_batch_counter_is_not_compute():
    """A fully custom BatchNorm answer steps `num_batches_tracked` as nn.BatchNorm does (`+= 1` or `.add_(1)`)."""
    src = HEAD + '''
_ext = _build()


class ModelNew(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        bn = self.bn
        if bn.training and bn.track_running_stats:
            bn.num_batches_tracked.add_(1)
        return _ext.twice(x)
'''
    assert _rejects(src, "strict") == [], _rules(src, "strict")
    assert _rejects(src.replace(".add_(1)", " += 1"), "strict") == []
    # a running statistic updated by PyTorch is compute; so is a counter stepped by a tensor
    assert "torch-compute" in _rejects(src.replace("num_batches_tracked.add_(1)", "running_mean.add_(1)"), "strict")
    assert "torch-compute" in _rejects(src.replace(".add_(1)", ".add_(x.sum())"), "strict")
    # a counter step that carries data in its keywords (red-team round 9: `acc.num_batches_tracked.add_(other=row,
    # alpha=a)` on a plain object computed a matmul row by row)
    assert "torch-compute" in _rejects(src.replace(".add_(1)", ".add_(other=x, alpha=2)"), "strict")


@pytest.mark.parametrize("held", ["panels = [_ext.twice(x).numpy(), x.numpy()]",
                                  "panels = {0: _ext.twice(x).numpy(), 1: x.numpy()}",
                                  "panels = []\n        panels.append(_ext.twice(x).numpy())\n        panels.append(x.numpy())"])
def test_numpy_compute_on_arrays_held_in_a_container_is_compute(held):
    """Red-team round 9: `np.matmul(panels[0], panels[1])` on `.numpy()` views kept in a list passed under strict."""
    src = HEAD + f'''
import numpy as np

_ext = _build()


class ModelNew(nn.Module):
    def forward(self, x):
        {held}
        return torch.from_numpy(np.multiply(panels[0], panels[1]))
'''
    assert "torch-compute" in _rejects(src, "strict"), _rules(src, "strict")
