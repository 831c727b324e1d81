# corpus: problem=kb_l2_009_matmul_subtract_multiply_relu device=cpu expect=accepted policy=both
# style: the reference's nn.Linear kept, c10::optional bias, 4x4 register-blocked GEMM with omp collapse(2), in-place sub_mul_relu_ epilogue
# class: 8
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 1024
in_features = 8192
out_features = 8192
subtract_value = 2.0
multiply_value = 1.5

cpp_src = r"""
#include <torch/extension.h>
#include <c10/util/Optional.h>
#include <algorithm>

// 4x4 register block of dot products over a contiguous K.
static inline void dot_block_4x4(const float* __restrict__ x, const float* __restrict__ w,
                                 int64_t K, int64_t ldx, int64_t ldw,
                                 int rows, int cols, float out[4][4]) {
    float acc[4][4] = {{0}};
    const float* xr[4];
    const float* wr[4];
    for (int r = 0; r < 4; ++r) xr[r] = x + (r < rows ? r : 0) * ldx;
    for (int c = 0; c < 4; ++c) wr[c] = w + (c < cols ? c : 0) * ldw;
    constexpr int KB = 256;
    for (int64_t k0 = 0; k0 < K; k0 += KB) {
        const int64_t k1 = std::min<int64_t>(K, k0 + KB);
        float a00=0,a01=0,a02=0,a03=0,a10=0,a11=0,a12=0,a13=0,
              a20=0,a21=0,a22=0,a23=0,a30=0,a31=0,a32=0,a33=0;
        #pragma omp simd reduction(+:a00,a01,a02,a03,a10,a11,a12,a13,a20,a21,a22,a23,a30,a31,a32,a33)
        for (int64_t k = k0; k < k1; ++k) {
            const float x0 = xr[0][k], x1 = xr[1][k], x2 = xr[2][k], x3 = xr[3][k];
            const float w0 = wr[0][k], w1 = wr[1][k], w2 = wr[2][k], w3 = wr[3][k];
            a00 += x0*w0; a01 += x0*w1; a02 += x0*w2; a03 += x0*w3;
            a10 += x1*w0; a11 += x1*w1; a12 += x1*w2; a13 += x1*w3;
            a20 += x2*w0; a21 += x2*w1; a22 += x2*w2; a23 += x2*w3;
            a30 += x3*w0; a31 += x3*w1; a32 += x3*w2; a33 += x3*w3;
        }
        acc[0][0]+=a00; acc[0][1]+=a01; acc[0][2]+=a02; acc[0][3]+=a03;
        acc[1][0]+=a10; acc[1][1]+=a11; acc[1][2]+=a12; acc[1][3]+=a13;
        acc[2][0]+=a20; acc[2][1]+=a21; acc[2][2]+=a22; acc[2][3]+=a23;
        acc[3][0]+=a30; acc[3][1]+=a31; acc[3][2]+=a32; acc[3][3]+=a33;
    }
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) out[r][c] = acc[r][c];
}

// y = x @ W^T (+ bias)
torch::Tensor linear_forward(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias) {
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "linear_forward: 2-D x and weight expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "linear_forward: in_features mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat, "float32 only");
    x = x.contiguous();
    weight = weight.contiguous();
    const int64_t N = x.size(0), K = x.size(1), O = weight.size(0);
    auto y = torch::empty({N, O}, x.options());
    const float* px = x.data_ptr<float>();
    const float* pw = weight.data_ptr<float>();
    float* py = y.data_ptr<float>();
    const float* pb = nullptr;
    torch::Tensor b;
    if (bias.has_value() && bias->defined()) {
        b = bias->contiguous();
        TORCH_CHECK(b.numel() == O, "linear_forward: bias size mismatch");
        pb = b.data_ptr<float>();
    }
    const int64_t nrb = (N + 3) / 4, ncb = (O + 3) / 4;
    #pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (int64_t cb = 0; cb < ncb; ++cb) {
        for (int64_t rb = 0; rb < nrb; ++rb) {
            const int64_t r0 = rb * 4, c0 = cb * 4;
            const int rows = (int)std::min<int64_t>(4, N - r0);
            const int cols = (int)std::min<int64_t>(4, O - c0);
            float blk[4][4];
            dot_block_4x4(px + r0 * K, pw + c0 * K, K, K, K, rows, cols, blk);
            for (int r = 0; r < rows; ++r)
                for (int c = 0; c < cols; ++c)
                    py[(r0 + r) * O + c0 + c] = blk[r][c] + (pb ? pb[c0 + c] : 0.0f);
        }
    }
    return y;
}

// in place: y = relu((y - sub) * mul)
torch::Tensor sub_mul_relu_(torch::Tensor y, double sub, double mul) {
    TORCH_CHECK(y.is_contiguous(), "sub_mul_relu_: contiguous tensor expected");
    float* p = y.data_ptr<float>();
    const int64_t n = y.numel();
    const float s = (float)sub, m = (float)mul;
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float v = (p[i] - s) * m;
        p[i] = v > 0.0f ? v : 0.0f;
    }
    return y;
}
"""

fused_ops = load_inline(
    name="kb_l2_009_linear_epilogue",
    cpp_sources=cpp_src,
    functions=["linear_forward", "sub_mul_relu_"],
    extra_cflags=["-O3", "-march=native", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, subtract_value: float, multiply_value: float):
        super().__init__()
        # same parameter names and init as the reference nn.Linear
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = fused_ops.linear_forward(x, self.linear.weight, self.linear.bias)
        return fused_ops.sub_mul_relu_(y, self.subtract_value, self.multiply_value)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, subtract_value, multiply_value]
