"""Issue 11's policies and robustness on CUDA (scripts/gpu/gpu-check): a partial replacement whose custom kernel's output
is used is accepted under `kernelbench` with its share of device time, and is a static reject under `strict`; one
whose custom kernel's output is discarded is rejected under both; a kernel with the problem's size baked in fails
its alternative shape (a reject under `strict`, a flag under `kernelbench`)."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.tasks.shapes import apply_shape_overrides, derive_alternatives
from kernelmosaic.verify import Alternative, Status, Verifier, VerifyConfig

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

PROBLEM_ADD_RELU_SCALE = gk.PROBLEM_ADD_RELU.replace("return torch.relu(a + b)", "return torch.relu(a + b) * 2.0")

FIXED_KERNELS = gk._HEAD + r'''
// Written for the problem's n = 1 << 24: whole blocks of 256 and no tail, so any n that 256 does not divide
// leaves its last elements unwritten.
__global__ void add_relu_no_tail_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out) {
    int64_t i = blockIdx.x * 256 + threadIdx.x;
    float v = a[i] + b[i];
    out[i] = v > 0.f ? v : 0.f;
}

torch::Tensor add_relu_fixed(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    add_relu_no_tail_kernel<<<a.numel() / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>());
    return out;
}
'''
FIXED_DECL = "torch::Tensor add_relu_fixed(torch::Tensor a, torch::Tensor b);\n"


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing=False)
    with Verifier(config) as v:
        yield v


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu-policy-problems")
    (d / "add.py").write_text(gk.PROBLEM_ADD_RELU)
    (d / "scale.py").write_text(PROBLEM_ADD_RELU_SCALE)
    return d


def _rules(verdict, severity: str) -> set[str]:
    return {f.rule for f in verdict.findings if f.severity == severity}


def test_a_used_custom_kernel_beside_pytorch_is_accepted_under_kernelbench_with_its_share(verifier, problems, tmp_path):
    cand = kit.write(tmp_path, "partial.py", gk.cuda_candidate("ext.add_relu(a, b) * 2.0"))
    v = verifier.verify(problems / "scale.py", cand, policy="kernelbench")
    assert v.accepted and v.policy == "kernelbench", v.message
    assert "torch-compute" in _rules(v, "flag")
    assert any(k.reaches_output for k in v.custom.kernels)
    assert v.custom.share_basis == "device_time" and 0.0 < v.custom.share < 1.0, v.custom
    strict = verifier.verify(problems / "scale.py", cand)
    assert strict.status == Status.static_reject and "torch-compute" in _rules(strict, "reject")


def test_a_custom_kernel_whose_output_is_discarded_is_rejected(verifier, problems, tmp_path):
    source = gk.cuda_candidate("torch.relu(a + b) * 2.0").replace(
        "    def forward(self, a, b):\n", "    def forward(self, a, b):\n        ext.add_relu(a, b)\n")
    v = verifier.verify(problems / "scale.py", kit.write(tmp_path, "discarded.py", source), policy="kernelbench")
    assert not v.accepted and "kernel-output-unused" in _rules(v, "reject"), f"{v.status}: {v.message}"


def test_a_kernel_with_the_size_baked_in_fails_its_alternative_shape(verifier, problems, tmp_path):
    (overrides,) = derive_alternatives(gk.PROBLEM_ADD_RELU)
    alt = Alternative(label=", ".join(f"{k}={v}" for k, v in overrides.items()),
                      problem=kit.write(tmp_path, "add_alt.py", apply_shape_overrides(gk.PROBLEM_ADD_RELU, overrides)))
    fixed = kit.write(tmp_path, "fixed.py", gk.cuda_candidate("ext.add_relu_fixed(a, b)", kernels=FIXED_KERNELS,
                                                              decl=FIXED_DECL, name="km_gpu_fixed"))
    strict = verifier.verify(problems / "add.py", fixed, alternatives=[alt])
    assert not strict.accepted and "shape-specialised" in _rules(strict, "reject"), f"{strict.status}: {strict.message}"
    assert not strict.robustness.passed
    lenient = verifier.verify(problems / "add.py", fixed, alternatives=[alt], policy="kernelbench")
    assert lenient.accepted and "shape-specialised" in _rules(lenient, "flag"), lenient.message
    generic = verifier.verify(problems / "add.py", kit.write(tmp_path, "generic.py", gk.cuda_candidate("ext.add_relu(a, b)")),
                              alternatives=[alt])
    assert generic.accepted and generic.robustness.passed, generic.message
