# corpus: problem=kb_l3_002_shallow_wide_mlp device=cpu expect=accepted policy=both
# style: nn.Sequential of custom modules, c10::optional bias
# class: 2, 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_cpp = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// y = x @ W^T (+ b), optionally followed by ReLU.  W: [out, in] row-major, so
// every output is a contiguous dot product (good for the batch-1 GEMV case).
torch::Tensor linear_act(torch::Tensor x, torch::Tensor weight,
                         c10::optional<torch::Tensor> bias, bool relu) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "linear_act: 2-D tensors expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "linear_act: in_features mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "linear_act: float32 expected");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int64_t B = xc.size(0), K = xc.size(1), N = wc.size(0);
    torch::Tensor bc;
    const float* bp = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == N, "linear_act: bias size mismatch");
        bp = bc.data_ptr<float>();
    }
    auto y = torch::empty({B, N}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) {
            const float* wr = wp + n * K;
            const float bn = bp ? bp[n] : 0.f;
            for (int64_t b = 0; b < B; ++b) {
                const float* xr = xp + b * K;
                float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
                int64_t k = 0;
                for (; k + 4 <= K; k += 4) {
                    acc0 += xr[k] * wr[k];
                    acc1 += xr[k + 1] * wr[k + 1];
                    acc2 += xr[k + 2] * wr[k + 2];
                    acc3 += xr[k + 3] * wr[k + 3];
                }
                for (; k < K; ++k) acc0 += xr[k] * wr[k];
                float v = (acc0 + acc1) + (acc2 + acc3) + bn;
                if (relu && v < 0.f) v = 0.f;
                yp[b * N + n] = v;
            }
        }
    });
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_l3_002_shallow_wide_mlp__sequential_modules",
    cpp_sources=linear_cpp,
    functions=["linear_act"],
    extra_cflags=["-O3"],
    verbose=False,
)


class FusedLinear(nn.Module):
    """Linear (+ optional ReLU) computed by the C++ kernel; nn.Linear holds the parameters."""

    def __init__(self, in_features, out_features, relu):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.relu = relu

    def forward(self, x):
        return mlp_ext.linear_act(x, self.linear.weight, self.linear.bias, self.relu)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for hidden in hidden_layer_sizes:
            layers.append(FusedLinear(current, hidden, relu=True))
            current = hidden
        layers.append(FusedLinear(current, output_size, relu=False))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)
