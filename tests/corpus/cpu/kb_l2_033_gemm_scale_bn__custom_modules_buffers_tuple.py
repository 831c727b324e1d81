# corpus: problem=kb_l2_033_gemm_scale_bn device=cpu expect=accepted policy=both
# style: lazy _ext loader, several custom nn.Modules, register_buffer running statistics updated in C++, empty_like out-parameter, tuple return, @torch.jit.ignore on a float helper (blind round 11; strict torch-compute static_reject on the decorator before)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1024
in_features = 8192
out_features = 8192
scale_shape = (out_features,)

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <tuple>
#include <cmath>
#include <algorithm>

static inline float dot_unrolled(const float* __restrict__ a, const float* __restrict__ b, int64_t n) {
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f, s4 = 0.f, s5 = 0.f, s6 = 0.f, s7 = 0.f;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        s0 += a[k] * b[k];         s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2]; s3 += a[k + 3] * b[k + 3];
        s4 += a[k + 4] * b[k + 4]; s5 += a[k + 5] * b[k + 5];
        s6 += a[k + 6] * b[k + 6]; s7 += a[k + 7] * b[k + 7];
    }
    float s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    for (; k < n; ++k) s += a[k] * b[k];
    return s;
}

// y[i, j] = (sum_k x[i, k] * w[j, k] + b[j]) * scale[j]
torch::Tensor gemm_scale(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor scale) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "gemm_scale: 2D x and weight expected");
    TORCH_CHECK(x.size(1) == w.size(1), "gemm_scale: in_features mismatch");
    TORCH_CHECK(b.numel() == w.size(0) && scale.numel() == w.size(0), "gemm_scale: bias/scale size");
    TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous() && scale.is_contiguous(),
                "gemm_scale: contiguous tensors expected");
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    const float* sp = scale.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    constexpr int64_t JB = 32, IB = 16;
    const int64_t njb = (N + JB - 1) / JB;
    at::parallel_for(0, njb, 1, [&](int64_t jb0, int64_t jb1) {
        for (int64_t jb = jb0; jb < jb1; ++jb) {
            const int64_t j0 = jb * JB, j1 = std::min(N, j0 + JB);
            for (int64_t i0 = 0; i0 < M; i0 += IB) {
                const int64_t i1 = std::min(M, i0 + IB);
                for (int64_t i = i0; i < i1; ++i) {
                    for (int64_t j = j0; j < j1; ++j) {
                        yp[i * N + j] = (dot_unrolled(xp + i * K, wp + j * K, K) + bp[j]) * sp[j];
                    }
                }
            }
        }
    });
    return y;
}

