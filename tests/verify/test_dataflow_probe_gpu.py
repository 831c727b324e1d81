"""The dataflow probe on CUDA (scripts/gpu/gpu-check): a kernel writing a registered output buffer that forward returns a
copy of is accepted with no `kernel-output-unused` finding; the same kernel with the buffer dropped is rejected."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

KERNELS = gk.ADD_RELU_KERNELS + r'''
#include <algorithm>

void add_relu_into(torch::Tensor a, torch::Tensor b, torch::Tensor out) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && out.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(a.numel() == b.numel() && a.numel() == out.numel(), "size mismatch");
    const int64_t n = a.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    add_relu_kernel<<<blocks, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "add_relu_kernel: ", cudaGetErrorString(err));
}
'''
DECL = "void add_relu_into(torch::Tensor a, torch::Tensor b, torch::Tensor out);\n"

PRELUDE = '''

class _Buffered(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("out_buf", torch.empty(0), persistent=False)

    def run(self, a, b):
        if self.out_buf.numel() != a.numel():
            self.out_buf = torch.empty_like(a)
        ext.add_relu_into(a.contiguous(), b.contiguous(), self.out_buf)
        return self.out_buf
'''


def _candidate(forward: str) -> str:
    src = gk.cuda_candidate(forward, kernels=KERNELS, decl=DECL, name="km_gpu_probe_buffer")
    src = src.replace("class ModelNew(nn.Module):\n", PRELUDE.lstrip("\n") + "\n\nclass ModelNew(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.inner = _Buffered()\n\n")
    return src


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing=False, static_checks=False)
    with Verifier(config) as v:
        yield v


def test_a_reused_cuda_output_buffer_returned_as_a_copy_is_accepted(verifier, tmp_path):
    problem = kit.write(tmp_path, "add.py", gk.PROBLEM_ADD_RELU)
    v = verifier.verify(problem, kit.write(tmp_path, "buffered.py", _candidate("self.inner.run(a, b).clone()")))
    assert v.accepted, f"{v.status}: {v.message}"
    assert not [f for f in v.findings if f.rule == "kernel-output-unused"], v.findings


def test_the_same_buffer_dropped_is_rejected(verifier, tmp_path):
    problem = kit.write(tmp_path, "add.py", gk.PROBLEM_ADD_RELU)
    v = verifier.verify(problem, kit.write(tmp_path, "dropped.py",
                                           _candidate("(self.inner.run(a, b), torch.relu(a + b))[1]")))
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"
    assert any(f.rule == "kernel-output-unused" and f.severity == "reject" for f in v.findings), v.findings
