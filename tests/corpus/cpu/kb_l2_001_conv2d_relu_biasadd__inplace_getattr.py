# corpus: problem=kb_l2_001_conv2d_relu_biasadd device=cpu expect=accepted policy=kernelbench
# style: in-place kernel on nn.Conv2d's output, chosen once in __init__ through getattr, AT_DISPATCH_FLOATING_TYPES with at::parallel_for
# class: 1,3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// In-place epilogue on a conv output y of shape (N, C, H, W):
//     y = relu(y) + bias[c]
// bias may be any tensor with C elements (e.g. shape (C, 1, 1)).
torch::Tensor relu_bias_add_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.device().is_cpu(), "relu_bias_add_: y must be a CPU tensor");
    TORCH_CHECK(y.dim() == 4, "relu_bias_add_: expected a 4-D NCHW tensor");
    TORCH_CHECK(y.is_contiguous(), "relu_bias_add_: y must be contiguous (it is modified in place)");
    TORCH_CHECK(y.scalar_type() == bias.scalar_type(), "relu_bias_add_: dtype mismatch");
    const int64_t N = y.size(0), C = y.size(1);
    const int64_t HW = y.size(2) * y.size(3);
    TORCH_CHECK(bias.numel() == C, "relu_bias_add_: bias must have one value per channel");
    auto b = bias.contiguous();

    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "relu_bias_add_", [&] {
        scalar_t* yp = y.data_ptr<scalar_t>();
        const scalar_t* bp = b.data_ptr<scalar_t>();
        at::parallel_for(0, N * C, 1, [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
                const scalar_t bv = bp[nc % C];
                scalar_t* row = yp + nc * HW;
                for (int64_t i = 0; i < HW; ++i) {
                    const scalar_t v = row[i];
                    row[i] = (v > scalar_t(0) ? v : scalar_t(0)) + bv;
                }
            }
        });
    });
    return y;
}

// Out-of-place variant, used when the conv output is not contiguous.
torch::Tensor relu_bias_add(torch::Tensor x, torch::Tensor bias) {
    auto y = x.contiguous().clone();
    return relu_bias_add_(y, bias);
}
"""

epilogue_ext = load_inline(
    name="kb_l2_001_conv2d_relu_biasadd__inplace_getattr",
    cpp_sources=cpp_source,
    functions=["relu_bias_add_", "relu_bias_add"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Conv2d (PyTorch) followed by a fused, in-place ReLU + per-channel bias kernel."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple,
                 inplace: bool = True) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        # Pick the epilogue once: the conv output is a fresh tensor, so it may be overwritten.
        self.ext = epilogue_ext
        self._epilogue_name = "relu_bias_add_" if inplace else "relu_bias_add"
        self.epilogue = getattr(self.ext, self._epilogue_name)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.conv(x)
        if not y.is_contiguous():
            return self.ext.relu_bias_add(y, self.bias)
        return self.epilogue(y, self.bias)
