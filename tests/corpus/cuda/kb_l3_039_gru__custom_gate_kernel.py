# corpus: problem=kb_l3_039_gru device=cuda expect=accepted policy=kernelbench
# style: a GRU cell's gates fused in a custom kernel, 3072 small launches per forward, current stream
# class: 6
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
    """nn.GRU's parameters; the input projections for the whole sequence and the recurrent projection per step
    by cuBLAS (torch.addmm), the gate nonlinearities and the state update in one custom kernel per step."""

    def __init__(self, input_size, hidden_size, num_layers=3, bias=True, batch_first=False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self.num_layers = num_layers

    def forward(self, x, h0):
        layer_input = x
        for layer in range(self.num_layers):
            w_ih = getattr(self.gru, f"weight_ih_l{layer}")
            w_hh = getattr(self.gru, f"weight_hh_l{layer}")
            b_ih = getattr(self.gru, f"bias_ih_l{layer}")
            b_hh = getattr(self.gru, f"bias_hh_l{layer}")
            T, B, _ = layer_input.shape
            gi_all = torch.addmm(b_ih, layer_input.reshape(T * B, -1), w_ih.t()).view(T, B, -1)
            h = h0[layer].contiguous()
            outputs = []
            for t in range(T):
                gh = torch.addmm(b_hh, h, w_hh.t())
                h = gru.gru_cell_update(gi_all[t], gh, h)
                outputs.append(h)
            layer_input = torch.stack(outputs, 0)
        return layer_input
