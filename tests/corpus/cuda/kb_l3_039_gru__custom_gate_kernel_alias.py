# corpus: problem=kb_l3_039_gru device=cuda expect=accepted policy=kernelbench
# style: self.cell alias of the gate kernel; outputs written into a preallocated sequence tensor
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gru_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh, both (B, 3H) in the order (r, z, n), as nn.GRU lays them out.
__global__ void gru_gate_kernel(const float* __restrict__ gi, const float* __restrict__ gh, const float* __restrict__ h,
                                float* __restrict__ h_new, int B, int H) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * H) return;
    const int b = idx / H, j = idx % H;
    const float* gib = gi + (int64_t)b * 3 * H;
    const float* ghb = gh + (int64_t)b * 3 * H;
    const float r = 1.0f / (1.0f + expf(-(gib[j] + ghb[j])));
    const float z = 1.0f / (1.0f + expf(-(gib[H + j] + ghb[H + j])));
    const float n = tanhf(gib[2 * H + j] + r * ghb[2 * H + j]);
    h_new[idx] = (1.0f - z) * n + z * h[idx];
}

torch::Tensor gru_cell_update(torch::Tensor gi, torch::Tensor gh, torch::Tensor h) {
    TORCH_CHECK(gi.is_cuda() && gh.is_cuda() && h.is_cuda(), "CUDA tensors expected");
    gi = gi.contiguous(); gh = gh.contiguous(); h = h.contiguous();
    const int B = h.size(0), H = h.size(1);
    TORCH_CHECK(gi.size(1) == 3 * H && gh.size(1) == 3 * H, "gates must be (B, 3H)");
    auto h_new = torch::empty_like(h);
    const int threads = 128;
    gru_gate_kernel<<<(B * H + threads - 1) / threads, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        gi.data_ptr<float>(), gh.data_ptr<float>(), h.data_ptr<float>(), h_new.data_ptr<float>(), B, H);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return h_new;
}
"""

gru_cpp_source = """
torch::Tensor gru_cell_update(torch::Tensor gi, torch::Tensor gh, torch::Tensor h);
"""

gru = load_inline(
    name="gru_gates_ext",
    cpp_sources=gru_cpp_source,
    cuda_sources=gru_cuda_source,
    functions=['gru_cell_update'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=3, bias=True, batch_first=False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self.cell = gru.gru_cell_update

    def forward(self, x, h0):
        seq = x
        for layer in range(self.gru.num_layers):
            p = dict(self.gru.named_parameters())
            gi = torch.nn.functional.linear(seq, p[f"weight_ih_l{layer}"], p[f"bias_ih_l{layer}"])
            h = h0[layer].contiguous()
            out = torch.empty(seq.shape[0], seq.shape[1], self.gru.hidden_size, device=x.device, dtype=x.dtype)
            for t in range(seq.shape[0]):
                gh = torch.nn.functional.linear(h, p[f"weight_hh_l{layer}"], p[f"bias_hh_l{layer}"])
                h = self.cell(gi[t], gh, h)
                out[t] = h
            seq = out
        return seq
