# corpus: problem=kb_l1_004_matrix_vector_mult device=cuda expect=accepted policy=both
# style: float4 + __ldg, cub::BlockReduce, CUDAGuard + getCurrentCUDAStream, template<bool VEC> alignment dispatch, __launch_bounds__, self.matvec = ext.fn alias
# class: 1
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

M = 256 * 8
K = 131072 * 8

# One block per output row. Each thread streams the row with 128-bit read-only
# loads (float4 + __ldg), accumulates in registers, and the block is reduced
# with cub::BlockReduce.
matvec_cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cub/block/block_reduce.cuh>

#define THREADS 512

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
matvec_kernel(const float* __restrict__ A,
              const float* __restrict__ x,
              float* __restrict__ y,
              int64_t K) {
    typedef cub::BlockReduce<float, THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;

    const int64_t row = blockIdx.x;
    const float* a = A + row * K;
    float acc = 0.0f;

    if (VEC) {
        const float4* a4 = reinterpret_cast<const float4*>(a);
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const int64_t K4 = K >> 2;
        #pragma unroll 4
        for (int64_t i = threadIdx.x; i < K4; i += THREADS) {
            float4 av = __ldg(a4 + i);
            float4 xv = __ldg(x4 + i);
            acc = fmaf(av.x, xv.x, acc);
            acc = fmaf(av.y, xv.y, acc);
            acc = fmaf(av.z, xv.z, acc);
            acc = fmaf(av.w, xv.w, acc);
        }
        // tail (K not a multiple of 4)
        for (int64_t i = (K4 << 2) + threadIdx.x; i < K; i += THREADS) {
            acc = fmaf(__ldg(a + i), __ldg(x + i), acc);
        }
    } else {
        for (int64_t i = threadIdx.x; i < K; i += THREADS) {
            acc = fmaf(__ldg(a + i), __ldg(x + i), acc);
        }
    }

    float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0) y[row] = total;
}

torch::Tensor matvec_forward(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "only float32 is supported");
    TORCH_CHECK(A.dim() == 2, "A must be 2-D");
    TORCH_CHECK(B.numel() == A.size(1), "B must have K elements");

    const c10::cuda::CUDAGuard device_guard(A.device());
    auto Ac = A.contiguous();
    auto Bc = B.contiguous();

    const int64_t rows = Ac.size(0);
    const int64_t K = Ac.size(1);
    auto out = torch::empty({rows, 1}, Ac.options());
    if (rows == 0) return out;

    cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const bool aligned =
        (K % 4 == 0) &&
        (reinterpret_cast<uintptr_t>(Ac.data_ptr<float>()) % 16 == 0) &&
        (reinterpret_cast<uintptr_t>(Bc.data_ptr<float>()) % 16 == 0);

    dim3 grid(rows);
    if (aligned) {
        matvec_kernel<true><<<grid, THREADS, 0, stream>>>(
            Ac.data_ptr<float>(), Bc.data_ptr<float>(), out.data_ptr<float>(), K);
    } else {
        matvec_kernel<false><<<grid, THREADS, 0, stream>>>(
            Ac.data_ptr<float>(), Bc.data_ptr<float>(), out.data_ptr<float>(), K);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

matvec_cpp_src = "torch::Tensor matvec_forward(torch::Tensor A, torch::Tensor B);"

matvec_ext = load_inline(
    name="matvec_float4_cub",
    cpp_sources=matvec_cpp_src,
    cuda_sources=matvec_cuda_src,
    functions=["matvec_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    """A (M, K) @ B (K, 1) with a custom row-per-block CUDA kernel."""

    def __init__(self):
        super().__init__()
        self.matvec = matvec_ext.matvec_forward

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.matvec(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
