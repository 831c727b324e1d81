# corpus: problem=kb_l1_094_mse_loss device=cuda expect=accepted policy=both
# style: extension returns an int that sizes a scratch buffer kept on self
# class: 4,8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

losses_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define LOSS_THREADS 256
#define MAX_PARTIALS 2048

__device__ __forceinline__ double block_sum(double v) {
    __shared__ double warp_part[LOSS_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < LOSS_THREADS / 32 ? warp_part[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    return v;
}

// kind 0: (p - t)^2; kind 1: max(0, 1 - p * t[j % cols]) (targets broadcast along the last dimension).
__global__ void loss_partial_kernel(const float* __restrict__ p, const float* __restrict__ t, double* __restrict__ partial,
                                    int64_t n, int64_t cols, int kind) {
    double acc = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * LOSS_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * LOSS_THREADS) {
        if (kind == 0) {
            const double d = (double)p[i] - (double)t[i];
            acc += d * d;
        } else {
            const double h = 1.0 - (double)p[i] * (double)t[i % cols];
            acc += h > 0.0 ? h : 0.0;
        }
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void loss_finish_kernel(const double* __restrict__ partial, int parts, float* __restrict__ out, double n) {
    double acc = 0.0;
    for (int i = threadIdx.x; i < parts; i += LOSS_THREADS) acc += partial[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[0] = (float)(acc / n);
}

int64_t loss_partials_for(int64_t n) {
    return std::max<int64_t>(1, std::min<int64_t>((n + LOSS_THREADS - 1) / LOSS_THREADS, MAX_PARTIALS));
}

static torch::Tensor run_loss(torch::Tensor pred, torch::Tensor target, torch::Tensor partials, int kind) {
    TORCH_CHECK(pred.is_cuda() && target.is_cuda(), "CUDA tensors expected");
    auto p = pred.contiguous();
    auto t = target.contiguous();
    const int64_t n = p.numel();
    const int64_t cols = p.size(-1);
    const int parts = (int)loss_partials_for(n);
    TORCH_CHECK(partials.numel() >= parts && partials.scalar_type() == torch::kFloat64, "partials: too small or not float64");
    auto out = torch::empty({}, p.options());
    loss_partial_kernel<<<parts, LOSS_THREADS>>>(p.data_ptr<float>(), t.data_ptr<float>(), partials.data_ptr<double>(),
                                                 n, cols, kind);
    loss_finish_kernel<<<1, LOSS_THREADS>>>(partials.data_ptr<double>(), parts, out.data_ptr<float>(), (double)n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "loss kernels: ", cudaGetErrorString(err));
    return out;
}

torch::Tensor mse_loss_ws(torch::Tensor pred, torch::Tensor target, torch::Tensor partials) {
    return run_loss(pred, target, partials, 0);
}

torch::Tensor mse_loss_cuda(torch::Tensor pred, torch::Tensor target) {
    auto partials = torch::empty({loss_partials_for(pred.numel())}, pred.options().dtype(torch::kFloat64));
    return run_loss(pred, target, partials, 0);
}

torch::Tensor hinge_loss_cuda(torch::Tensor pred, torch::Tensor target) {
    TORCH_CHECK(target.numel() == pred.size(-1), "targets broadcast along the last dimension");
    auto partials = torch::empty({loss_partials_for(pred.numel())}, pred.options().dtype(torch::kFloat64));
    return run_loss(pred, target, partials, 1);
}
"""

losses_cpp_source = """
torch::Tensor mse_loss_cuda(torch::Tensor pred, torch::Tensor target);
torch::Tensor hinge_loss_cuda(torch::Tensor pred, torch::Tensor target);
int64_t loss_partials_for(int64_t n);
torch::Tensor mse_loss_ws(torch::Tensor pred, torch::Tensor target, torch::Tensor partials);
"""

losses = load_inline(
    name="loss_reduce_ext",
    cpp_sources=losses_cpp_source,
    cuda_sources=losses_cuda_source,
    functions=['mse_loss_cuda', 'hinge_loss_cuda', 'loss_partials_for', 'mse_loss_ws'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._partials = None

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        parts = losses.loss_partials_for(predictions.numel())  # a Python int
        if self._partials is None or self._partials.numel() < parts or self._partials.device != predictions.device:
            self._partials = torch.empty(parts, dtype=torch.float64, device=predictions.device)
        return losses.mse_loss_ws(predictions, targets, self._partials)
