# corpus: problem=kb_l1_036_rmsnorm device=cpu expect=accepted policy=both
# style: torch.autograd.Function; permute().contiguous() to channels-last; new_empty output; functions=[...], with_cuda=False
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
features = 64
dim1 = 256
dim2 = 256

cpp_src = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

// x: (rows, C) contiguous, out: preallocated (rows, C). Each row is divided by its RMS.
void rmsnorm_rows_out(torch::Tensor x, torch::Tensor out, double eps) {
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous(), "rmsnorm: contiguous tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && out.scalar_type() == torch::kFloat32, "rmsnorm: float32 only");
    TORCH_CHECK(x.dim() == 2 && out.sizes() == x.sizes(), "rmsnorm: shape mismatch");
    const int64_t rows = x.size(0);
    const int64_t C = x.size(1);
    const float* px = x.data_ptr<float>();
    float* po = out.data_ptr<float>();
    at::parallel_for(0, rows, 256, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const float* xr = px + r * C;
            float* orow = po + r * C;
            float ss = 0.f;
            for (int64_t c = 0; c < C; ++c) ss += xr[c] * xr[c];
            const float rms = std::sqrt(ss / (float)C + (float)eps);
            for (int64_t c = 0; c < C; ++c) orow[c] = xr[c] / rms;
        }
    });
}
"""

rms_ext = load_inline(
    name="kb_rmsnorm_rows",
    cpp_sources=cpp_src,
    functions=["rmsnorm_rows_out"],
    extra_cflags=["-O3", "-march=native"],
    with_cuda=False,
    verbose=False,
)


class _RMSNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps):
        # channels-last so the normalised dimension is the fastest one
        n, c = x.shape[0], x.shape[1]
        xl = x.permute(0, *range(2, x.dim()), 1).contiguous()
        flat = xl.view(-1, c)
        out = flat.new_empty(flat.shape)
        rms_ext.rmsnorm_rows_out(flat, out, float(eps))
        perm_back = (0, x.dim() - 1, *range(1, x.dim() - 1))
        return out.view(xl.shape).permute(*perm_back).contiguous()

    @staticmethod
    def backward(ctx, grad_out):
        raise NotImplementedError("inference only")


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _RMSNormFn.apply(x, self.eps)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
