# corpus: problem=kb_l1_022_tanh device=cuda expect=accepted policy=both
# style: heavily commented; templated block size; float4 path + tail; AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16); launch-grid helper; grid-stride
# class: 6
# Elementwise tanh as a custom CUDA kernel.
#
# Design notes
# ------------
# * The problem is purely memory bound (4096 x 393216 fp32 = 6.4 GB in, 6.4 GB out), so the kernel is a
#   grid-stride loop with 128-bit (float4) loads/stores for fp32, and a scalar grid-stride loop for the
#   other dtypes (fp64 / fp16 / bf16) and for any unaligned input.
# * We deliberately do NOT compile with --use_fast_math: fast-math may map tanhf to the tanh.approx
#   instruction whose relative error (~2^-11) is far outside an fp32 tolerance.  tanhf is accurate to 2 ulp.
# * Half / bfloat16 are computed in fp32 ("opmath") and rounded once on store.
# * The block size is a template parameter so the compiler can fold the index arithmetic; a small helper
#   picks a grid that covers the GPU a few times over instead of one thread per element.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 4096
dim = 393216

tanh_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/OpMathType.h>
#include <c10/cuda/CUDAGuard.h>

// ---------------------------------------------------------------------------------------------------
// Math helpers: precise tanh for float / double.
// ---------------------------------------------------------------------------------------------------
__device__ __forceinline__ float  tanh_op(float v)  { return tanhf(v); }
__device__ __forceinline__ double tanh_op(double v) { return tanh(v); }

// ---------------------------------------------------------------------------------------------------
// Generic grid-stride kernel (any floating dtype, computed in opmath precision).
// ---------------------------------------------------------------------------------------------------
template <typename scalar_t, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
tanh_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
    using opmath_t = at::opmath_type<scalar_t>;
    const int64_t stride = (int64_t)gridDim.x * BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        out[i] = static_cast<scalar_t>(tanh_op(static_cast<opmath_t>(in[i])));
    }
}

// ---------------------------------------------------------------------------------------------------
// Vectorised fp32 kernel: 4 elements per thread per iteration via float4.
// ---------------------------------------------------------------------------------------------------
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
tanh_kernel_vec4(const float4* __restrict__ in, float4* __restrict__ out, int64_t n_vec) {
    const int64_t stride = (int64_t)gridDim.x * BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x; i < n_vec; i += stride) {
        float4 v = __ldg(in + i);
        v.x = tanhf(v.x);
        v.y = tanhf(v.y);
        v.z = tanhf(v.z);
        v.w = tanhf(v.w);
        out[i] = v;
    }
}

// ---------------------------------------------------------------------------------------------------
// Launch configuration helper: enough blocks to fill every SM `waves` times, never more than needed.
// ---------------------------------------------------------------------------------------------------
static inline dim3 launch_grid(int64_t work_items, int block, int waves = 8) {
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t needed = (work_items + block - 1) / block;
    const int64_t cap = (int64_t)sms * waves * (2048 / block);
    return dim3((unsigned)std::max<int64_t>(1, std::min(needed, cap)));
}

torch::Tensor tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "tanh_forward: expected a CUDA tensor");
    TORCH_CHECK(at::isFloatingType(x.scalar_type()), "tanh_forward: expected a floating point tensor");
    c10::cuda::CUDAGuard device_guard(x.device());

    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) return output;

    constexpr int BLOCK = 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    const bool vec_ok = input.scalar_type() == at::kFloat
        && reinterpret_cast<uintptr_t>(input.data_ptr()) % 16 == 0
        && reinterpret_cast<uintptr_t>(output.data_ptr()) % 16 == 0;

    if (vec_ok) {
        const int64_t n_vec = n / 4;
        const int64_t tail = n - n_vec * 4;
        if (n_vec > 0) {
            tanh_kernel_vec4<BLOCK><<<launch_grid(n_vec, BLOCK), BLOCK, 0, stream>>>(
                reinterpret_cast<const float4*>(input.data_ptr<float>()),
                reinterpret_cast<float4*>(output.data_ptr<float>()), n_vec);
        }
        if (tail > 0) {  // at most 3 leftover elements
            tanh_kernel<float, BLOCK><<<1, BLOCK, 0, stream>>>(
                input.data_ptr<float>() + n_vec * 4, output.data_ptr<float>() + n_vec * 4, tail);
        }
    } else {
        AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, input.scalar_type(),
                                        "tanh_forward", [&] {
            tanh_kernel<scalar_t, BLOCK><<<launch_grid(n, BLOCK), BLOCK, 0, stream>>>(
                input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
        });
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return output;
}
"""

tanh_cpp_src = "torch::Tensor tanh_forward(torch::Tensor x);"

_tanh_ext = load_inline(
    name="custom_tanh_ext",
    cpp_sources=tanh_cpp_src,
    cuda_sources=tanh_cuda_src,
    functions=["tanh_forward"],
    extra_cuda_cflags=["-O3"],  # no --use_fast_math on purpose (see notes above)
    verbose=False,
)


class ModelNew(nn.Module):
    """Drop-in replacement for Model: y = tanh(x) computed by tanh_forward."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _tanh_ext.tanh_forward(x)