// BatchNorm1d over dim 0 of a (M, N) tensor, written into `out`.
// training: batch statistics (biased var for normalisation), running stats updated in place
//           with unbiased var; momentum < 0 means cumulative average (momentum=None).
// eval:     running statistics.
// Returns (mean, invstd) that were used.
std::tuple<torch::Tensor, torch::Tensor> batch_norm_1d(
        torch::Tensor y, torch::Tensor out,
        torch::Tensor weight, torch::Tensor bias,
        torch::Tensor running_mean, torch::Tensor running_var,
        torch::Tensor num_batches_tracked,
        bool training, double momentum, double eps) {
    TORCH_CHECK(y.dim() == 2 && y.is_contiguous() && out.is_contiguous(), "batch_norm_1d: contiguous 2D input");
    TORCH_CHECK(out.sizes() == y.sizes(), "batch_norm_1d: out shape mismatch");
    const int64_t M = y.size(0), N = y.size(1);
    TORCH_CHECK(!training || M > 1, "Expected more than 1 value per channel when training");
    auto mean = torch::empty({N}, y.options());
    auto invstd = torch::empty({N}, y.options());
    const float* yp = y.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float* gp = weight.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* rm = running_mean.data_ptr<float>();
    float* rv = running_var.data_ptr<float>();
    float* mp = mean.data_ptr<float>();
    float* ip = invstd.data_ptr<float>();

    double factor = momentum;
    if (training) {
        int64_t* nbt = num_batches_tracked.data_ptr<int64_t>();
        nbt[0] += 1;
        if (momentum < 0.0) factor = 1.0 / static_cast<double>(nbt[0]);
    }

    at::parallel_for(0, N, 16, [&](int64_t c0, int64_t c1) {
        if (training) {
            for (int64_t c = c0; c < c1; ++c) {
                double s = 0.0;
                for (int64_t i = 0; i < M; ++i) s += yp[i * N + c];
                const double mu = s / M;
                double ss = 0.0;
                for (int64_t i = 0; i < M; ++i) { const double d = yp[i * N + c] - mu; ss += d * d; }
                const double var = ss / M;
                mp[c] = static_cast<float>(mu);
                ip[c] = static_cast<float>(1.0 / std::sqrt(var + eps));
                rm[c] = static_cast<float>((1.0 - factor) * rm[c] + factor * mu);
                rv[c] = static_cast<float>((1.0 - factor) * rv[c] + factor * ss / (M - 1));
            }
        } else {
            for (int64_t c = c0; c < c1; ++c) {
                mp[c] = rm[c];
                ip[c] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(rv[c]) + eps));
            }
        }
        for (int64_t i = 0; i < M; ++i) {
            const float* yr = yp + i * N;
            float* orow = op + i * N;
            for (int64_t c = c0; c < c1; ++c) {
                orow[c] = (yr[c] - mp[c]) * ip[c] * gp[c] + bp[c];
            }
        }
    });
    return std::make_tuple(mean, invstd);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("gemm_scale", &gemm_scale, "linear followed by per-feature scale");
    m.def("batch_norm_1d", &batch_norm_1d, "batch norm 1d (train/eval) into out");
}
"""

_ext = None


def _load():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_gemm_scale_bn_ext",
            cpp_sources=_SOURCE,
            extra_cflags=["-O3"],
            verbose=False,
        )
    return _ext


class GemmScale(nn.Module):
    """Stateless: runs (x @ W^T + b) * scale in C++ with the parameters it is given."""

    def forward(self, x, weight, bias, scale):
        return _load().gemm_scale(x.contiguous(), weight.contiguous(),
                                  bias.contiguous(), scale.contiguous())


class CustomBatchNorm1d(nn.Module):
    """BatchNorm1d with the same parameter / buffer names as nn.BatchNorm1d."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    @torch.jit.ignore
    def _momentum_arg(self) -> float:
        return -1.0 if self.momentum is None else float(self.momentum)

    def forward(self, y):
        B, F = y.shape
        assert F == self.num_features
        out = torch.empty_like(y)
        mean, invstd = _load().batch_norm_1d(
            y, out, self.weight.contiguous(), self.bias.contiguous(),
            self.running_mean, self.running_var, self.num_batches_tracked,
            bool(self.training), self._momentum_arg(), float(self.eps))
        return out


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bn = CustomBatchNorm1d(out_features, eps=eps, momentum=momentum)
        self.gemm_scale = GemmScale()
        _load()

    def forward(self, x):
        x = self.gemm_scale(x, self.gemm.weight, self.gemm.bias, self.scale)
        x = self.bn(x)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    m = ModelNew(64, 48, (48,))
    torch.manual_seed(0)
    g = nn.Linear(64, 48)
    sc = nn.Parameter(torch.randn(48))
    bn = nn.BatchNorm1d(48)
    for it in range(3):
        x = torch.rand(20, 64)
        with torch.no_grad():
            r = bn(g(x) * sc)
            o = m(x)
        print("train", (r - o).abs().max().item(),
              (bn.running_mean - m.bn.running_mean).abs().max().item(),
              (bn.running_var - m.bn.running_var).abs().max().item())
    bn.eval(); m.eval()
    x = torch.rand(20, 64)
    with torch.no_grad():
        print("eval", (bn(g(x) * sc) - m(x)).abs().max().item())
