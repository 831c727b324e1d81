# corpus: problem=kb_l3_001_mlp device=cpu expect=accepted policy=both
# style: ModelNew(Model) subclass; plain single-thread loops; Linear+ReLU fused; __main__ self-test
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1
input_size = 1000
layer_sizes = [400, 800]
output_size = 500


class Model(nn.Module):
    """A multi-layer perceptron: Linear+ReLU per hidden layer, then a final Linear."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


linear_cpp = r"""
#include <torch/extension.h>

// y[b][o] = sum_i x[b][i] * W[o][i] + bias[o], optionally followed by ReLU.
// Plain single-threaded loops; the batch here is tiny so a dot product per output is fine.
torch::Tensor linear_act(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, bool relu) {
    TORCH_CHECK(x.dim() == 2, "x must be 2-D");
    TORCH_CHECK(weight.dim() == 2 && weight.size(1) == x.size(1), "weight shape mismatch");
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "bias shape mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int64_t B = xc.size(0), IN = xc.size(1), OUT = wc.size(0);
    auto y = torch::empty({B, OUT}, xc.options());

    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    const float* bp = bc.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    for (int64_t b = 0; b < B; ++b) {
        const float* xr = xp + b * IN;
        for (int64_t o = 0; o < OUT; ++o) {
            const float* wr = wp + o * IN;
            float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
            int64_t i = 0;
            for (; i + 4 <= IN; i += 4) {
                s0 += xr[i] * wr[i];
                s1 += xr[i + 1] * wr[i + 1];
                s2 += xr[i + 2] * wr[i + 2];
                s3 += xr[i + 3] * wr[i + 3];
            }
            for (; i < IN; ++i) s0 += xr[i] * wr[i];
            float v = (s0 + s1) + (s2 + s3) + bp[o];
            if (relu && v < 0.f) v = 0.f;
            yp[b * OUT + o] = v;
        }
    }
    return y;
}
"""

mlp_ext = load_inline(
    name="kb_l3_001_mlp_plain",
    cpp_sources=[linear_cpp],
    functions=["linear_act"],
    extra_cflags=["-O2"],
)


class ModelNew(Model):
    """Same parameters as Model (it is a subclass); forward runs each Linear(+ReLU) in C++."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__(input_size, layer_sizes, output_size)
        mods = list(self.network)
        self._plan = []  # (linear index in self.network, fuse relu)
        for i, m in enumerate(mods):
            if isinstance(m, nn.Linear):
                fuse = i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU)
                self._plan.append((i, fuse))

    def forward(self, x):
        for idx, relu in self._plan:
            lin = self.network[idx]
            x = mlp_ext.linear_act(x, lin.weight, lin.bias, relu)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ModelNew(*get_init_inputs())
    for bs in (1, 7):
        x = torch.randn(bs, input_size)
        with torch.no_grad():
            out = model(x)
            ref = Model.forward(model, x)
        print("batch", bs, "max abs err:", (out - ref).abs().max().item())
