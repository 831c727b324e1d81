# corpus: problem=kb_l3_008_resnet_basic_block device=cuda expect=accepted policy=kernelbench
# style: self alias of an in-place residual kernel
# class: 1,6
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

res_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_INPUT(x) TORCH_CHECK((x).is_cuda(), #x " must be CUDA"); TORCH_CHECK((x).is_contiguous(), #x " must be contiguous")

__global__ void add_relu_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaxf(a[i] + b[i], 0.0f);
}

static void launch(const float* a, const float* b, float* out, int64_t n) {
    if (n == 0) return;
    add_relu_kernel<<<(unsigned int)((n + 255) / 256), 256>>>(a, b, out, n);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "add_relu_kernel: ", cudaGetErrorString(err));
}

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    CHECK_INPUT(a);
    CHECK_INPUT(b);
    TORCH_CHECK(a.sizes() == b.sizes(), "same shapes expected");
    auto out = torch::empty_like(a);
    launch(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), a.numel());
    return out;
}

// out = relu(a + b) written over a.
torch::Tensor add_relu_(torch::Tensor a, torch::Tensor b) {
    CHECK_INPUT(a);
    CHECK_INPUT(b);
    TORCH_CHECK(a.sizes() == b.sizes(), "same shapes expected");
    launch(a.data_ptr<float>(), b.data_ptr<float>(), a.data_ptr<float>(), a.numel());
    return a;
}
"""

res_cpp_source = """
torch::Tensor add_relu(torch::Tensor a, torch::Tensor b);
torch::Tensor add_relu_(torch::Tensor a, torch::Tensor b);
"""

res = load_inline(
    name="residual_add_relu_ext",
    cpp_sources=res_cpp_source,
    cuda_sources=res_cuda_source,
    functions=['add_relu', 'add_relu_'],
    verbose=True,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)

class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, 1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )
        self.stride = stride

        self.add_relu_ = res.add_relu_

    def forward(self, x):
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out)).contiguous()
        return self.add_relu_(out, identity.contiguous())
