# corpus: problem=kb_l2_086_matmul_divide_gelu device=cpu expect=accepted policy=both
# style: a closure built in __init__, a default argument bound at def time, **kwargs forwarding, with torch.no_grad() in forward (blind round 12)
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Linear -> divide by scalar -> exact (erf) GELU, fused in one C++ CPU kernel.

_cpp = r"""
#include <torch/extension.h>
#include <omp.h>
#include <algorithm>
#include <cmath>

torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b,
                              double divisor, int64_t num_threads) {
    TORCH_CHECK(x.device().is_cpu(), "linear_div_gelu: CPU tensors only");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "linear_div_gelu: float32 only");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "linear_div_gelu: bad shapes");
    TORCH_CHECK(b.numel() == w.size(0), "linear_div_gelu: bias size mismatch");
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    auto xa = x.accessor<float, 2>();
    auto wa = w.accessor<float, 2>();
    auto ba = b.accessor<float, 1>();
    auto ya = y.accessor<float, 2>();
    const float inv_sqrt2 = 0.70710678118654752440f;
    constexpr int64_t NB = 32;
    const int64_t nblocks = (N + NB - 1) / NB;
    const int nt = num_threads > 0 ? (int)num_threads : omp_get_max_threads();
    #pragma omp parallel for collapse(2) schedule(static) num_threads(nt)
    for (int64_t i = 0; i < M; ++i) {
        for (int64_t jb = 0; jb < nblocks; ++jb) {
            const float* xi = &xa[i][0];
            const int64_t j1 = std::min(N, (jb + 1) * NB);
            for (int64_t j = jb * NB; j < j1; ++j) {
                const float* wj = &wa[j][0];
                float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
                int64_t k = 0;
                for (; k + 8 <= K; k += 8) {
                    #pragma GCC unroll 8
                    for (int u = 0; u < 8; ++u) acc[u] += xi[k + u] * wj[k + u];
                }
                float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
                for (; k < K; ++k) s += xi[k] * wj[k];
                const float v = (s + ba[j]) / (float)divisor;
                ya[i][j] = 0.5f * v * (1.0f + std::erf(v * inv_sqrt2));
            }
        }
    }
    return y;
}
"""

_ext = load_inline(
    name="kb_linear_div_gelu_closure",
    cpp_sources=_cpp,
    functions=["linear_div_gelu"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


def linear_div_gelu(x, weight, bias, divisor, num_threads=0, _k=_ext.linear_div_gelu):
    return _k(x, weight, bias, float(divisor), int(num_threads))


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self._fwd = self._make_forward()

    def _make_forward(self):
        linear = self.linear
        divisor = self.divisor

        def fwd(x, **kwargs):
            return linear_div_gelu(x, linear.weight, linear.bias, divisor, **kwargs)

        return fwd

    def forward(self, x, **kwargs):
        with torch.no_grad():
            out = self._fwd(x, **kwargs)
        return out


batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]
