"""`reduced-precision-dot`: a matrix product in TF32 is a flag with its line, and an output mismatch names it as the
likely cause with what to write instead (an H100 run rejected two model-style Triton answers whose `tl.dot` kept
Triton's TF32 default on fp32 problems, with only the error counts to go on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmosaic.contracts.verdict import Status, Verdict
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.job import Job, finish
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.static.analyze import analyze_candidate

# The static fixture of the rule (a tiled matmul, `acc += tl.dot(a, b)` on line 20), with the dot's arguments varied.
TRITON = (Path(__file__).resolve().parents[1] / "fixtures" / "static" / "reduced_precision_dot_triton_default.py"
          ).read_text().replace("tl.dot(a, b)", "tl.dot(a, b{dot_args})")
assert "{dot_args}" in TRITON

WMMA = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <mma.h>
using namespace nvcuda;

__global__ void mm_tf32(const float* a, const float* b, float* c, int n) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k = 0; k < n; k += 8) {
        wmma::load_matrix_sync(fa, a + k, n);
        wmma::load_matrix_sync(fb, b + k * n, n);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c, fc, n, wmma::mem_row_major);
}

torch::Tensor mm(torch::Tensor a, torch::Tensor b) {
    auto c = torch::empty({a.size(0), b.size(1)}, a.options());
    mm_tf32<<<1, 32>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), (int)a.size(1));
    return c;
}
"""

ext = load_inline(name="tf32_mm", cpp_sources="torch::Tensor mm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_src, functions=["mm"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.mm(a, b)
'''


def _flags(source: str) -> list:
    return [f for f in analyze_candidate(source, "cand.py") if f.rule == "reduced-precision-dot"]


@pytest.mark.parametrize("dot_args, flagged", [("", True), (', input_precision="tf32"', True),
                                               (', input_precision="ieee"', False), (", allow_tf32=False", False)])
def test_a_triton_dot_is_flagged_unless_it_asks_for_ieee_products(dot_args, flagged):
    found = _flags(TRITON.format(dot_args=dot_args))
    assert bool(found) == flagged, found
    if flagged:
        assert found[0].severity == "flag" and found[0].evidence.startswith("cand.py:20:"), found[0]
        assert 'input_precision="ieee"' in found[0].message


def test_tf32_fragments_in_a_cuda_source_are_flagged_at_their_candidate_lines():
    found = _flags(WMMA)
    assert [f.evidence.split(": ")[0] for f in found] == ["cand.py:11", "cand.py:12"], found


def _job(source: str, stop: Stop | None) -> Job:
    verdict = Verdict(accepted=False, status=Status.accepted, message="", problem_sha256="0" * 64)
    return Job(problem=Path("problem.py"), candidate=Path("cand.py"), candidate_src=source, config=VerifyConfig(),
               timing=False, sanitize=False, alternatives=[], alt_shas=[], verdict=verdict,
               findings=analyze_candidate(source, "cand.py"), stop=stop)


def test_an_output_mismatch_names_the_tf32_product_and_what_to_write_instead():
    wrong = "wrong result on trial 0 of 3: output 0: 1171 of 8388608 elements outside the error budget"
    verdict = finish(_job(TRITON.format(dot_args=""), Stop(Status.output_mismatch, wrong)))
    assert verdict.status == Status.output_mismatch
    assert verdict.message.startswith(wrong)
    assert "likely cause: `tl.dot` with Triton's default input precision" in verdict.message
    assert 'input_precision="ieee"' in verdict.message and "(cand.py:20)" in verdict.message
    honest = finish(_job(TRITON.format(dot_args=', input_precision="ieee"'), Stop(Status.output_mismatch, wrong)))
    assert honest.message == wrong  # nothing to blame: the message is the comparison's alone
    other = finish(_job(TRITON.format(dot_args=""), Stop(Status.runtime_error, "forward raised")))
    assert other.message == "forward raised"
