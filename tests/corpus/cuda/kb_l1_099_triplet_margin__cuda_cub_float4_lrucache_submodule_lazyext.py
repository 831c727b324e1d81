# corpus: problem=kb_l1_099_triplet_margin device=cuda expect=accepted policy=both
# style: global _ext lazy loader, a loss nn.Module submodule, functools.lru_cache launch config (block size, float4 path by data_ptr alignment), kernel templated on BLOCK and VEC4 with a switch, cub::BlockReduce over float2, __ldg float4 loads, a mean kernel, CUDAGuard + getCurrentCUDAStream, AT_CUDA_CHECK (blind round 13)
# class: 2
import functools
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cub/block/block_reduce.cuh>

// d(x, y) = || x - y + eps ||_2  (torch.pairwise_distance semantics)
// loss_i = max(d(a_i, p_i) - d(a_i, n_i) + margin, 0)

struct PairSum {
    __device__ __forceinline__ float2 operator()(const float2& a, const float2& b) const {
        return make_float2(a.x + b.x, a.y + b.y);
    }
};

template <int BLOCK, bool VEC4>
__global__ void __launch_bounds__(BLOCK)
triplet_row_kernel(const float* __restrict__ anchor, const float* __restrict__ positive,
                   const float* __restrict__ negative, float* __restrict__ row_loss,
                   int D, float margin, float eps) {
    using BlockReduce = cub::BlockReduce<float2, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp;

    const int64_t row = blockIdx.x;
    const float* a = anchor + row * (int64_t)D;
    const float* p = positive + row * (int64_t)D;
    const float* n = negative + row * (int64_t)D;

    float sp = 0.f, sn = 0.f;
    if (VEC4) {
        const float4* a4 = reinterpret_cast<const float4*>(a);
        const float4* p4 = reinterpret_cast<const float4*>(p);
        const float4* n4 = reinterpret_cast<const float4*>(n);
        const int D4 = D >> 2;
        for (int i = threadIdx.x; i < D4; i += BLOCK) {
            const float4 av = __ldg(a4 + i);
            const float4 pv = __ldg(p4 + i);
            const float4 nv = __ldg(n4 + i);
            float d;
            d = av.x - pv.x + eps; sp += d * d;
            d = av.y - pv.y + eps; sp += d * d;
            d = av.z - pv.z + eps; sp += d * d;
            d = av.w - pv.w + eps; sp += d * d;
            d = av.x - nv.x + eps; sn += d * d;
            d = av.y - nv.y + eps; sn += d * d;
            d = av.z - nv.z + eps; sn += d * d;
            d = av.w - nv.w + eps; sn += d * d;
        }
    } else {
        for (int i = threadIdx.x; i < D; i += BLOCK) {
            const float av = a[i];
            float d = av - p[i] + eps; sp += d * d;
            d = av - n[i] + eps; sn += d * d;
        }
    }

    const float2 tot = BlockReduce(temp).Reduce(make_float2(sp, sn), PairSum());
    if (threadIdx.x == 0) {
        const float l = sqrtf(tot.x) - sqrtf(tot.y) + margin;
        row_loss[row] = l > 0.f ? l : 0.f;
    }
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
mean_kernel(const float* __restrict__ v, float* __restrict__ out, int64_t n) {
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += BLOCK) s += v[i];
    const float tot = BlockReduce(temp).Sum(s);
    if (threadIdx.x == 0) out[0] = tot / static_cast<float>(n);
}

template <int BLOCK>
static void launch_rows(const torch::Tensor& a, const torch::Tensor& p, const torch::Tensor& n,
                        torch::Tensor& rows, int D, float margin, float eps, bool vec4,
                        cudaStream_t stream) {
    const int64_t B = a.size(0);
    if (vec4) {
        triplet_row_kernel<BLOCK, true><<<B, BLOCK, 0, stream>>>(
            a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(), rows.data_ptr<float>(), D, margin, eps);
    } else {
        triplet_row_kernel<BLOCK, false><<<B, BLOCK, 0, stream>>>(
            a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(), rows.data_ptr<float>(), D, margin, eps);
    }
}

torch::Tensor triplet_margin_loss(torch::Tensor anchor, torch::Tensor positive, torch::Tensor negative,
                                  double margin, double eps, int64_t block, bool vec4) {
    TORCH_CHECK(anchor.is_cuda() && positive.is_cuda() && negative.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(anchor.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(anchor.dim() == 2 && anchor.sizes() == positive.sizes() && anchor.sizes() == negative.sizes(),
                "expected three [B, D] tensors of equal shape");
    c10::cuda::CUDAGuard guard(anchor.device());
    auto a = anchor.contiguous(), p = positive.contiguous(), n = negative.contiguous();
    const int64_t B = a.size(0);
    const int D = static_cast<int>(a.size(1));
    auto rows = torch::empty({B}, a.options());
    auto out = torch::empty({}, a.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    switch (block) {
        case 128: launch_rows<128>(a, p, n, rows, D, (float)margin, (float)eps, vec4, stream); break;
        case 512: launch_rows<512>(a, p, n, rows, D, (float)margin, (float)eps, vec4, stream); break;
        default:  launch_rows<256>(a, p, n, rows, D, (float)margin, (float)eps, vec4, stream); break;
    }
    mean_kernel<1024><<<1, 1024, 0, stream>>>(rows.data_ptr<float>(), out.data_ptr<float>(), B);
    AT_CUDA_CHECK(cudaGetLastError());
    return out;
}
"""

_CPP_SRC = (
    "torch::Tensor triplet_margin_loss(torch::Tensor anchor, torch::Tensor positive, torch::Tensor negative,"
    " double margin, double eps, int64_t block, bool vec4);"
)

_ext = None


def _get_ext():
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="kb_l1_099_triplet_margin__cuda_cub_float4_lrucache_submodule_lazyext",
            cpp_sources=_CPP_SRC,
            cuda_sources=_CUDA_SRC,
            functions=["triplet_margin_loss"],
            extra_cuda_cflags=["-O3", "-lineinfo"],
            verbose=False,
        )
    return _ext


@functools.lru_cache(maxsize=64)
def _launch_config(feature_dim: int, aligned: bool) -> Tuple[int, bool]:
    """Block size and whether the float4 path can be used for a given row length."""
    vec4 = aligned and feature_dim % 4 == 0
    work = feature_dim // 4 if vec4 else feature_dim
    if work >= 2048:
        return 512, vec4
    if work >= 256:
        return 256, vec4
    return 128, vec4


class TripletMarginCUDA(nn.Module):
    """Drop-in replacement for nn.TripletMarginLoss(p=2, reduction='mean') on [B, D] inputs."""

    def __init__(self, margin: float = 1.0, eps: float = 1e-6) -> None:
        super().__init__()
        self.margin = margin
        self.eps = eps

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        ext = _get_ext()
        aligned = all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (anchor, positive, negative))
        block, vec4 = _launch_config(anchor.size(1), aligned)
        return ext.triplet_margin_loss(anchor, positive, negative, self.margin, self.eps, block, vec4)


class ModelNew(nn.Module):
    """
    Triplet Margin Loss computed by a fused CUDA kernel (both distances in one pass).
    """

    def __init__(self, margin: float = 1.0) -> None:
        super(ModelNew, self).__init__()
        self.loss_fn = TripletMarginCUDA(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss_fn(anchor, positive, negative)


batch_size = 32768
input_shape = (8192,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    return [torch.rand(batch_size, *input_shape) * scale, torch.rand(batch_size, *input_shape),
            torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [1.0]  # Default margin
