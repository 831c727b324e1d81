# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cuda expect=accepted policy=both
# style: 64x64 shared-memory tiled SGEMM with fused epilogue, packed_accessor32, #pragma unroll loops without braces
# class: 6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
in_features = 64
out_features = 128
scaling_factor = 0.5

# Variant without cuBLAS: a shared-memory tiled SGEMM (64x64 tile, 4x4 per thread)
# with the bias add, scaling and residual add fused into the epilogue.
source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int TM = 64, TN = 64, TK = 16;
constexpr int THREADS = 256;   // 16 x 16 threads, 4 x 4 outputs each

__global__ void __launch_bounds__(THREADS)
linear_scale_residual_kernel(
        const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> x,    // [B, IN]
        const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> w,    // [OUT, IN]
        const torch::PackedTensorAccessor32<float, 1, torch::RestrictPtrTraits> bias, // [OUT]
        torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> out,        // [B, OUT]
        float scale) {
    __shared__ float xs[TK][TM + 1];
    __shared__ float ws[TK][TN + 1];

    const int B = x.size(0), IN = x.size(1), OUT = w.size(0);
    const int tid = threadIdx.x;
    const int ty = tid / 16, tx = tid % 16;
    const int row0 = blockIdx.y * TM;
    const int col0 = blockIdx.x * TN;

    float acc[4][4];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < IN; k0 += TK) {
        #pragma unroll
        for (int j = 0; j < (TM * TK) / THREADS; ++j) {
            const int e = tid + j * THREADS;
            const int r = e / TK, k = e % TK;
            const int gr = row0 + r, gk = k0 + k;
            xs[k][r] = (gr < B && gk < IN) ? x[gr][gk] : 0.0f;
            const int gc = col0 + r;
            ws[k][r] = (gc < OUT && gk < IN) ? w[gc][gk] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TK; ++k) {
            float a[4], b[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = xs[k][ty * 4 + i];
            #pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = ws[k][tx * 4 + j];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = row0 + ty * 4 + i;
        if (r >= B) continue;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tx * 4 + j;
            if (c < OUT) {
                const float y = acc[i][j] + bias[c];   // linear
                out[r][c] = y * scale + y;              // y * s + y.detach()
            }
        }
    }
}

torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                    double scaling_factor) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    TORCH_CHECK(x.size(1) == weight.size(1), "shape mismatch");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    auto out = torch::empty({xc.size(0), wc.size(0)}, xc.options());
    if (out.numel() == 0) return out;
    dim3 grid((wc.size(0) + TN - 1) / TN, (xc.size(0) + TM - 1) / TM);
    linear_scale_residual_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.packed_accessor32<float, 2, torch::RestrictPtrTraits>(),
        wc.packed_accessor32<float, 2, torch::RestrictPtrTraits>(),
        bc.packed_accessor32<float, 1, torch::RestrictPtrTraits>(),
        out.packed_accessor32<float, 2, torch::RestrictPtrTraits>(),
        static_cast<float>(scaling_factor));
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

cpp_decl = ("torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor weight, "
            "torch::Tensor bias, double scaling_factor);")

ext = load_inline(
    name="tiled_linear_scale_residual",
    cpp_sources=cpp_decl,
    cuda_sources=source,
    functions=["linear_scale_residual"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.fused = ext.linear_scale_residual

    def forward(self, x):
        return self.fused(x, self.matmul.weight, self.matmul.bias, float(self.scaling_factor))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
