# corpus: problem=kb_l3_001_mlp device=cpu expect=accepted policy=both
# style: nn.Sequential of custom modules, source concatenated from strings, c10::optional bias
# class: 2, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The extension source is assembled from a few pieces.
_header = r"""
#include <torch/extension.h>
#include <algorithm>
"""

_linear_kernel = r"""
// y = x @ weight^T (+ bias).  x: (B, K), weight: (O, K), bias: (O) or None.
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias) {
    TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu(), "linear_forward: CPU tensors only");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "linear_forward: float32 only");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "linear_forward: 2-D x and weight expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "linear_forward: in_features mismatch");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t B = xc.size(0), K = xc.size(1), O = wc.size(0);

    torch::Tensor bc;
    const float* bp = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == O, "linear_forward: bias size mismatch");
        bp = bc.data_ptr<float>();
    }

    auto y = torch::empty({B, O}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t o = 0; o < O; ++o) {
            const float* xr = xp + b * K;
            const float* wr = wp + o * K;
            float acc = 0.0f;
            #pragma omp simd reduction(+:acc)
            for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
            yp[b * O + o] = acc + (bp ? bp[o] : 0.0f);
        }
    }
    return y;
}
"""

_relu_kernel = r"""
torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu_forward: float32 CPU only");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = xc.numel();
    #pragma omp parallel for simd if (n > 65536)
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] < 0.0f ? 0.0f : in[i];
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_l3_001_mlp__sequential_custom_modules",
    cpp_sources=_header + _linear_kernel + _relu_kernel,
    functions=["linear_forward", "relu_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class CustomLinear(nn.Linear):
    """nn.Linear parameters and init; forward through the C++ kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        y = mlp_ext.linear_forward(x.reshape(-1, x.shape[-1]), self.weight, self.bias)
        return y.view(*lead, self.out_features)


class CustomReLU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp_ext.relu_forward(x)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(CustomLinear(current, size))
            layers.append(CustomReLU())
            current = size
        layers.append(CustomLinear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 1
input_size = 1000
layer_sizes = [400, 800]
output_size = 500


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
