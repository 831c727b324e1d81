"""`torch.compile` inside `ModelNew` is PyTorch compute, never the candidate's own kernel (docs/threat-model.md).

On the CPU, Inductor's generated C++ is not among the doors the worker watches (load_inline extensions, the
candidate's Triton kernels, registered operators, CuPy launches), so only the candidate's own extension counts: beside
a real C++ kernel the compiled part is PyTorch's share (accepted under `kernelbench`), and a candidate whose only
compute is `torch.compile` has no custom kernel. The CUDA side (Inductor's Triton kernels in the census) is in
test_torch_compile_gpu.py and, by provenance, below.
"""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit, policy_kit

# The conv in the candidate's C++ kernel; ReLU, the linear layer and log-softmax compiled by Inductor, as a model
# writes it when it fuses "the rest" with torch.compile.
COMPILED_HEAD = policy_kit.candidate(
    "w, b = self.conv.weight, self.conv.bias\n"
    "        h = ext.conv3x3(x, w, b)\n"
    "        return self.head(h)").replace(
    "        self.fc = nn.Linear(4 * 10 * 10, classes)\n",
    "        self.fc = nn.Linear(4 * 10 * 10, classes)\n"
    "        self.head = torch.compile(self._head, dynamic=False)\n\n"
    "    def _head(self, h):\n"
    "        return F.log_softmax(self.fc(F.relu(h).flatten(1)), dim=1)\n")

ONLY_COMPILED = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """The whole forward handed to torch.compile: Inductor writes every kernel."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 10 * 10, classes)
        self._fast = torch.compile(self._forward)

    def _forward(self, x):
        return F.log_softmax(self.fc(F.relu(self.conv(x)).flatten(1)), dim=1)

    def forward(self, x):
        return self._fast(x)
'''

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verifier(build_cache):
    # Inductor compiles its C++ inside the first forward: minutes on a loaded 2-core machine
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, run_timeout_s=600,
                          init_timeout_s=120, policy="kernelbench")
    with Verifier(config) as v:
        yield v


def test_compiled_rest_beside_a_real_kernel_is_pytorch_compute_under_kernelbench(verifier, tmp_path):
    digits = kit.write(tmp_path, "problem.py", policy_kit.PROBLEM_DIGITS)
    v = verifier.verify(digits, kit.write(tmp_path, "compiled_head.py", COMPILED_HEAD))
    assert v.accepted, v.message
    assert [(k.name, k.reaches_output) for k in v.custom.kernels] == [("km_digits_ext.conv3x3", True)]
    assert v.custom.share_basis == "host_time" and 0.0 < v.custom.share < 1.0


@pytest.mark.parametrize("policy", ["kernelbench", "strict"])
def test_torch_compile_as_the_only_compute_has_no_custom_kernel(verifier, tmp_path, policy):
    digits = kit.write(tmp_path, "problem.py", policy_kit.PROBLEM_DIGITS)
    v = verifier.verify(digits, kit.write(tmp_path, "only_compiled.py", ONLY_COMPILED), policy=policy)
    assert v.status == Status.no_custom_kernel, v.message


def test_inductor_kernels_are_known_by_provenance_whatever_their_names(tmp_path, monkeypatch):
    """A Triton kernel in a module Inductor's code cache loaded is library code, even under a name no marker knows
    (`unique_kernel_names=False` names them all `triton_`); the candidate's own Triton kernel stays custom."""
    import types

    from torch._inductor.codecache import PyCodeCache

    from kernelmosaic.verify.sandbox.kmworker.census import inductor_kernel_names, is_library_kernel

    generated = tmp_path / "c7abc.py"
    generated.write_text("import triton\nimport triton.language as tl\n\n"
                         "@triton_heuristics.pointwise(size_hints=[1024])\n@triton.jit\n"
                         "def fused_relu_mul_7(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n")
    module = types.ModuleType("torch._inductor.runtime.compile_tasks.c7abc")
    module.__file__ = str(generated)
    monkeypatch.setattr(PyCodeCache, "modules", [*PyCodeCache.modules, module])
    names = inductor_kernel_names()
    assert "fused_relu_mul_7" in names
    assert is_library_kernel("fused_relu_mul_7", names)
    assert is_library_kernel("triton_", names) and is_library_kernel("triton_spl_fused_cumsum_0", names)
    assert not is_library_kernel("my_add_kernel", names)
    assert not is_library_kernel("rowsum_kernel(float const*, float*, int)", names)
