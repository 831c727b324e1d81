# corpus: problem=kb_l1_023_softmax device=cpu expect=accepted policy=both
# style: catch-all TORCH_LIBRARY m.def(schema, &fn) called through torch.ops; torch.split + list comprehension + torch.cat; .float()/.to; at::parallel_for; __main__ self-test
# class: 2
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 16
dim = 16384

softmax_cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <limits>

// Row-wise softmax over the last dimension of a 2-D float tensor.
torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "softmax_rows: expected a CPU tensor");
    TORCH_CHECK(x.dim() == 2, "softmax_rows: expected a 2-D tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax_rows: expected float32");
    auto in = x.contiguous();
    const int64_t rows = in.size(0);
    const int64_t cols = in.size(1);
    auto out = torch::empty_like(in);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();

    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* xr = src + r * cols;
            float* yr = dst + r * cols;
            float mx = -std::numeric_limits<float>::infinity();
            for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
            double sum = 0.0;
            for (int64_t c = 0; c < cols; ++c) {
                float e = std::exp(xr[c] - mx);
                yr[c] = e;
                sum += e;
            }
            const float inv = (float)(1.0 / sum);
            for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
        }
    });
    return out;
}

// Catch-all registration: the same function serves every backend.
TORCH_LIBRARY(kb_softmax_ns, m) {
    m.def("softmax_rows(Tensor x) -> Tensor", &softmax_rows);
}
"""

# The library only registers an operator; nothing to import as a Python module.
load_inline(
    name="kb_softmax_catchall",
    cpp_sources=softmax_cpp_source,
    extra_cflags=["-O3"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    """Softmax(dim=1) through a custom C++ operator, processed in row blocks."""

    def __init__(self, rows_per_block: int = 4):
        super().__init__()
        self.rows_per_block = rows_per_block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        orig_dtype = x.dtype
        x2d = x.float().reshape(x.shape[0], -1)
        blocks = torch.split(x2d, self.rows_per_block, dim=0)
        outs = [torch.ops.kb_softmax_ns.softmax_rows(b) for b in blocks]
        y = torch.cat(outs, dim=0)
        return y.view(x.shape).to(orig_dtype)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


if __name__ == "__main__":
    x = torch.randn(batch_size, dim)
    y = ModelNew()(x)
    ref = torch.softmax(x, dim=1)
    print("max abs err:", (y - ref).abs().max().item())
    assert torch.allclose(y, ref, atol=1e-6, rtol=1e-4)
    print("ok")
