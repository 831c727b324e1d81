# corpus: problem=kb_l1_005_matrix_scalar_mult device=cuda expect=accepted policy=both
# style: module-level alias of the extension function
# class: 1,4,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void scalar_mul_vec_kernel(const float4* __restrict__ a, float4* __restrict__ c, float s, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = a[i];
        c[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
    }
}

__global__ void scalar_mul_tail_kernel(const float* __restrict__ a, float* __restrict__ c, float s, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * s;
}

torch::Tensor scalar_mul_cuda(torch::Tensor A, double s) {
    TORCH_CHECK(A.device().is_cuda(), "A must be a CUDA tensor");
    TORCH_CHECK(A.dtype() == torch::kFloat32, "A must be float32");
    auto a = A.contiguous();
    auto C = torch::empty_like(a);
    const int64_t n = a.numel();
    const int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int blocks = (int)std::min<int64_t>((n4 + threads - 1) / threads, 4096);
        scalar_mul_vec_kernel<<<blocks, threads>>>(reinterpret_cast<const float4*>(a.data_ptr<float>()),
                                                   reinterpret_cast<float4*>(C.data_ptr<float>()), (float)s, n4);
    }
    if (n - n4 * 4 > 0) {
        scalar_mul_tail_kernel<<<1, 4>>>(a.data_ptr<float>(), C.data_ptr<float>(), (float)s, n4 * 4, n);
    }
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "CUDA error: ", cudaGetErrorString(err));
    return C;
}
"""

ext_cpp_source = """
torch::Tensor scalar_mul_cuda(torch::Tensor A, double s);
"""

ext = load_inline(
    name="matrix_scalar_mul_ext",
    cpp_sources=ext_cpp_source,
    cuda_sources=ext_cuda_source,
    functions=['scalar_mul_cuda'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

scalar_mul = ext.scalar_mul_cuda


class ModelNew(nn.Module):
    def forward(self, A, s):
        return scalar_mul(A, s)
