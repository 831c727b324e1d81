# corpus: problem=kb_l1_037_frobenius_norm device=cuda expect=accepted policy=both
# style: two kernels, cub::BlockReduce<double> + double atomicAdd, float4, cudaDeviceSynchronize after each launch, lazy _ext = None loader, verbose=True, __main__ self-test
# class: 2,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 112
features = 64
dim1 = 512
dim2 = 512

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cub/cub.cuh>

constexpr int BLOCK = 256;

#define CUDA_CHECK_LAST(msg)                                                     \
    do {                                                                         \
        cudaError_t e__ = cudaGetLastError();                                    \
        TORCH_CHECK(e__ == cudaSuccess, msg, ": ", cudaGetErrorString(e__));     \
    } while (0)

// Pass 1: sum of squares. Per-thread double accumulator, block reduce with CUB,
// one double atomicAdd per block.
__global__ void __launch_bounds__(BLOCK)
sumsq_kernel(const float* __restrict__ x, int64_t n, double* __restrict__ acc_out) {
    typedef cub::BlockReduce<double, BLOCK> BlockReduceT;
    __shared__ typename BlockReduceT::TempStorage tmp;

    double acc = 0.0;
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int64_t stride = (int64_t)gridDim.x * BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n4; i += stride) {
        float4 v = x4[i];
        float s = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        acc += (double)s;
    }
    for (int64_t i = n4 * 4 + (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        acc += (double)(v * v);
    }
    double block_sum = BlockReduceT(tmp).Sum(acc);
    if (threadIdx.x == 0) atomicAdd(acc_out, block_sum);
}

// Pass 2: y = x / sqrt(sumsq)
__global__ void __launch_bounds__(BLOCK)
scale_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
             const double* __restrict__ sumsq) {
    const float inv = (float)(1.0 / sqrt(*sumsq));
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    const int64_t stride = (int64_t)gridDim.x * BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n4; i += stride) {
        float4 v = x4[i];
        v.x *= inv; v.y *= inv; v.z *= inv; v.w *= inv;
        y4[i] = v;
    }
    for (int64_t i = n4 * 4 + (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        y[i] = x[i] * inv;
    }
}

torch::Tensor frobenius_normalize(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    auto sumsq = torch::zeros({1}, xc.options().dtype(torch::kFloat64));
    const int64_t n = xc.numel();
    if (n == 0) return y;

    int dev = xc.get_device();
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    int64_t want = (n / 4 + BLOCK - 1) / BLOCK;
    int blocks = (int)std::min<int64_t>(std::max<int64_t>(want, 1), (int64_t)sms * 8);

    sumsq_kernel<<<blocks, BLOCK>>>(xc.data_ptr<float>(), n, sumsq.data_ptr<double>());
    CUDA_CHECK_LAST("sumsq_kernel");
    cudaDeviceSynchronize();

    scale_kernel<<<blocks, BLOCK>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n,
                                    sumsq.data_ptr<double>());
    CUDA_CHECK_LAST("scale_kernel");
    cudaDeviceSynchronize();
    return y;
}
"""

cpp_source = "torch::Tensor frobenius_normalize(torch::Tensor x);"

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="frobenius_norm_cub",
            cpp_sources=cpp_source,
            cuda_sources=cuda_source,
            functions=["frobenius_normalize"],
            extra_cuda_cflags=["-O3"],
            verbose=True,
        )
    return _ext


class ModelNew(nn.Module):
    """x / ||x||_F with a two-pass CUDA implementation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _get_ext().frobenius_normalize(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return []


if __name__ == "__main__":
    x = torch.randn(4, 8, 32, 32, device="cuda")
    ref = x / torch.norm(x, p="fro")
    out = ModelNew().cuda()(x)
    print("max abs diff:", (out - ref).abs().max().item())
