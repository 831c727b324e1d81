# corpus: problem=kb_l1_063_conv_standard_2d device=cuda expect=accepted policy=both
# style: TORCH_LIBRARY op called through torch.ops, direct conv with groups, stride, padding, dilation
# class: 1,6
import torch
import torch.nn as nn
from torch.nn.modules.utils import _pair
from torch.utils.cpp_extension import load_inline

conv_cpp_source = r"""
#include <torch/extension.h>
#include <torch/library.h>

torch::Tensor conv2d_direct_cuda(const torch::Tensor& x, const torch::Tensor& weight,
                                 const c10::optional<torch::Tensor>& bias,
                                 int64_t stride_h, int64_t stride_w,
                                 int64_t pad_h, int64_t pad_w,
                                 int64_t dil_h, int64_t dil_w, int64_t groups);

TORCH_LIBRARY(kb063_conv, m) {
    m.def("conv2d_direct(Tensor x, Tensor weight, Tensor? bias, int stride_h, int stride_w, "
          "int pad_h, int pad_w, int dil_h, int dil_w, int groups) -> Tensor");
}

TORCH_LIBRARY_IMPL(kb063_conv, CUDA, m) {
    m.impl("conv2d_direct", &conv2d_direct_cuda);
}
"""

conv_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

// grid.x = N * OC (one (image, out-channel) pair per block row), grid.y strides over output pixels.
// The filter of that out-channel is staged in dynamic shared memory when it fits.
__global__ void conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                     const float* __restrict__ bias, float* __restrict__ y,
                                     int C, int H, int W, int OC, int KH, int KW, int OH, int OW,
                                     int sh, int sw, int ph, int pw, int dh, int dw, int groups,
                                     bool stage_weights) {
    extern __shared__ float w_smem[];

    const int n = blockIdx.x / OC;
    const int oc = blockIdx.x % OC;
    const int ICg = C / groups;
    const int OCg = OC / groups;
    const int g = oc / OCg;
    const int wsize = ICg * KH * KW;

    const float* w_oc = w + (size_t)oc * wsize;
    if (stage_weights) {
        for (int i = threadIdx.x; i < wsize; i += blockDim.x) w_smem[i] = w_oc[i];
    }
    __syncthreads();
    const float* wk = stage_weights ? w_smem : w_oc;

    const float b = bias != nullptr ? bias[oc] : 0.0f;
    const float* x_n = x + ((size_t)n * C + (size_t)g * ICg) * H * W;
    float* y_n = y + ((size_t)n * OC + oc) * OH * OW;
    const int P = OH * OW;

    for (int p = blockIdx.y * blockDim.x + threadIdx.x; p < P; p += gridDim.y * blockDim.x) {
        const int oh = p / OW;
        const int ow = p - oh * OW;
        const int ih0 = oh * sh - ph;
        const int iw0 = ow * sw - pw;
        float acc = b;
        for (int ic = 0; ic < ICg; ++ic) {
            const float* xc = x_n + (size_t)ic * H * W;
            const float* wc = wk + ic * KH * KW;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = ih0 + kh * dh;
                if (ih < 0 || ih >= H) continue;
                #pragma unroll 4
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = iw0 + kw * dw;
                    if (iw < 0 || iw >= W) continue;
                    acc += __ldg(xc + (size_t)ih * W + iw) * wc[kh * KW + kw];
                }
            }
        }
        y_n[p] = acc;
    }
}

torch::Tensor conv2d_direct_cuda(const torch::Tensor& x, const torch::Tensor& weight,
                                 const c10::optional<torch::Tensor>& bias,
                                 int64_t stride_h, int64_t stride_w,
                                 int64_t pad_h, int64_t pad_w,
                                 int64_t dil_h, int64_t dil_w, int64_t groups) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "x and weight must be CUDA tensors");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "expected NCHW input and OIHW weight");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "only float32 is supported");
    const c10::cuda::CUDAGuard guard(x.device());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int OC = wc.size(0), KH = wc.size(2), KW = wc.size(3);
    TORCH_CHECK(groups > 0 && C % groups == 0 && OC % groups == 0, "bad groups");
    TORCH_CHECK(wc.size(1) == C / groups, "weight in-channels mismatch");

    const int OH = (H + 2 * pad_h - dil_h * (KH - 1) - 1) / stride_h + 1;
    const int OW = (W + 2 * pad_w - dil_w * (KW - 1) - 1) / stride_w + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output would be empty");
    auto y = torch::empty({N, OC, OH, OW}, xc.options());

    torch::Tensor bc;
    const float* bias_ptr = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        TORCH_CHECK(bc.numel() == OC, "bias size mismatch");
        bias_ptr = bc.data_ptr<float>();
    }
    if (N == 0 || OC == 0) return y;

    const int threads = 256;
    const int P = OH * OW;
    const int tiles = std::min((P + threads - 1) / threads, 65535);
    dim3 grid((unsigned)(N * OC), (unsigned)tiles);
    const size_t wbytes = (size_t)(C / groups) * KH * KW * sizeof(float);
    const bool stage = wbytes <= 48 * 1024;
    const size_t shmem = stage ? wbytes : 0;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    conv2d_direct_kernel<<<grid, threads, shmem, stream>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bias_ptr, y.data_ptr<float>(),
        C, H, W, OC, KH, KW, OH, OW,
        (int)stride_h, (int)stride_w, (int)pad_h, (int)pad_w, (int)dil_h, (int)dil_w, (int)groups,
        stage);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

# Registers torch.ops.kb063_conv.conv2d_direct (no Python bindings module)
load_inline(
    name="kb_l1_063_conv_standard_2d__torch_library",
    cpp_sources=conv_cpp_source,
    cuda_sources=conv_cuda_source,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    is_python_module=False,
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        # nn.Conv2d only holds the parameters (same init as the reference)
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)
        if isinstance(padding, str):
            raise NotImplementedError("string padding is not supported by the custom kernel")
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kb063_conv.conv2d_direct(
            x, self.conv2d.weight, self.conv2d.bias,
            self.stride[0], self.stride[1], self.padding[0], self.padding[1],
            self.dilation[0], self.dilation[1], self.groups)
