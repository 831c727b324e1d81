# corpus: problem=kb_l2_070_gemm_sigmoid_residual device=cpu expect=accepted policy=both
# style: TORCH_LIBRARY op (Tensor? bias, float scale) built with is_python_module=False from a cpp_sources list, called through torch.ops in a wrapper nn.Module submodule; std::thread pool over weight-row blocks with -lpthread; unrolled dot product (blind round 13)
# class: 2, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused Linear -> sigmoid -> scale -> residual add, registered as a TorchScript-style
# custom op (TORCH_LIBRARY) and called through torch.ops.kb70.*
_SRC = r"""
#include <torch/extension.h>
#include <torch/library.h>
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace kb70 {

static inline float dot8(const float* __restrict__ a, const float* __restrict__ b, int64_t K) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        for (int u = 0; u < 8; ++u) acc[u] += a[k + u] * b[k + u];
    }
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; k < K; ++k) s += a[k] * b[k];
    return s;
}

// out[m, n] = z + scale * sigmoid(z),  z = x[m, :] . w[n, :] + bias[n]
static void worker(const float* x, const float* w, const float* bias, float* out,
                   int64_t M, int64_t N, int64_t K, double scale,
                   int64_t n_begin, int64_t n_end) {
    constexpr int64_t NB = 16;   // block of weight rows kept hot in cache
    const float s = static_cast<float>(scale);
    for (int64_t n0 = n_begin; n0 < n_end; n0 += NB) {
        const int64_t n1 = std::min(n0 + NB, n_end);
        for (int64_t m = 0; m < M; ++m) {
            const float* xr = x + m * K;
            float* orow = out + m * N;
            for (int64_t n = n0; n < n1; ++n) {
                float z = dot8(xr, w + n * K, K);
                if (bias) z += bias[n];
                const float sig = 1.0f / (1.0f + std::exp(-z));
                orow[n] = z + s * sig;
            }
        }
    }
}

torch::Tensor gemm_sigmoid_residual(const torch::Tensor& x,
                                    const torch::Tensor& weight,
                                    const c10::optional<torch::Tensor>& bias,
                                    double scaling_factor) {
    TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu(), "CPU tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "float32 expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1),
                "shape mismatch: x ", x.sizes(), " weight ", weight.sizes());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    torch::Tensor bc;
    const float* bptr = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == wc.size(0), "bias size mismatch");
        bptr = bc.data_ptr<float>();
    }

    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto out = torch::empty({M, N}, xc.options());

    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* op = out.data_ptr<float>();

    int64_t nthreads = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    nthreads = std::min<int64_t>(nthreads, std::max<int64_t>(1, N / 16));
    const int64_t chunk = (N + nthreads - 1) / nthreads;

    std::vector<std::thread> pool;
    pool.reserve(nthreads);
    for (int64_t t = 0; t < nthreads; ++t) {
        const int64_t nb = t * chunk;
        const int64_t ne = std::min(N, nb + chunk);
        if (nb >= ne) break;
        pool.emplace_back(worker, xp, wp, bptr, op, M, N, K, scaling_factor, nb, ne);
    }
    for (auto& th : pool) th.join();
    return out;
}

}  // namespace kb70

TORCH_LIBRARY(kb70, m) {
    m.def("gemm_sigmoid_residual(Tensor x, Tensor weight, Tensor? bias, float scaling_factor) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb70, CPU, m) {
    m.impl("gemm_sigmoid_residual", &kb70::gemm_sigmoid_residual);
}
"""

load_inline(
    name="kb_l2_070_gemm_sigmoid_residual__torchlibrary_stdthread_optional_submodule",
    cpp_sources=[_SRC],
    extra_cflags=["-O3", "-march=native", "-std=c++17"],
    extra_ldflags=["-lpthread"],
    is_python_module=False,
    verbose=False,
)


class FusedSigmoidResidualLinear(nn.Module):
    """Kernel wrapper: applies the fused op given an nn.Linear's parameters."""

    def __init__(self, scaling_factor: float):
        super().__init__()
        self.scaling_factor = float(scaling_factor)

    def forward(self, x, weight, bias=None):
        return torch.ops.kb70.gemm_sigmoid_residual(x, weight, bias, self.scaling_factor)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor
        self.fused = FusedSigmoidResidualLinear(scaling_factor)

    def forward(self, x):
        return self.fused(x, self.gemm.weight, self.gemm.bias)


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 2.0


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
