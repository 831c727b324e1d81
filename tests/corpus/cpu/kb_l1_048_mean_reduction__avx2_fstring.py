# corpus: problem=kb_l1_048_mean_reduction device=cpu expect=accepted policy=both
# style: AVX2 intrinsics with a scalar tail, f-string templated source, with_cuda=False
# class: 7
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Source is generated from a template: the scalar type and the number of
# 8-float AVX2 lanes processed per inner-loop step are parameters.
SCALAR_T = "float"
UNROLL = 4

mean_source = f"""
#include <torch/extension.h>
#include <immintrin.h>
#include <vector>

using scalar_t = {SCALAR_T};
constexpr int64_t kUnroll = {UNROLL};

// Horizontal sum of one __m256.
static inline float hsum256(__m256 v) {{
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    __m128 shuf = _mm_movehdup_ps(lo);
    __m128 sums = _mm_add_ps(lo, shuf);
    shuf = _mm_movehl_ps(shuf, sums);
    sums = _mm_add_ss(sums, shuf);
    return _mm_cvtss_f32(sums);
}}

// x viewed as [outer, R, inner]; result [outer, inner] = mean over R.
torch::Tensor mean_dim(torch::Tensor x, int64_t dim) {{
    TORCH_CHECK(x.device().is_cpu(), "mean_dim: CPU tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "mean_dim: float32 expected");
    TORCH_CHECK(x.dim() > 0, "mean_dim: need at least one dimension");
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "mean_dim: dim out of range");
    x = x.contiguous();

    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= x.size(i);
    for (int64_t i = dim + 1; i < nd; ++i) inner *= x.size(i);
    const int64_t R = x.size(dim);

    std::vector<int64_t> out_sizes;
    for (int64_t i = 0; i < nd; ++i) if (i != dim) out_sizes.push_back(x.size(i));
    auto out = torch::empty(out_sizes, x.options());

    const scalar_t* xp = x.data_ptr<scalar_t>();
    scalar_t* op = out.data_ptr<scalar_t>();
    const float inv = R > 0 ? 1.0f / static_cast<float>(R) : std::numeric_limits<float>::quiet_NaN();

    if (inner == 1) {{
        // contiguous reduction along the last axis
        #pragma omp parallel for schedule(static)
        for (int64_t o = 0; o < outer; ++o) {{
            const scalar_t* row = xp + o * R;
            __m256 acc = _mm256_setzero_ps();
            int64_t r = 0;
            for (; r + 8 <= R; r += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(row + r));
            float s = hsum256(acc);
            for (; r < R; ++r) s += row[r];   // scalar tail
            op[o] = s * inv;
        }}
        return out;
    }}

    // strided reduction: add R rows of length `inner` with vector adds
    const int64_t step = 8 * kUnroll;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {{
        for (int64_t jb = 0; jb < (inner + step - 1) / step; ++jb) {{
            const scalar_t* base = xp + o * R * inner;
            scalar_t* dst = op + o * inner;
            const int64_t j0 = jb * step;
            const int64_t j1 = std::min(inner, j0 + step);
            int64_t j = j0;
            if (j1 - j0 == step) {{
                __m256 acc[kUnroll];
                for (int u = 0; u < kUnroll; ++u) acc[u] = _mm256_setzero_ps();
                for (int64_t r = 0; r < R; ++r) {{
                    const scalar_t* src = base + r * inner + j0;
                    for (int u = 0; u < kUnroll; ++u)
                        acc[u] = _mm256_add_ps(acc[u], _mm256_loadu_ps(src + 8 * u));
                }}
                const __m256 vinv = _mm256_set1_ps(inv);
                for (int u = 0; u < kUnroll; ++u)
                    _mm256_storeu_ps(dst + j0 + 8 * u, _mm256_mul_ps(acc[u], vinv));
                j = j1;
            }} else {{
                for (; j + 8 <= j1; j += 8) {{
                    __m256 acc = _mm256_setzero_ps();
                    for (int64_t r = 0; r < R; ++r)
                        acc = _mm256_add_ps(acc, _mm256_loadu_ps(base + r * inner + j));
                    _mm256_storeu_ps(dst + j, _mm256_mul_ps(acc, _mm256_set1_ps(inv)));
                }}
                for (; j < j1; ++j) {{              // scalar tail
                    float s = 0.f;
                    for (int64_t r = 0; r < R; ++r) s += base[r * inner + j];
                    dst[j] = s * inv;
                }}
            }}
        }}
    }}
    return out;
}}
"""

mean_ext = load_inline(
    name="kb_l1_048_mean_reduction__avx2_fstring",
    cpp_sources=mean_source,
    functions=["mean_dim"],
    with_cuda=False,
    extra_cflags=["-O3", "-mavx2", "-mfma", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Mean over one dimension with an AVX2 C++ kernel."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_dim(x, self.dim)
