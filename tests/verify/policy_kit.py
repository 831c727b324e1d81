"""A small digit classifier (conv -> ReLU -> linear -> log-softmax) and partial-replacement candidates for it:
a custom C++ conv whose output is used, discarded, or multiplied by zero. One extension source for all of them,
so the suite builds it once."""

from __future__ import annotations

PROBLEM_DIGITS = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
side = 12
classes = 10


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * (side - 2) * (side - 2), classes)

    def forward(self, x):
        h = F.relu(self.conv(x))
        return F.log_softmax(self.fc(h.flatten(1)), dim=1)


def get_inputs():
    return [torch.randn(batch_size, 1, side, side)]


def get_init_inputs():
    return [classes]
'''

CPP = r'''
#include <torch/extension.h>

torch::Tensor conv3x3(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto xc = x.contiguous(); auto wc = w.contiguous(); auto bc = b.contiguous();
    int64_t n = xc.size(0), c = xc.size(1), h = xc.size(2), wd = xc.size(3), k = wc.size(0);
    auto out = torch::empty({n, k, h - 2, wd - 2}, xc.options());
    const float* px = xc.data_ptr<float>(); const float* pw = wc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>(); float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) for (int64_t o = 0; o < k; ++o)
      for (int64_t y = 0; y < h - 2; ++y) for (int64_t z = 0; z < wd - 2; ++z) {
        float acc = pb[o];
        for (int64_t ci = 0; ci < c; ++ci) for (int64_t dy = 0; dy < 3; ++dy) for (int64_t dz = 0; dz < 3; ++dz)
          acc += px[((i * c + ci) * h + y + dy) * wd + z + dz] * pw[((o * c + ci) * 3 + dy) * 3 + dz];
        po[((i * k + o) * (h - 2) + y) * (wd - 2) + z] = acc;
      }
    return out;
}

// A conv that only works for 12x12 single-channel images: the sizes are baked in.
torch::Tensor conv3x3_fixed(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto out = torch::empty({4, 4, 10, 10}, x.options());
    const float* px = x.data_ptr<float>(); const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>(); float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < 4; ++i) for (int64_t o = 0; o < 4; ++o)
      for (int64_t y = 0; y < 10; ++y) for (int64_t z = 0; z < 10; ++z) {
        float acc = pb[o];
        for (int64_t dy = 0; dy < 3; ++dy) for (int64_t dz = 0; dz < 3; ++dz)
          acc += px[(i * 12 + y + dy) * 12 + z + dz] * pw[(o * 3 + dy) * 3 + dz];
        po[((i * 4 + o) * 10 + y) * 10 + z] = acc;
      }
    return out;
}

torch::Tensor scale(torch::Tensor x) {
    auto xc = x.contiguous(); auto out = torch::empty_like(xc);
    const float* p = xc.data_ptr<float>(); float* q = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) q[i] = 2.f * p[i];
    return out;
}

torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous(); auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>(); const float* pb = bc.data_ptr<float>(); float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ac.numel(); ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

// add+relu written for exactly 4096 elements: the output size is baked in.
torch::Tensor add_relu_4096(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty({4096}, a.options());
    const float* pa = a.data_ptr<float>(); const float* pb = b.data_ptr<float>(); float* po = out.data_ptr<float>();
    int64_t n = a.numel();
    for (int64_t i = 0; i < 4096; ++i) { float v = i < n ? pa[i] + pb[i] : 0.f; po[i] = v > 0.f ? v : 0.f; }
    return out;
}

'''


FUNCTIONS = ["conv3x3", "conv3x3_fixed", "scale", "add_relu", "add_relu_4096"]

# A conv behind a pybind11 class: its method calls are not among the doors the worker watches. The static rules
# reject pybind11 classes outright (`dynamic-code`); this one is for the run-time check with static analysis off.
CPP_CLASS = r'''
#include <torch/extension.h>
struct Conv {
    torch::Tensor w, b;
    Conv(torch::Tensor w_, torch::Tensor b_) : w(w_), b(b_) {}
    torch::Tensor run(torch::Tensor x) { return at::relu(at::conv2d(x, w, b)); }
};
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    pybind11::class_<Conv>(m, "Conv").def(pybind11::init<torch::Tensor, torch::Tensor>()).def("run", &Conv::run);
}
'''


def candidate(forward: str) -> str:
    """A ModelNew with the reference's layers (so the weights copy over) and `forward` as its body."""
    return f'''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CPP = r"""{CPP}"""
FUNCTIONS = {FUNCTIONS!r}

ext = load_inline(name="km_digits_ext", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 10 * 10, classes)

    def forward(self, x):
        {forward}
'''


HEAD = "w, b = self.conv.weight, self.conv.bias\n        "
USED = candidate(HEAD + "h = F.relu(ext.conv3x3(x, w, b))\n        return F.log_softmax(self.fc(h.flatten(1)), dim=1)")
DISCARDED = candidate(HEAD + "unused = ext.conv3x3(x, w, b)\n        h = F.relu(self.conv(x))\n"
                      "        return F.log_softmax(self.fc(h.flatten(1)), dim=1)")
TIMES_ZERO = candidate(HEAD + "y = ext.conv3x3(x, w, b)\n        h = F.relu(self.conv(x) + 0.0 * y)\n"
                       "        return F.log_softmax(self.fc(h.flatten(1)), dim=1)")
DECOY = candidate(HEAD + "d = ext.scale(x)\n        h = F.relu(ext.conv3x3(x, w, b) + 0.0 * d.sum())\n"
                  "        return F.log_softmax(self.fc(h.flatten(1)), dim=1)")
UNOBSERVED = candidate(HEAD + "h = cls_ext.Conv(w, b).run(x)\n"
                       "        return F.log_softmax(self.fc(h.flatten(1)), dim=1)").replace(
    "\n\nclass ModelNew", f"\nCPP_CLASS = r\"\"\"{CPP_CLASS}\"\"\"\n"
    "cls_ext = load_inline(name=\"km_digits_cls\", cpp_sources=CPP_CLASS)\n\n\nclass ModelNew")
FIXED_SIZES = candidate(HEAD + "h = F.relu(ext.conv3x3_fixed(x, w, b))\n"
                        "        return F.log_softmax(self.fc(h.flatten(1)), dim=1)")


def add_relu_candidate(function: str) -> str:
    """An all-custom candidate for the suite's add+relu problem (tests/verify/kit.py), through this extension."""
    return candidate(f"return ext.{function}(x, b)").replace("def forward(self, x):", "def forward(self, x, b):")
