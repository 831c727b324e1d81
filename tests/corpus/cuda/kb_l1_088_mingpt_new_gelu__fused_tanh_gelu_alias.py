# corpus: problem=kb_l1_088_mingpt_new_gelu device=cuda expect=accepted policy=both
# style: self.gelu = ext.op alias
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

act_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cmath>

struct SigmoidOp { __device__ __forceinline__ float operator()(float v) const { return 1.0f / (1.0f + expf(-v)); } };
struct TanhOp { __device__ __forceinline__ float operator()(float v) const { return tanhf(v); } };
struct GeluTanhOp {
    __device__ __forceinline__ float operator()(float v) const {
        const float k = 0.7978845608028654f;  // sqrt(2 / pi)
        return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
};

// float4 body for the aligned bulk, a scalar loop for the tail.
template <typename Op>
__global__ void unary_vec4_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, Op op) {
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x4[i];
        v.x = op(v.x); v.y = op(v.y); v.z = op(v.z); v.w = op(v.w);
        y4[i] = v;
    }
    for (int64_t i = n4 * 4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = op(x[i]);
}

template <typename Op>
static torch::Tensor launch_unary(torch::Tensor x, Op op) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "float32 only");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    int blocks = (int)std::min<int64_t>((n / 4 + threads - 1) / threads + 1, 132 * 64);
    unary_vec4_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, op);
    auto err = cudaGetLastError();
    if (err != cudaSuccess) TORCH_CHECK(false, "unary kernel failed: ", cudaGetErrorString(err));
    return y;
}

torch::Tensor sigmoid_forward(torch::Tensor x) { return launch_unary(x, SigmoidOp{}); }
torch::Tensor tanh_forward(torch::Tensor x) { return launch_unary(x, TanhOp{}); }
torch::Tensor gelu_tanh_forward(torch::Tensor x) { return launch_unary(x, GeluTanhOp{}); }
"""

act_cpp_source = """
torch::Tensor sigmoid_forward(torch::Tensor x);
torch::Tensor tanh_forward(torch::Tensor x);
torch::Tensor gelu_tanh_forward(torch::Tensor x);
"""

act = load_inline(
    name="unary_activations_ext",
    cpp_sources=act_cpp_source,
    cuda_sources=act_cuda_source,
    functions=['sigmoid_forward', 'tanh_forward', 'gelu_tanh_forward'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = act.gelu_tanh_forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(x)
