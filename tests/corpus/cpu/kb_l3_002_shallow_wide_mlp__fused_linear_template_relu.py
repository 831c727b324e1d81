# corpus: problem=kb_l3_002_shallow_wide_mlp device=cpu expect=accepted policy=both
# style: nn.ModuleList of FusedLinear submodules copying nn.Linear weights built in the reference's order, template<bool APPLY_RELU>, c10::optional bias, at::parallel_for + omp simd
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1
input_size = 1000
hidden_layer_sizes = [2000, 2000]
output_size = 10

mlp_cpp = r"""
#include <torch/extension.h>
#include <c10/util/Optional.h>
#include <ATen/Parallel.h>

template <bool APPLY_RELU>
static void linear_rows(const float* __restrict__ x, const float* __restrict__ w,
                        const float* __restrict__ b, float* __restrict__ y,
                        int64_t N, int64_t K, int64_t O) {
    // parallel over output features: batch is tiny for this network
    at::parallel_for(0, O, 16, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
            const float* wr = w + o * K;
            for (int64_t n = 0; n < N; ++n) {
                const float* xr = x + n * K;
                float acc = 0.0f;
                #pragma omp simd reduction(+:acc)
                for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
                if (b) acc += b[o];
                if (APPLY_RELU) acc = acc > 0.0f ? acc : 0.0f;
                y[n * O + o] = acc;
            }
        }
    });
}

torch::Tensor fused_linear(torch::Tensor x, torch::Tensor weight,
                           c10::optional<torch::Tensor> bias, bool relu) {
    TORCH_CHECK(x.dim() == 2, "fused_linear: x must be 2-D");
    TORCH_CHECK(weight.dim() == 2 && weight.size(1) == x.size(1), "fused_linear: shape mismatch");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "fused_linear: float32 only");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t N = xc.size(0), K = xc.size(1), O = wc.size(0);
    auto y = torch::empty({N, O}, xc.options());
    torch::Tensor bc;
    const float* pb = nullptr;
    if (bias.has_value()) {
        bc = bias.value().contiguous();
        pb = bc.data_ptr<float>();
    }
    if (relu)
        linear_rows<true>(xc.data_ptr<float>(), wc.data_ptr<float>(), pb, y.data_ptr<float>(), N, K, O);
    else
        linear_rows<false>(xc.data_ptr<float>(), wc.data_ptr<float>(), pb, y.data_ptr<float>(), N, K, O);
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_l3_002_fused_mlp",
    cpp_sources=mlp_cpp,
    functions=["fused_linear"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class FusedLinear(nn.Module):
    """Linear (+ optional ReLU) backed by the C++ kernel; parameters taken from an nn.Linear."""

    def __init__(self, linear: nn.Linear, relu: bool):
        super().__init__()
        self.weight = nn.Parameter(linear.weight.detach().clone())
        self.bias = nn.Parameter(linear.bias.detach().clone()) if linear.bias is not None else None
        self.relu = relu

    def forward(self, x):
        return mlp_ext.fused_linear(x, self.weight, self.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        # build the nn.Linear layers in the same order as the reference so the same seed gives the same weights
        refs = []
        current = input_size
        for hidden in hidden_layer_sizes:
            refs.append((nn.Linear(current, hidden), True))
            current = hidden
        refs.append((nn.Linear(current, output_size), False))
        self.layers = nn.ModuleList([FusedLinear(lin, relu) for lin, relu in refs])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
