# corpus: problem=kb_l2_086_matmul_divide_gelu device=cpu expect=accepted policy=both
# style: torch.chunk of the weight; torch.zeros output filled by out[:, start:start + n] = part with start += n; templated kernel; PYBIND11_MODULE; .to(float32); __main__ self-test
# class: 8
import math
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
input_size = 512
output_size = 1024
divisor = 10.0

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

template <typename T>
inline T gelu_erf(T v) {
    return T(0.5) * v * (T(1) + std::erf(v * T(M_SQRT1_2)));
}

// out = gelu((x @ w^T + b) / divisor)  x: (M, K)  w: (N, K)  b: (N)
template <typename T, int TILE_N>
void linear_div_gelu_impl(const T* x, const T* w, const T* b, T* out,
                          int64_t M, int64_t K, int64_t N, T inv_div) {
    at::parallel_for(0, M, 1, [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m) {
            const T* xr = x + m * K;
            for (int64_t n0 = 0; n0 < N; n0 += TILE_N) {
                const int64_t nend = std::min<int64_t>(N, n0 + TILE_N);
                for (int64_t n = n0; n < nend; ++n) {
                    const T* wr = w + n * K;
                    T acc = T(0);
                    for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
                    out[m * N + n] = gelu_erf<T>((acc + b[n]) * inv_div);
                }
            }
        }
    });
}

torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double divisor) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && bias.dim() == 1, "bad ranks");
    TORCH_CHECK(x.size(1) == weight.size(1) && weight.size(0) == bias.size(0), "bad shapes");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto out = torch::empty({M, N}, xc.options());
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "linear_div_gelu", [&] {
        linear_div_gelu_impl<scalar_t, 64>(xc.data_ptr<scalar_t>(), wc.data_ptr<scalar_t>(),
                                           bc.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
                                           M, K, N, scalar_t(1.0 / divisor));
    });
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("linear_div_gelu", &linear_div_gelu, "fused linear / divisor -> erf GELU");
}
"""

ext = load_inline(
    name="kb_linear_div_gelu_tmpl",
    cpp_sources=cpp_source,
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor, n_chunks=4):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self.n_chunks = n_chunks

    def forward(self, x):
        x = x.to(torch.float32)
        out = torch.zeros(x.shape[0], self.linear.out_features, dtype=x.dtype)
        w_parts = torch.chunk(self.linear.weight, self.n_chunks, dim=0)
        b_parts = torch.chunk(self.linear.bias, self.n_chunks, dim=0)
        start = 0
        for w, b in zip(w_parts, b_parts):
            part = ext.linear_div_gelu(x, w, b, self.divisor)
            out[:, start:start + part.shape[1]] = part
            start += part.shape[1]
        return out


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ModelNew(*get_init_inputs())
    x = get_inputs()[0]
    with torch.no_grad():
        ref = torch.nn.functional.gelu(model.linear(x) / divisor)
        got = model(x)
    err = (ref - got).abs().max().item()
    print(f"max abs err {err:.3e}")
    assert err < 1e-4, err
