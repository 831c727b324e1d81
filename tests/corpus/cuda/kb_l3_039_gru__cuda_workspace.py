# corpus: problem=kb_l3_039_gru device=cuda expect=accepted policy=kernelbench
# style: torch.addmm/torch.mm into workspaces kept on the module, a fused gate kernel per step
# class: 3,6
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Multi-layer GRU. Per layer, the input projection of the whole sequence is one cuBLAS GEMM
# (x @ W_ih^T + b_ih); per time step the recurrent GEMM (h @ W_hh^T + b_hh) is written into a
# workspace buffer kept on the module, and a custom CUDA kernel fuses the gate math:
#   r = sigmoid(gi_r + gh_r); z = sigmoid(gi_z + gh_z); n = tanh(gi_n + r * gh_n)
#   h' = (1 - z) * n + z * h
# writing h' straight into the layer's output sequence.

gru_cell_cuda = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

__device__ __forceinline__ float sigmoidf_(float v) { return 1.0f / (1.0f + __expf(-v)); }

__global__ void gru_cell_kernel(const float* __restrict__ gi,     // (B, 3H): input projection (+ b_ih)
                                const float* __restrict__ gh,     // (B, 3H): hidden projection (+ b_hh)
                                const float* __restrict__ h_prev, // (B, H)
                                float* __restrict__ h_out,        // (B, H)
                                int B, int H) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * H) return;
    const int b = idx / H;
    const int j = idx - b * H;
    const float* gib = gi + (int64_t)b * 3 * H;
    const float* ghb = gh + (int64_t)b * 3 * H;
    const float r = sigmoidf_(gib[j] + ghb[j]);
    const float z = sigmoidf_(gib[H + j] + ghb[H + j]);
    const float n = tanhf(gib[2 * H + j] + r * ghb[2 * H + j]);
    const float hp = h_prev[idx];
    h_out[idx] = (1.0f - z) * n + z * hp;
}

void gru_cell(torch::Tensor gi, torch::Tensor gh, torch::Tensor h_prev, torch::Tensor h_out) {
    TORCH_CHECK(gi.is_cuda() && gh.is_cuda() && h_prev.is_cuda() && h_out.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(gi.is_contiguous() && gh.is_contiguous() && h_prev.is_contiguous() && h_out.is_contiguous(),
                "contiguous tensors expected");
    TORCH_CHECK(gi.scalar_type() == at::kFloat && gh.scalar_type() == at::kFloat &&
                h_prev.scalar_type() == at::kFloat && h_out.scalar_type() == at::kFloat, "float32 only");
    const int B = (int)h_prev.size(0);
    const int H = (int)h_prev.size(1);
    TORCH_CHECK(gi.size(0) == B && gi.size(1) == 3 * H, "gi must be (B, 3H)");
    TORCH_CHECK(gh.size(0) == B && gh.size(1) == 3 * H, "gh must be (B, 3H)");
    TORCH_CHECK(h_out.size(0) == B && h_out.size(1) == H, "h_out must be (B, H)");
    const c10::cuda::CUDAGuard guard(h_prev.device());
    if (B * H == 0) return;
    const int threads = 128;
    const int blocks = (B * H + threads - 1) / threads;
    gru_cell_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        gi.data_ptr<float>(), gh.data_ptr<float>(), h_prev.data_ptr<float>(), h_out.data_ptr<float>(), B, H);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

gru_cell_cpp = "void gru_cell(torch::Tensor gi, torch::Tensor gh, torch::Tensor h_prev, torch::Tensor h_out);"


@functools.lru_cache(maxsize=None)
def _gru_ext():
    return load_inline(
        name="kb_l3_039_gru__cuda_workspace",
        cpp_sources=gru_cell_cpp,
        cuda_sources=gru_cell_cuda,
        functions=["gru_cell"],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        verbose=False,
    )


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        # the reference's nn.GRU is kept only as the holder of the weights (same init, same state_dict)
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self._ws = {}   # name -> reusable workspace tensor

    def _workspace(self, name, shape, like):
        buf = self._ws.get(name)
        if buf is None or buf.shape != torch.Size(shape) or buf.device != like.device or buf.dtype != like.dtype:
            buf = torch.empty(shape, device=like.device, dtype=like.dtype)
            self._ws[name] = buf
        return buf

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        ext = _gru_ext()
        if self.batch_first:
            x = x.transpose(0, 1)
        T, B, _ = x.shape
        H = self.hidden_size
        gi_ws = self._workspace("gi", (T * B, 3 * H), x)
        gh_ws = self._workspace("gh", (B, 3 * H), x)
        seq_ws = self._workspace("seq", (T, B, H), x) if self.num_layers > 1 else None

        # out= GEMMs into the workspaces do not record autograd history (the fused cell has no
        # backward anyway), so run the recurrence without grad tracking.
        with torch.no_grad():
            layer_in = x.contiguous().view(T * B, -1)
            out = None
            for layer in range(self.num_layers):
                w_ih = getattr(self.gru, f"weight_ih_l{layer}")
                w_hh = getattr(self.gru, f"weight_hh_l{layer}")
                b_ih = getattr(self.gru, f"bias_ih_l{layer}") if self.bias else None
                b_hh = getattr(self.gru, f"bias_hh_l{layer}") if self.bias else None

                # whole-sequence input projection (reads layer_in completely before it is overwritten below)
                if b_ih is not None:
                    torch.addmm(b_ih, layer_in, w_ih.t(), out=gi_ws)
                else:
                    torch.mm(layer_in, w_ih.t(), out=gi_ws)
                gi = gi_ws.view(T, B, 3 * H)

                last = layer == self.num_layers - 1
                out = torch.empty((T, B, H), device=x.device, dtype=x.dtype) if last else seq_ws
                h_prev = h0[layer].contiguous()
                for t in range(T):
                    if b_hh is not None:
                        torch.addmm(b_hh, h_prev, w_hh.t(), out=gh_ws)
                    else:
                        torch.mm(h_prev, w_hh.t(), out=gh_ws)
                    ext.gru_cell(gi[t], gh_ws, h_prev, out[t])
                    h_prev = out[t]
                layer_in = out.view(T * B, H)

        return out.transpose(0, 1) if self.batch_first else out
