"""Real C++ candidates for the end-to-end episode on CPU. All working candidates share ONE extension source (they
differ only in which function `forward` calls), so the verifier's content-keyed build cache builds it once."""

from __future__ import annotations

from cpp_kit import candidate as cpp_candidate
from cpp_kit import problem

PROBLEM = problem("torch.relu(x)", n=4096)

CPP = r"""
torch::Tensor relu_basic(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
    return out;
}

torch::Tensor relu_wrong(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] < 0.f ? -src[i] : src[i];
    return out;
}

torch::Tensor relu_unrolled(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = xc.numel(), body = n - n % 4;
    for (int64_t i = 0; i < body; i += 4) {
        dst[i] = src[i] > 0.f ? src[i] : 0.f;
        dst[i + 1] = src[i + 1] > 0.f ? src[i + 1] : 0.f;
        dst[i + 2] = src[i + 2] > 0.f ? src[i + 2] : 0.f;
        dst[i + 3] = src[i + 3] > 0.f ? src[i + 3] : 0.f;
    }
    for (int64_t i = body; i < n; ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
    return out;
}
"""

BROKEN_CPP = r"""
torch::Tensor relu_basic(torch::Tensor x) {
    auto out = torch::empty_like(x);
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
    return out;
}
"""


def candidate(function: str, cpp: str = CPP, functions: tuple[str, ...] = ("relu_basic", "relu_wrong", "relu_unrolled")) -> str:
    return cpp_candidate("km_agent_e2e_relu", cpp, functions, f"{function}(x)")


BROKEN = candidate("relu_basic", cpp=BROKEN_CPP, functions=("relu_basic",))
WRONG = candidate("relu_wrong")
GOOD = candidate("relu_basic")
FAST = candidate("relu_unrolled")


def _stale_after(calls: int, cpp: str = CPP) -> str:
    """GOOD for its first `calls` calls, then it answers every call with its last output."""
    return candidate("relu_basic", cpp).replace('''    def forward(self, x):
        return ext.relu_basic(x)
''', f'''    def forward(self, x):
        self._calls = getattr(self, "_calls", 0) + 1
        if self._calls <= {calls}:
            self._last = ext.relu_basic(x)
        return self._last
''')


STALE = _stale_after(9)
"""Stale from the first call after the correctness phase: test() at trials=3 makes 9 calls (counted 2026-12-02) and
passes it; benchmark() repeats those 9 and then times it, so every timed call is stale at any machine speed. (At 40,
a slow machine's quick profile once ended its timed calls first and left only the wall-clock burst stale, which
nothing checked then: CI, 2026-12-02.)"""
