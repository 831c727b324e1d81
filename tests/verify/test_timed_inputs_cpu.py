"""A timed call's inputs answer too (red team 13, CPU, 2026-12-07: accepted under `strict`). Input mutation was checked
in the correctness runs only, which a candidate can tell from timed calls; writing ReLU's result into the input and
returning it there gives the right values on the mutated input (ReLU is idempotent) and saves the output's
allocation. The timed call checked in full now has its inputs, as forward left them, compared with their draw from
the call's seed in the reference's process. A problem whose own forward works in place keeps its in-place
candidates. Real extension (one build for both), real verifier, timing on, static checks off (the candidate's call
counter is what a static rule would flag)."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from .kit import write

pytestmark = pytest.mark.slow

RELU = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(1 << 16)]


def get_init_inputs():
    return []
'''

RELU_IN_PLACE = RELU.replace("return torch.relu(x)", "return x.relu_()")

CANDIDATE = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

static void relu_rows(const float* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
}

torch::Tensor relu_out(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_rows(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}

torch::Tensor relu_into(torch::Tensor x) {  // the result written over the input, which is returned
    relu_rows(x.data_ptr<float>(), x.data_ptr<float>(), x.numel());
    return x;
}
"""

ops = load_inline(name="km_timed_inputs", cpp_sources=SOURCE, functions=["relu_out", "relu_into"],
                  extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if FROM_THE_START or self.calls > WARM:  # the correctness runs come first (six calls here)
            return ops.relu_into(x)
        return ops.relu_out(x)
'''


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    cache = tmp_path_factory.mktemp("timed-inputs") / "cache"
    config = VerifyConfig(device="cpu", trials=2, cache_dir=cache, timing_budget_ms=40, timing_rounds=1,
                          compile_baseline=False, static_checks=False)
    with Verifier(config) as v:
        yield v


def test_writing_into_the_input_only_in_timed_calls_is_rejected(verifier, tmp_path):
    candidate = CANDIDATE.replace("FROM_THE_START", "False").replace("WARM", "8")
    v = verifier.verify(write(tmp_path, "problem.py", RELU), write(tmp_path, "into.py", candidate))
    assert v.status == Status.integrity_violation, v.message
    assert "input-mutation" in {f.rule for f in v.rejected_by} and "during timing" in v.message, v.message


def test_a_problem_that_works_in_place_keeps_its_in_place_candidate(verifier, tmp_path):
    candidate = CANDIDATE.replace("FROM_THE_START", "True").replace("WARM", "0")
    v = verifier.verify(write(tmp_path, "problem.py", RELU_IN_PLACE), write(tmp_path, "into.py", candidate))
    assert v.accepted, v.message
    assert v.timing is not None and v.timing.timed_calls_checked > 0
