# corpus: problem=kb_l1_087_conv_pointwise device=cpu expect=accepted policy=both
# style: channels_last output from torch::empty_strided with NHWC strides, c10::optional<Tensor> bias with a py::none() default in a hand-written PYBIND11_MODULE, nn.Conv2d kept as conv1d for its parameters, omp parallel + omp for collapse(2) with a per-thread std::vector transpose tile, weight transposed per call in C++ (blind round 15)
# class: 7, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# 1x1 convolution as a per-pixel GEMV. The input stays NCHW; the output is produced in
# channels_last layout (torch::empty_strided with NHWC strides), which is the natural
# layout for this loop order: for each pixel, all Cout outputs are contiguous, so the
# innermost loop is a unit-stride AXPY over the transposed weight row.

source = r"""
#include <torch/extension.h>
#include <c10/util/Optional.h>
#include <algorithm>
#include <vector>

constexpr int64_t PIX_TILE = 32;

torch::Tensor conv1x1_nhwc_out(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias) {
    TORCH_CHECK(x.dim() == 4, "x must be (N, Cin, H, W)");
    TORCH_CHECK(weight.dim() == 4 && weight.size(2) == 1 && weight.size(3) == 1, "weight must be (Cout, Cin, 1, 1)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat, "float32 only");
    TORCH_CHECK(weight.size(1) == x.size(1), "channel mismatch");

    auto xc = x.contiguous();
    const int64_t NB = xc.size(0), Cin = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int64_t Cout = weight.size(0);
    const int64_t HW = H * W;

    // weight^T: (Cin, Cout), so that row ci is contiguous over output channels
    auto wt = weight.reshape({Cout, Cin}).t().contiguous();
    const float* wtp = wt.data_ptr<float>();

    const float* bp = nullptr;
    torch::Tensor bc;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == Cout, "bias size mismatch");
        bp = bc.data_ptr<float>();
    }

    // channels_last output: sizes (N, Cout, H, W), strides (H*W*Cout, 1, W*Cout, Cout)
    auto out = torch::empty_strided({NB, Cout, H, W}, {HW * Cout, 1, W * Cout, Cout}, xc.options());
    float* op = out.data_ptr<float>();
    const float* xp = xc.data_ptr<float>();

    const int64_t ntiles = (HW + PIX_TILE - 1) / PIX_TILE;
    #pragma omp parallel
    {
        std::vector<float> xt(PIX_TILE * Cin);   // pixel tile transposed to (pix, Cin)
        #pragma omp for collapse(2) schedule(static)
        for (int64_t n = 0; n < NB; ++n) {
            for (int64_t t = 0; t < ntiles; ++t) {
                const int64_t p0 = t * PIX_TILE;
                const int64_t np = std::min(PIX_TILE, HW - p0);
                const float* xn = xp + n * Cin * HW + p0;
                for (int64_t ci = 0; ci < Cin; ++ci)
                    for (int64_t p = 0; p < np; ++p)
                        xt[p * Cin + ci] = xn[ci * HW + p];
                for (int64_t p = 0; p < np; ++p) {
                    float* __restrict__ o = op + (n * HW + p0 + p) * Cout;
                    if (bp) { for (int64_t co = 0; co < Cout; ++co) o[co] = bp[co]; }
                    else    { for (int64_t co = 0; co < Cout; ++co) o[co] = 0.f; }
                    const float* __restrict__ xr = xt.data() + p * Cin;
                    for (int64_t ci = 0; ci < Cin; ++ci) {
                        const float a = xr[ci];
                        const float* __restrict__ w = wtp + ci * Cout;
                        #pragma omp simd
                        for (int64_t co = 0; co < Cout; ++co) o[co] += a * w[co];
                    }
                }
            }
        }
    }
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("conv1x1_nhwc_out", &conv1x1_nhwc_out, "pointwise conv2d, channels_last output",
          py::arg("x"), py::arg("weight"), py::arg("bias") = py::none());
}
"""

pointwise_ext = load_inline(
    name="kb_l1_087_conv1x1_cl",
    cpp_sources=[source],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    with_cuda=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(ModelNew, self).__init__()
        # same parameter names / init as the reference
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pointwise_ext.conv1x1_nhwc_out(x, self.conv1d.weight, self.conv1d.bias)


batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
