# corpus: problem=kb_l3_003_deep_narrow_mlp device=cuda expect=accepted policy=both
# style: FusedLinear helper modules in nn.ModuleList built in the reference's order; kernel templated on <BM,BN,BK,bool RELU>; std::vector<torch::Tensor> whole-MLP entry point
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gemm_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <vector>

// y[M,N] = act(x[M,K] @ w[N,K]^T + b[N])
// Each block: BM x BN outputs; 256 threads laid out 16x16, every thread owns a (BM/16) x (BN/16)
// micro-tile whose rows/cols are strided by 16 so global stores stay coalesced.
template <int BM, int BN, int BK, bool RELU>
__global__ void __launch_bounds__(256)
linear_act_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                  float* __restrict__ y, int M, int N, int K) {
    constexpr int RM = BM / 16, RN = BN / 16;
    __shared__ float xs[BK][BM + 1];
    __shared__ float ws[BK][BN + 1];

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float acc[RM][RN] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = threadIdx.x; l < BM * BK; l += 256) {
            const int r = l / BK, c = l % BK;
            xs[c][r] = (m0 + r < M && k0 + c < K) ? __ldg(x + (size_t)(m0 + r) * K + k0 + c) : 0.f;
        }
#pragma unroll
        for (int l = threadIdx.x; l < BN * BK; l += 256) {
            const int r = l / BK, c = l % BK;
            ws[c][r] = (n0 + r < N && k0 + c < K) ? __ldg(w + (size_t)(n0 + r) * K + k0 + c) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[RM], bb[RN];
#pragma unroll
            for (int i = 0; i < RM; ++i) a[i] = xs[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < RN; ++j) bb[j] = ws[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < RM; ++i)
#pragma unroll
                for (int j = 0; j < RN; ++j) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < RM; ++i) {
        const int m = m0 + ty + 16 * i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < RN; ++j) {
            const int n = n0 + tx + 16 * j;
            if (n >= N) continue;
            float v = acc[i][j] + b[n];
            if (RELU) v = fmaxf(v, 0.f);
            y[(size_t)m * N + n] = v;
        }
    }
}

torch::Tensor linear_act(torch::Tensor x, torch::Tensor w, torch::Tensor b, bool relu) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && b.is_cuda(), "CUDA tensors required");
    TORCH_CHECK(x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
                "float32 required");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
    c10::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    if (M == 0 || N == 0) return y;

    constexpr int BM = 64, BN = 64, BK = 16;
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    const dim3 block(256);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (relu)
        linear_act_kernel<BM, BN, BK, true><<<grid, block, 0, stream>>>(
            xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    else
        linear_act_kernel<BM, BN, BK, false><<<grid, block, 0, stream>>>(
            xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

// Whole network in one call: ReLU after every layer except the last.
torch::Tensor mlp_forward(torch::Tensor x, std::vector<torch::Tensor> weights, std::vector<torch::Tensor> biases) {
    TORCH_CHECK(weights.size() == biases.size() && !weights.empty(), "weights/biases mismatch");
    for (size_t i = 0; i < weights.size(); ++i)
        x = linear_act(x, weights[i], biases[i], i + 1 < weights.size());
    return x;
}
"""

gemm_cpp = r"""
torch::Tensor linear_act(torch::Tensor x, torch::Tensor w, torch::Tensor b, bool relu);
torch::Tensor mlp_forward(torch::Tensor x, std::vector<torch::Tensor> weights, std::vector<torch::Tensor> biases);
"""

mlp_ext = load_inline(
    name="deep_narrow_mlp_ext",
    cpp_sources=gemm_cpp,
    cuda_sources=gemm_source,
    functions=["linear_act", "mlp_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class FusedLinear(nn.Module):
    """nn.Linear parameters + optional ReLU, evaluated by the custom kernel."""

    def __init__(self, in_features: int, out_features: int, relu: bool):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp_ext.linear_act(x, self.linear.weight, self.linear.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_layer_sizes: list, output_size: int):
        super().__init__()
        # Layers are created in the same order as the reference nn.Sequential, so a given seed yields
        # identical weights.
        layers = []
        width = input_size
        for hidden in hidden_layer_sizes:
            layers.append(FusedLinear(width, hidden, relu=True))
            width = hidden
        layers.append(FusedLinear(width, output_size, relu=False))
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x
