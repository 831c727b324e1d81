# corpus: problem=kb_l2_029_matmul_mish_mish device=cpu expect=accepted policy=both
# style: torch.autograd.Function wrapper; c10::optional bias; fused GEMM + mish + mish with #pragma omp (blind round 8)
# class: 1, 2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

batch_size = 1024
in_features = 8192
out_features = 8192

cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>

// Packed, register-blocked SGEMM  y = x @ W^T (+ b), with mish(mish(.)) fused into the
// store of the last K-panel.  GCC vector extensions give a 6x32 micro-tile of accumulators.
typedef float v16f __attribute__((vector_size(64)));
constexpr int MR = 6, NR = 32, KC = 256, MC = 96, NC = 256;

static inline void micro_kernel(int kc, const float* __restrict Ap, const float* __restrict Bp,
                                float* __restrict Ct) {
    v16f c[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) { c[r][0] = (v16f){}; c[r][1] = (v16f){}; }
    for (int k = 0; k < kc; ++k) {
        v16f b0, b1;
        std::memcpy(&b0, Bp + k * NR, sizeof(v16f));
        std::memcpy(&b1, Bp + k * NR + 16, sizeof(v16f));
#pragma GCC unroll 6
        for (int r = 0; r < MR; ++r) {
            const float a = Ap[k * MR + r];
            c[r][0] += a * b0;
            c[r][1] += a * b1;
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
        std::memcpy(Ct + r * NR, &c[r][0], sizeof(v16f));
        std::memcpy(Ct + r * NR + 16, &c[r][1], sizeof(v16f));
    }
}

static inline float mish(float v) {
    return v * std::tanh(std::log1p(std::exp(v)));
}

torch::Tensor linear_mish_mish(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias) {
    TORCH_CHECK(x.dim() == 2, "x must be 2-D");
    TORCH_CHECK(weight.dim() == 2 && weight.size(1) == x.size(1), "weight shape mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 only");
    x = x.contiguous();
    weight = weight.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
    const float* pbias = nullptr;
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) {
        b = bias->contiguous();
        TORCH_CHECK(b.numel() == N, "bias size mismatch");
        pbias = b.data_ptr<float>();
    }
    auto out = torch::empty({M, N}, x.options());
    const float* pa = x.data_ptr<float>();
    const float* pw = weight.data_ptr<float>();
    float* pc = out.data_ptr<float>();

    const int64_t mt = (M + MC - 1) / MC, nt = (N + NC - 1) / NC;
#pragma omp parallel
    {
        float* Ap = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * MC * KC));
        float* Bp = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * NC * KC));
        alignas(64) float Ct[MR * NR];
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < mt * nt; ++t) {
            const int64_t i0 = (t % mt) * MC, j0 = (t / mt) * NC;
            const int64_t mc = std::min<int64_t>(MC, M - i0), nc = std::min<int64_t>(NC, N - j0);
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                const int kc = (int)std::min<int64_t>(KC, K - k0);
                const bool last = (k0 + KC >= K);
                // pack W panel: [nc/NR][kc][NR], zero padded
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int jj = 0; jj < NR; ++jj) {
                        float* dst = Bp + jp * kc + jj;
                        if (jp + jj < nc) {
                            const float* src = pw + (j0 + jp + jj) * K + k0;
                            for (int kk = 0; kk < kc; ++kk) dst[kk * NR] = src[kk];
                        } else {
                            for (int kk = 0; kk < kc; ++kk) dst[kk * NR] = 0.f;
                        }
                    }
                // pack x panel: [mc/MR][kc][MR], zero padded
                for (int64_t ip = 0; ip < mc; ip += MR)
                    for (int r = 0; r < MR; ++r) {
                        float* dst = Ap + ip * kc + r;
                        if (ip + r < mc) {
                            const float* src = pa + (i0 + ip + r) * K + k0;
                            for (int kk = 0; kk < kc; ++kk) dst[kk * MR] = src[kk];
                        } else {
                            for (int kk = 0; kk < kc; ++kk) dst[kk * MR] = 0.f;
                        }
                    }
                for (int64_t jp = 0; jp < nc; jp += NR)
                    for (int64_t ip = 0; ip < mc; ip += MR) {
                        micro_kernel(kc, Ap + ip * kc, Bp + jp * kc, Ct);
                        const int rows = (int)std::min<int64_t>(MR, mc - ip);
                        const int cols = (int)std::min<int64_t>(NR, nc - jp);
                        for (int r = 0; r < rows; ++r) {
                            float* crow = pc + (i0 + ip + r) * N + j0 + jp;
                            const float* trow = Ct + r * NR;
                            if (k0 == 0 && !last) {
                                for (int j = 0; j < cols; ++j) crow[j] = trow[j];
                            } else if (!last) {
                                for (int j = 0; j < cols; ++j) crow[j] += trow[j];
                            } else {
                                for (int j = 0; j < cols; ++j) {
                                    float v = trow[j] + (k0 == 0 ? 0.f : crow[j]);
                                    if (pbias) v += pbias[j0 + jp + j];
                                    crow[j] = mish(mish(v));
                                }
                            }
                        }
                    }
            }
        }
        std::free(Ap);
        std::free(Bp);
    }
    return out;
}
"""

_ext = load_inline(
    name="kb_linear_mish_mish_omp",
    cpp_sources=cpp_source,
    functions=["linear_mish_mish"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
)


class LinearMishMishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return _ext.linear_mish_mish(x, weight, bias)

    @staticmethod
    def backward(ctx, grad_out):
        # backward is not the benchmarked path; recompute with autograd for correctness
        x, weight, bias = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_(ctx.needs_input_grad[0])
            wd = weight.detach().requires_grad_(ctx.needs_input_grad[1])
            bd = bias.detach().requires_grad_(ctx.needs_input_grad[2]) if bias is not None else None
            y = F.mish(F.mish(F.linear(xd, wd, bd)))
            inputs = [t for t in (xd, wd, bd) if t is not None and t.requires_grad]
            grads = iter(torch.autograd.grad(y, inputs, grad_out)) if inputs else iter(())
        gx = next(grads) if xd.requires_grad else None
        gw = next(grads) if wd.requires_grad else None
        gb = next(grads) if bd is not None and bd.requires_grad else None
        return gx, gw, gb


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return LinearMishMishFn.apply(x, self.linear.weight, self.linear.bias)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
