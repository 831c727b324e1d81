"""Problems and candidates for the verifier tests, written as files; all CPU candidates share one C++ extension
source, so the whole suite pays for a single build (the build cache is keyed by content)."""

from __future__ import annotations

from pathlib import Path

PROBLEM_ADD_RELU = '''\
import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return []
'''

CPP = r'''
#include <torch/extension.h>
#include <cstdlib>
#include <cstring>
#include <new>

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ac.numel(); ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

torch::Tensor add_only(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) po[i] = pa[i] + pb[i];
    return out;
}

torch::Tensor half_written(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel() / 2; ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

torch::Tensor spin(torch::Tensor a, torch::Tensor b) {
    volatile uint64_t x = 0;
    while (true) { x = x + 1; }
    return a;
}

torch::Tensor segv(torch::Tensor a, torch::Tensor b) {
    volatile float* p = nullptr;
    p[12345] = 1.0f;
    return a;
}

torch::Tensor huge(torch::Tensor a, torch::Tensor b) {
    auto big = torch::empty({(int64_t)10 << 40}, torch::kUInt8);
    return a;
}
'''

FUNCTIONS = ["add_relu", "add_only", "half_written", "spin", "segv", "huge"]


def candidate(forward: str, *, cpp: str = CPP, functions: list[str] | None = None, extra: str = "") -> str:
    funcs = functions or FUNCTIONS
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{cpp}"""

ext = load_inline(name="km_test_ext", cpp_sources=CPP, functions={funcs!r}, extra_cflags=["-O2"])
{extra}

class ModelNew(nn.Module):
    def forward(self, a, b):
        {forward}
'''


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


_STATEFUL = """
    def __init__(self):
        super().__init__()
        self.calls = 0
"""


def stateful(body: str) -> str:
    """`candidate(body)` whose module counts its calls in `self.calls` (incremented before `body` runs)."""
    src = candidate("self.calls += 1\n        " + body)
    return src.replace("class ModelNew(nn.Module):\n", "class ModelNew(nn.Module):" + _STATEFUL + "\n")
