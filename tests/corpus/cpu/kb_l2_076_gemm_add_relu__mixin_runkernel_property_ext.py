# corpus: problem=kb_l2_076_gemm_add_relu device=cpu expect=accepted policy=both
# style: a mixin with an ext @property and _run_kernel(self, name, *args) doing getattr(self.ext, name)(*args), used by two subclasses; lazy loader, OpenMP GEMM, in-place bias+ReLU (blind round 12; no-kernel-launched static reject before getattr results were left to run time)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Gemm (no bias) -> + bias -> ReLU on CPU.
#   gemm_nt    : y = x @ W^T             (blocked C++ GEMM, OpenMP)
#   bias_relu_ : y = max(y + b, 0) in place
# Both are custom kernels; modules reach them through a small mixin.

cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>

static inline float dot8(const float* __restrict__ a, const float* __restrict__ b, int64_t K) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        #pragma GCC unroll 8
        for (int u = 0; u < 8; ++u) acc[u] += a[k + u] * b[k + u];
    }
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; k < K; ++k) s += a[k] * b[k];
    return s;
}

torch::Tensor gemm_nt(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.device().is_cpu() && w.device().is_cpu(), "gemm_nt: CPU only");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && w.scalar_type() == torch::kFloat32, "gemm_nt: float32 only");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "gemm_nt: shape mismatch");
    x = x.contiguous();
    w = w.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    const float* X = x.data_ptr<float>();
    const float* W = w.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    constexpr int64_t MB = 16, NB = 32;
    const int64_t mblocks = (M + MB - 1) / MB, nblocks = (N + NB - 1) / NB;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t mb = 0; mb < mblocks; ++mb) {
        for (int64_t nb = 0; nb < nblocks; ++nb) {
            const int64_t i1 = std::min(M, (mb + 1) * MB), j1 = std::min(N, (nb + 1) * NB);
            for (int64_t i = mb * MB; i < i1; ++i) {
                const float* xi = X + i * K;
                for (int64_t j = nb * NB; j < j1; ++j) Y[i * N + j] = dot8(xi, W + j * K, K);
            }
        }
    }
    return y;
}

torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor b) {
    TORCH_CHECK(y.is_contiguous() && y.dim() == 2, "bias_relu_: contiguous 2-D y expected");
    TORCH_CHECK(y.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "bias_relu_: float32 only");
    TORCH_CHECK(b.numel() == y.size(1), "bias_relu_: bias must have out_features elements");
    b = b.contiguous();
    const int64_t M = y.size(0), N = y.size(1);
    float* Y = y.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
        float* row = Y + i * N;
        for (int64_t j = 0; j < N; ++j) {
            const float v = row[j] + B[j];
            row[j] = v < 0.f ? 0.f : v;   // keeps NaN like torch.relu
        }
    }
    return y;
}
"""

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_gemm_add_relu_mixin",
            cpp_sources=cpp_source,
            functions=["gemm_nt", "bias_relu_"],
            extra_cflags=["-O3", "-march=native", "-fopenmp"],
            extra_ldflags=["-fopenmp"],
            verbose=False,
        )
    return _ext


class _KernelMixin:
    """Gives a module access to the compiled extension."""

    @property
    def ext(self):
        return _get_ext()

    def _run_kernel(self, name, *args):
        return getattr(self.ext, name)(*args)


class GemmNT(_KernelMixin, nn.Linear):
    """nn.Linear(bias=False) whose forward runs the custom GEMM."""

    def forward(self, x):
        return self._run_kernel("gemm_nt", x, self.weight)


class BiasReLU(_KernelMixin, nn.Module):
    def forward(self, y, bias):
        return self._run_kernel("bias_relu_", y, bias)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = GemmNT(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.epilogue = BiasReLU()

    def forward(self, x):
        y = self.gemm(x)
        return self.epilogue(y, self.bias)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
