# corpus: problem=kb_l2_012_gemm_multiply_leakyrelu device=cpu expect=accepted policy=kernelbench
# style: PyTorch's nn.Linear in forward around a custom in-place epilogue kernel (scale + LeakyReLU)
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// y = x @ W^T + b by dot products of contiguous rows (x: batch x in, W: out x in), then optional epilogues.
static void linear_rows(const float* x, const float* w, const float* b, float* y,
                        int64_t batch_size, int64_t in_features, int64_t out_features) {
    const int64_t total = batch_size * out_features;
    at::parallel_for(0, total, 64, [&](int64_t begin, int64_t end) {
        for (int64_t idx = begin; idx < end; ++idx) {
            const int64_t row = idx / out_features;
            const int64_t col = idx % out_features;
            const float* xr = x + row * in_features;
            const float* wr = w + col * in_features;
            float acc = 0.0f;
            for (int64_t k = 0; k < in_features; ++k) acc += xr[k] * wr[k];
            y[idx] = acc + b[col];
        }
    });
}

static void check_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "linear: 2-D input and weight expected");
    TORCH_CHECK(x.size(1) == w.size(1), "linear: in_features mismatch (", x.size(1), " vs ", w.size(1), ")");
    TORCH_CHECK(b.numel() == w.size(0), "linear: bias must have out_features entries");
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    check_linear(x, w, b);
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
    const int64_t batch_size = xc.size(0), in_features = xc.size(1), out_features = wc.size(0);
    auto y = torch::empty({batch_size, out_features}, xc.options());
    linear_rows(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(),
                batch_size, in_features, out_features);
    return y;
}

// In place: y = leaky_relu(y * multiplier, slope).
torch::Tensor scale_leaky_relu_(torch::Tensor y, double multiplier, double negative_slope) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat32, "scale_leaky_relu_: contiguous float32");
    float* p = y.data_ptr<float>();
    const float m = static_cast<float>(multiplier), s = static_cast<float>(negative_slope);
    at::parallel_for(0, y.numel(), 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float v = p[i] * m;
            p[i] = v > 0.0f ? v : v * s;
        }
    });
    return y;
}

// W^T as a new contiguous (in, out) tensor.
torch::Tensor transpose_2d(torch::Tensor w) {
    TORCH_CHECK(w.dim() == 2, "transpose_2d: 2-D tensor expected");
    auto wc = w.contiguous();
    const int64_t rows = wc.size(0), cols = wc.size(1);
    auto t = torch::empty({cols, rows}, wc.options());
    const float* src = wc.data_ptr<float>();
    float* dst = t.data_ptr<float>();
    at::parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
    });
    return t;
}

// y = x @ Wt + b with Wt already (in, out): i-k-j order over rows of Wt.
torch::Tensor linear_wt_forward(torch::Tensor x, torch::Tensor wt, torch::Tensor b) {
    TORCH_CHECK(x.size(1) == wt.size(0), "linear_wt_forward: in_features mismatch");
    auto xc = x.contiguous(), wc = wt.contiguous(), bc = b.contiguous();
    const int64_t batch_size = xc.size(0), in_features = xc.size(1), out_features = wc.size(1);
    auto y = torch::empty({batch_size, out_features}, xc.options());
    const float* px = xc.data_ptr<float>();
    const float* pw = wc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    at::parallel_for(0, batch_size, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            float* yr = py + r * out_features;
            for (int64_t j = 0; j < out_features; ++j) yr[j] = pb[j];
            for (int64_t k = 0; k < in_features; ++k) {
                const float xv = px[r * in_features + k];
                const float* wr = pw + k * out_features;
                for (int64_t j = 0; j < out_features; ++j) yr[j] += xv * wr[j];
            }
        }
    });
    return y;
}

// The whole model in one pass: leaky_relu((x @ W^T + b) * multiplier).
torch::Tensor gemm_mul_lrelu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double multiplier,
                             double negative_slope) {
    auto y = linear_forward(x, w, b);
    return scale_leaky_relu_(y, multiplier, negative_slope);
}
"""

epilogue = load_inline(
    name="corpus_gemm_lrelu_cpu",
    cpp_sources=epilogue_src,
    functions=["linear_forward", "scale_leaky_relu_", "transpose_2d", "linear_wt_forward", "gemm_mul_lrelu"],
    extra_cflags=["-O3"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope
        self.epilogue = epilogue.scale_leaky_relu_

    def forward(self, x):
        x = self.gemm(x).contiguous()
        return self.epilogue(x, self.multiplier, self.negative_slope)
