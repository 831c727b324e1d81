# corpus: problem=kb_l1_019_relu device=cuda expect=accepted policy=kernelbench
# style: preallocated output buffer filled by an _out kernel, a copy (clone, a PyTorch copy) returned
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_ext_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

__global__ void relu_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = in[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
}

static void launch_relu(const torch::Tensor& x, torch::Tensor& out) {
    const int64_t n = x.numel();
    if (n == 0) return;
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535LL * 16) blocks = 65535LL * 16;  // grid-stride loop covers the rest
    relu_kernel<<<(unsigned int)blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "relu_kernel launch failed: ", cudaGetErrorString(err));
}

torch::Tensor relu_cuda(torch::Tensor x) {
    CHECK_INPUT(x);
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_cuda expects float32");
    auto out = torch::empty_like(x);
    launch_relu(x, out);
    return out;
}

// Writes into a caller-owned buffer (the same tensor as x for an in-place ReLU).
void relu_out_cuda(torch::Tensor x, torch::Tensor out) {
    CHECK_INPUT(x);
    CHECK_INPUT(out);
    TORCH_CHECK(out.numel() == x.numel(), "out must have as many elements as x");
    launch_relu(x, out);
}
"""

relu_ext_cpp_source = """
torch::Tensor relu_cuda(torch::Tensor x);
void relu_out_cuda(torch::Tensor x, torch::Tensor out);
"""

relu_ext = load_inline(
    name="relu_cuda_ext",
    cpp_sources=relu_ext_cpp_source,
    cuda_sources=relu_ext_cuda_source,
    functions=['relu_cuda', 'relu_out_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    """Reuses one output buffer across calls (no allocation per call) and returns a copy of it."""

    def __init__(self):
        super().__init__()
        self._out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        if self._out is None or self._out.shape != x.shape or self._out.device != x.device:
            self._out = torch.empty_like(x)
        relu_ext.relu_out_cuda(x, self._out)
        return self._out.clone()
