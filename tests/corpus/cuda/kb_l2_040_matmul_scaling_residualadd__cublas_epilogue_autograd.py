# corpus: problem=kb_l2_040_matmul_scaling_residualadd device=cuda expect=accepted policy=kernelbench
# style: cublasSgemm through at::cuda::getCurrentCUDABlasHandle and -lcublas, in-place fused bias/scale/residual epilogue kernel, torch.autograd.Function with backward
# class: 3
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 128
in_features = 64
out_features = 128
scaling_factor = 0.5

# GEMM through cuBLAS (torch's per-stream handle), followed by one custom kernel
# that fuses bias add, the scaling and the residual add:  out = y * s + y, y = xW^T + b
cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublas_v2.h>

#define CUBLAS_CHECK(expr)                                                         \
    do {                                                                           \
        cublasStatus_t st__ = (expr);                                              \
        TORCH_CHECK(st__ == CUBLAS_STATUS_SUCCESS, "cuBLAS error ", (int)st__,     \
                    " at " #expr);                                                 \
    } while (0)

// in-place epilogue on the GEMM output (row-major [rows, cols])
__global__ void __launch_bounds__(256)
bias_scale_residual_kernel(float* __restrict__ y, const float* __restrict__ bias,
                           int64_t rows, int cols, float scale) {
    const int64_t total = rows * (int64_t)cols;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)(idx % cols);
        const float v = y[idx] + __ldg(bias + c);   // y = linear(x)
        const float original = v;                    // detached copy
        y[idx] = v * scale + original;               // x * s + original_x
    }
}

torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor weight,
                                    torch::Tensor bias, double scaling_factor) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
                bias.scalar_type() == at::kFloat, "float32 expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "2-D x and weight expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "in_features mismatch");
    const c10::cuda::CUDAGuard guard(x.device());

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int B = (int)xc.size(0);
    const int IN = (int)xc.size(1);
    const int OUT = (int)wc.size(0);
    auto out = torch::empty({B, OUT}, xc.options());
    if (B == 0 || OUT == 0) return out;

    // Row-major out[B, OUT] = x[B, IN] * W[OUT, IN]^T
    // Column-major view: out^T[OUT, B] = W^T(cm: IN x OUT)^T * x^T(cm: IN x B)
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    CUBLAS_CHECK(cublasSetStream(handle, stream));
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N,
                             OUT, B, IN,
                             &alpha,
                             wc.data_ptr<float>(), IN,
                             xc.data_ptr<float>(), IN,
                             &beta,
                             out.data_ptr<float>(), OUT));

    const int threads = 256;
    const int64_t total = (int64_t)B * OUT;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 65535);
    bias_scale_residual_kernel<<<blocks, threads, 0, stream>>>(
        out.data_ptr<float>(), bc.data_ptr<float>(), B, OUT, (float)scaling_factor);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = ("torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor weight, "
           "torch::Tensor bias, double scaling_factor);")

fused_ext = load_inline(
    name="cublas_scale_residual",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["linear_scale_residual"],
    extra_cuda_cflags=["-O3"],
    extra_ldflags=["-lcublas"],
    verbose=False,
)


class LinearScaleResidual(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, scaling_factor):
        ctx.save_for_backward(x, weight)
        ctx.scaling_factor = scaling_factor
        return fused_ext.linear_scale_residual(x, weight, bias, float(scaling_factor))

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        # d out / d y = s (the residual branch is detached)
        g = grad_out * ctx.scaling_factor
        return g @ weight, g.t() @ x, g.sum(0), None


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return LinearScaleResidual.apply(x, self.matmul.weight, self.matmul.bias, self.scaling_factor)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
