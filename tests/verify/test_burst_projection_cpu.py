"""Every call of the wall-clock burst answers for its whole result, whatever the result holds (red team 13, CPU,
2026-12-07: both were accepted under `strict` with the parent's clock forged, 25x and 8x on back-to-back calls).

- **NaN in the reference's output.** A plain projection of an output that holds one NaN is NaN, so where the
  reference's output holds NaN the burst check could only ask for a non-finite projection: a call that wrote one
  NaN and skipped the rest passed. Such bursts are now projected split (the finite part, and the NaN/+inf/-inf
  counts, which must be the reference's exactly).
- **Complex outputs.** The burst skipped them, and the timed calls' fingerprints cast them to float64, which keeps
  the real part: an imaginary part left unwritten passed both. Both parts are projected now (`view_as_real`).

- **More than 16 outputs.** A burst row held the first 16 outputs' projections and nothing of the rest, so a call
  could skip every output after the 16th. The last column now sums the projections of the outputs from its own on.

The cheats tell the burst's calls from the rest the way a model would: its inputs are windows of a buffer larger
than the view. Real extension (one build for all four candidates), real verifier, timing on."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from .kit import write

pytestmark = pytest.mark.slow

SQRT = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


def get_inputs():
    return [torch.randn(1 << 15)]


def get_init_inputs():
    return []
'''

CSQUARE = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, re, im):
        z = torch.complex(re, im)
        return z * z


def get_inputs():
    return [torch.randn(1 << 15), torch.randn(1 << 15)]


def get_init_inputs():
    return []
'''

MANY = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return tuple(x * float(k + 1) + float(k) for k in range(20))


def get_inputs():
    return [torch.randn(1 << 12)]


def get_init_inputs():
    return []
'''

CPP = r"""
#include <torch/extension.h>
#include <cmath>

static bool in_a_window(const torch::Tensor& x) {  // a view into a larger buffer: the back-to-back loop's inputs
    return x.storage().nbytes() > static_cast<size_t>(x.numel()) * x.element_size();
}

torch::Tensor elementwise_sqrt(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = std::sqrt(src[i]);
    return y;
}

torch::Tensor elementwise_sqrt_fast(torch::Tensor x) {
    if (!in_a_window(x)) return elementwise_sqrt(x);
    auto y = torch::empty_like(x);
    y.data_ptr<float>()[0] = NAN;  // the reference's output holds NaN: one is enough to look like it
    return y;
}

torch::Tensor complex_square(torch::Tensor re, torch::Tensor im, bool skip_imag) {
    auto r = re.contiguous(), i = im.contiguous();
    auto out = torch::empty({r.numel(), 2}, r.options());
    const float* pr = r.data_ptr<float>();
    const float* pi = i.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t k = 0; k < r.numel(); ++k) {
        o[2 * k] = pr[k] * pr[k] - pi[k] * pi[k];
        if (!skip_imag) o[2 * k + 1] = 2.0f * pr[k] * pi[k];
    }
    return torch::view_as_complex(out).view(re.sizes());
}

std::vector<torch::Tensor> affine_copies(torch::Tensor x, bool skip_tail) {
    auto xc = x.contiguous();
    const float* src = xc.data_ptr<float>();
    std::vector<torch::Tensor> outs;
    for (int k = 0; k < 20; ++k) {
        auto y = torch::zeros_like(xc);
        if (skip_tail && k >= 17) { outs.push_back(y); continue; }  // outputs 18-20 left zero
        float* dst = y.data_ptr<float>();
        for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] * float(k + 1) + float(k);
        outs.push_back(y);
    }
    return outs;
}

std::vector<torch::Tensor> twenty(torch::Tensor x) { return affine_copies(x, false); }
std::vector<torch::Tensor> twenty_fast(torch::Tensor x) { return affine_copies(x, in_a_window(x)); }

torch::Tensor csquare(torch::Tensor re, torch::Tensor im) { return complex_square(re, im, false); }
torch::Tensor csquare_fast(torch::Tensor re, torch::Tensor im) { return complex_square(re, im, in_a_window(re)); }
"""


def _candidate(forward: str, args: str) -> str:
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""{CPP}"""

ops = load_inline(name="km_burst_projection", cpp_sources=SOURCE, extra_cflags=["-O2"],
                  functions=["elementwise_sqrt", "elementwise_sqrt_fast", "csquare", "csquare_fast", "twenty",
                             "twenty_fast"])


class ModelNew(nn.Module):
    def forward(self, {args}):
        out = ops.{forward}({args})
        return tuple(out) if isinstance(out, list) else out
'''


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    cache = tmp_path_factory.mktemp("burst-projection") / "cache"
    config = VerifyConfig(device="cpu", trials=2, cache_dir=cache, timing_budget_ms=40, timing_rounds=1,
                          compile_baseline=False)
    with Verifier(config) as v:
        yield v


@pytest.mark.parametrize(("problem", "forward", "args", "honest"), [
    (SQRT, "elementwise_sqrt", "x", True),
    (SQRT, "elementwise_sqrt_fast", "x", False),
    (CSQUARE, "csquare", "re, im", True),
    (CSQUARE, "csquare_fast", "re, im", False),
    (MANY, "twenty", "x", True),
    (MANY, "twenty_fast", "x", False),
])
def test_every_burst_call_answers_for_its_whole_result(verifier, tmp_path, problem, forward, args, honest):
    v = verifier.verify(write(tmp_path, "problem.py", problem), write(tmp_path, f"{forward}.py", _candidate(forward, args)),
                        policy="strict")
    if honest:
        assert v.accepted, v.message
        assert v.timing is not None and v.timing.timed_calls_checked > 0
    else:
        assert v.status == Status.output_mismatch, v.message
        assert "burst-output-fingerprint" in {f.rule for f in v.findings}, v.findings
