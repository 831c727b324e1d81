# corpus: problem=kb_l3_001_mlp device=cuda expect=accepted policy=both
# style: the candidate's own modules in an nn.ModuleList (names aligned with the reference), each calling the kernel; batch 1, odd sizes
# class: 2,6
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

lin_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cmath>

#define TILE 32

// mode: 0 identity, 1 relu, 2 leaky_relu(y * a, slope b), 3 relu((y - a) * b), 4 mish(mish(y)),
// 5 y * a + y (scale plus residual), 6 gelu(y / a) (erf form)
__device__ __forceinline__ float mish(float v) {
    const float sp = v > 20.0f ? v : log1pf(expf(v));
    return v * tanhf(sp);
}

__device__ __forceinline__ float epilogue(float y, int mode, float a, float b) {
    switch (mode) {
        case 1: return fmaxf(y, 0.0f);
        case 2: { const float t = y * a; return t > 0.0f ? t : t * b; }
        case 3: return fmaxf((y - a) * b, 0.0f);
        case 4: return mish(mish(y));
        case 5: return y * a + y;
        case 6: { const float t = y / a; return 0.5f * t * (1.0f + erff(t * 0.70710678118654752f)); }
        default: return y;
    }
}

// y = x @ W^T + bias, then the epilogue; x (M, K), W (N, K) as nn.Linear stores it.
__global__ void linear_tiled_kernel(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ bias,
                                    float* __restrict__ y, int M, int N, int K, int mode, float a, float b) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int wrow = blockIdx.x * TILE + ty;  // the W row this thread stages (transposed into ws)
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        xs[ty][tx] = (row < M && k0 + tx < K) ? x[(int64_t)row * K + k0 + tx] : 0.0f;
        ws[tx][ty] = (wrow < N && k0 + tx < K) ? W[(int64_t)wrow * K + k0 + tx] : 0.0f;
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) acc += xs[ty][k] * ws[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        if (bias != nullptr) acc += bias[col];
        y[(int64_t)row * N + col] = epilogue(acc, mode, a, b);
    }
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t mode, double a, double b) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "x and weight must be CUDA tensors");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "x (M, K), weight (N, K)");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    const float* bptr = nullptr;
    torch::Tensor bc;
    if (bias.defined() && bias.numel() > 0) {
        TORCH_CHECK(bias.numel() == N, "bias must have out_features elements");
        bc = bias.contiguous();
        bptr = bc.data_ptr<float>();
    }
    auto y = torch::empty({M, N}, xc.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_tiled_kernel<<<grid, block>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), bptr, y.data_ptr<float>(),
                                         M, N, K, (int)mode, (float)a, (float)b);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "linear_tiled_kernel failed: ", cudaGetErrorString(err));
    return y;
}
"""

lin_cpp_source = """
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t mode, double a, double b);
"""

lin = load_inline(
    name="linear_epilogue_ext",
    cpp_sources=lin_cpp_source,
    cuda_sources=lin_cuda_source,
    functions=['linear_forward'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class CustomLinear(nn.Module):
    """nn.Linear's parameters (same names, same init), the product and the optional ReLU in one tiled CUDA kernel."""

    def __init__(self, in_features: int, out_features: int, relu: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1.0 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)
        self.mode = 1 if relu else 0

    def forward(self, x):
        return lin.linear_forward(x, self.weight, self.bias, self.mode, 0.0, 0.0)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        sizes = [input_size] + list(layer_sizes) + [output_size]
        blocks = []
        for i in range(len(sizes) - 1):
            last = i == len(sizes) - 2
            blocks.append(CustomLinear(sizes[i], sizes[i + 1], relu=not last))
            if not last:
                blocks.append(nn.Identity())  # the ReLU is fused; keeps the reference's parameter names (network.2...)
        self.network = nn.ModuleList(blocks)

    def forward(self, x):
        for layer in self.network:
            x = layer(x)
        return x
