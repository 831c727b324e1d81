# corpus: problem=kb_l2_076_gemm_add_relu device=cpu expect=accepted policy=both
# style: GEMM written into a non-persistent register_buffer (re-created when the batch changes) through a Tensor& out argument, in-place bias + ReLU epilogue on it, out_buf.clone() returned, two ops through functions=[...], OpenMP if(work >= 2^20) so small sizes run serially, nn.Linear gemm + bias Parameter as the reference, @torch.no_grad() (blind round 15)
# class: 7, 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Gemm (no bias) -> + bias -> ReLU.
# Two small C++ ops: linear_nt_out writes x @ W^T into a preallocated output buffer
# (a non-persistent register_buffer, resized when the batch changes), and
# bias_relu_ applies the epilogue in place on that buffer. forward returns a clone so the
# caller never aliases the module's workspace.
# Problems this small are dominated by call overhead, so the kernels go multi-threaded
# only past a work threshold.

cpp_source = r"""
#include <torch/extension.h>
#include <algorithm>

static constexpr int64_t PAR_WORK = 1 << 20;   // MACs before we bother with threads

void linear_nt_out(const torch::Tensor& x, const torch::Tensor& w, torch::Tensor& out) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat && w.scalar_type() == torch::kFloat &&
                out.scalar_type() == torch::kFloat, "float32 only");
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && out.dim() == 2, "2-D tensors expected");
    TORCH_CHECK(x.size(1) == w.size(1), "in_features mismatch");
    TORCH_CHECK(out.size(0) == x.size(0) && out.size(1) == w.size(0), "out has the wrong shape");
    TORCH_CHECK(out.is_contiguous(), "out must be contiguous");

    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
    const float* xp = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* op = out.data_ptr<float>();

    // both x rows and W rows are contiguous over K: a plain dot product per output
    #pragma omp parallel for collapse(2) schedule(static) if (M * N * K >= PAR_WORK)
    for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
            const float* __restrict__ a = xp + i * K;
            const float* __restrict__ b = wp + j * K;
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t k = 0; k < K; ++k) acc += a[k] * b[k];
            op[i * N + j] = acc;
        }
    }
}

void bias_relu_(torch::Tensor& y, const torch::Tensor& bias) {
    TORCH_CHECK(y.is_contiguous() && y.dim() == 2, "y must be a contiguous 2-D tensor");
    TORCH_CHECK(bias.numel() == y.size(1), "bias size mismatch");
    auto bc = bias.contiguous();
    const int64_t M = y.size(0), N = y.size(1);
    float* yp = y.data_ptr<float>();
    const float* bp = bc.data_ptr<float>();
    #pragma omp parallel for schedule(static) if (M * N >= PAR_WORK)
    for (int64_t i = 0; i < M; ++i) {
        float* __restrict__ r = yp + i * N;
        #pragma omp simd
        for (int64_t j = 0; j < N; ++j) {
            const float v = r[j] + bp[j];
            r[j] = v > 0.f ? v : 0.f;
        }
    }
}
"""

gemm_relu = load_inline(
    name="kb_l2_076_gemm_add_relu_buf",
    cpp_sources=cpp_source,
    functions=["linear_nt_out", "bias_relu_"],
    extra_cflags=["-O2", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.out_features = out_features
        # workspace for the GEMM output; not part of the state_dict
        self.register_buffer("out_buf", torch.empty(0, out_features), persistent=False)

    @torch.no_grad()
    def forward(self, x):
        rows = x.shape[0]
        if self.out_buf.shape[0] != rows or self.out_buf.dtype != x.dtype:
            self.out_buf = torch.empty(rows, self.out_features, dtype=x.dtype, device=x.device)
        gemm_relu.linear_nt_out(x, self.gemm.weight, self.out_buf)
        gemm_relu.bias_relu_(self.out_buf, self.bias)
        return self.out_buf.clone()


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
