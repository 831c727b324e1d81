# corpus: problem=kb_l1_098_kldiv device=cuda expect=accepted policy=both
# style: two-pass deterministic reduction, cub::BlockReduce, float4 __ldg grid-stride loop with a scalar tail, __launch_bounds__, getCurrentCUDAStream, CUDAGuard, C10_CUDA_KERNEL_LAUNCH_CHECK, partials and result in one workspace with ws.select(0, 0) (a 0-dim view of it) returned, functions=[...] module-level extension (blind round 15)
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# kl_div(log(p), t, reduction='batchmean') = sum(t * (log t - log p)) / batch
# Deterministic two-pass reduction:
#   pass 1: grid-stride float4 loads (__ldg), per-thread sum, cub::BlockReduce -> one partial per block
#   pass 2: one block reduces the partials and divides by the batch size
# Partials and the result share one workspace tensor: ws[0] is the result, ws[1:] the partials.
# The op returns ws[0] (a 0-dim view into the workspace).

cpp_decl = r"""
torch::Tensor kl_div_batchmean(torch::Tensor predictions, torch::Tensor targets);
"""

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cub/block/block_reduce.cuh>

#define KL_THREADS 256

__device__ __forceinline__ float kl_term(float p, float t) {
    // xlogy semantics: t == 0 contributes 0
    return t > 0.f ? t * (logf(t) - logf(p)) : 0.f;
}

__global__ void __launch_bounds__(KL_THREADS)
kl_partial_kernel(const float* __restrict__ p, const float* __restrict__ t,
                  float* __restrict__ partials, int64_t n) {
    typedef cub::BlockReduce<float, KL_THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage tmp;

    float acc = 0.f;
    const int64_t n4 = n / 4;
    const float4* p4 = reinterpret_cast<const float4*>(p);
    const float4* t4 = reinterpret_cast<const float4*>(t);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        const float4 a = __ldg(p4 + i);
        const float4 b = __ldg(t4 + i);
        acc += kl_term(a.x, b.x) + kl_term(a.y, b.y) + kl_term(a.z, b.z) + kl_term(a.w, b.w);
    }
    // tail (n not a multiple of 4)
    for (int64_t i = n4 * 4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += kl_term(__ldg(p + i), __ldg(t + i));

    const float block_sum = BlockReduce(tmp).Sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

__global__ void __launch_bounds__(KL_THREADS)
kl_final_kernel(const float* __restrict__ partials, int nparts, float* __restrict__ out, float inv_batch) {
    typedef cub::BlockReduce<float, KL_THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage tmp;
    float acc = 0.f;
    for (int i = threadIdx.x; i < nparts; i += blockDim.x) acc += partials[i];
    const float s = BlockReduce(tmp).Sum(acc);
    if (threadIdx.x == 0) out[0] = s * inv_batch;
}

torch::Tensor kl_div_batchmean(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(predictions.scalar_type() == at::kFloat && targets.scalar_type() == at::kFloat, "float32 expected");
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "shape mismatch");
    TORCH_CHECK(predictions.dim() >= 1, "need a batch dimension");
    const c10::cuda::CUDAGuard guard(predictions.device());

    auto p = predictions.contiguous();
    auto t = targets.contiguous();
    const int64_t n = p.numel();
    const int64_t batch = p.size(0);

    int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    int64_t want = (n / 4 + KL_THREADS - 1) / KL_THREADS;
    int blocks = (int)std::max<int64_t>(1, std::min<int64_t>(want, (int64_t)sms * 8));

    auto ws = torch::empty({1 + blocks}, p.options());
    float* wsp = ws.data_ptr<float>();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    // float4 path needs 16-byte aligned bases; contiguous fresh allocations are, but check
    TORCH_CHECK(reinterpret_cast<uintptr_t>(p.data_ptr<float>()) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(t.data_ptr<float>()) % 16 == 0,
                "inputs must be 16-byte aligned");

    kl_partial_kernel<<<blocks, KL_THREADS, 0, stream>>>(p.data_ptr<float>(), t.data_ptr<float>(), wsp + 1, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    kl_final_kernel<<<1, KL_THREADS, 0, stream>>>(wsp + 1, blocks, wsp, 1.0f / (float)batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    return ws.select(0, 0);   // 0-dim view of ws[0]
}
"""

kl_ext = load_inline(
    name="kb_l1_098_kldiv_cub",
    cpp_sources=cpp_decl,
    cuda_sources=cuda_src,
    functions=["kl_div_batchmean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions, targets):
        return kl_ext.kl_div_batchmean(predictions, targets)


batch_size = 8192 * 2
input_shape = (8192 * 2,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    return [(torch.rand(batch_size, *input_shape) * scale).softmax(dim=-1),
            torch.rand(batch_size, *input_shape).softmax(dim=-1)]


def get_init_inputs():
    return []
