"""Inputs that hold NaN: whether forward wrote into them is a question about their bytes. `torch.equal` calls a
tensor with NaN unequal to itself, so both sides read every NaN input as written into: an honest reference was
recorded as working in place, which excused any candidate that did write into its inputs. Real extension, real
verifier."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from .kit import write

pytestmark = pytest.mark.slow

PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.nan_to_num(x, nan=0.0)


def get_inputs():
    x = torch.randn(4096)
    x[::7] = float("nan")  # readings with gaps, as a sensor problem gives them
    return [x]


def get_init_inputs():
    return []
'''

CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor zero_nans(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = std::isnan(src[i]) ? 0.0f : src[i];
    return y;
}

torch::Tensor zero_nans_in_place(torch::Tensor x) {  // writes over its input and hands it back
    float* p = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) if (std::isnan(p[i])) p[i] = 0.0f;
    return x;
}
"""


def _candidate(fn: str) -> str:
    return f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="km_nan_inputs", cpp_sources=r"""{CPP}""", functions=["zero_nans", "zero_nans_in_place"],
                  extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.{fn}(x)
'''


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    config = VerifyConfig(device="cpu", trials=3, timing=False, compile_baseline=False,
                          cache_dir=tmp_path_factory.mktemp("nan-inputs") / "cache")
    with Verifier(config) as v:
        yield v


def test_an_honest_kernel_on_nan_inputs_is_accepted(verifier, tmp_path):
    v = verifier.verify(write(tmp_path, "problem.py", PROBLEM), write(tmp_path, "honest.py", _candidate("zero_nans")),
                        policy="strict")
    assert v.accepted, v.message


def test_a_kernel_that_writes_into_its_nan_inputs_is_an_input_mutation(verifier, tmp_path):
    v = verifier.verify(write(tmp_path, "problem.py", PROBLEM),
                        write(tmp_path, "in_place.py", _candidate("zero_nans_in_place")), policy="strict")
    assert v.status == Status.integrity_violation, v.message
    assert "input-mutation" in {f.rule for f in v.findings}, v.findings
