"""On a CUDA GPU: the race check runs by default (no `--sanitize`) on an accepted candidate that uses shared memory.

The candidates are written the way models write a row-sum: `load_inline` with `cpp_sources` + `cuda_sources`,
`functions=[...]`, `verbose=True`, `TORCH_CHECK`s, a `<<<grid, block>>>` launch and a shared-memory tree. The racy one
drops the `__syncthreads()` between the tree's steps: warps read partial sums other warps have not written yet,
which the plain trials often miss (warps run in step often enough) and racecheck sees whatever the values.
"""

from __future__ import annotations

import shutil

import pytest
import torch

from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

PROBLEM = """\
import torch
import torch.nn as nn

rows = 4096
cols = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
"""

CANDIDATE = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_sum_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define BLOCK_SIZE 256

__global__ void row_sum_kernel(const float* input, float* output, int num_cols) {
    __shared__ float sdata[BLOCK_SIZE];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int col = tid; col < num_cols; col += blockDim.x) {
        sum += input[row * num_cols + col];
    }
    sdata[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        BARRIER
    }
    if (tid == 0) {
        output[row] = sdata[0];
    }
}

torch::Tensor row_sum_cuda(torch::Tensor input) {
    TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(input.dim() == 2, "input must be 2D");
    auto x = input.contiguous();
    int num_rows = x.size(0);
    int num_cols = x.size(1);
    auto output = torch::empty({num_rows, 1}, x.options());
    row_sum_kernel<<<num_rows, BLOCK_SIZE>>>(x.data_ptr<float>(), output.data_ptr<float>(), num_cols);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "row_sum_kernel launch failed: ", cudaGetErrorString(err));
    return output;
}
"""

row_sum_cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor input);"

row_sum = load_inline(
    name="NAME",
    cpp_sources=row_sum_cpp_source,
    cuda_sources=row_sum_cuda_source,
    functions=["row_sum_cuda"],
    verbose=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.row_sum = row_sum

    def forward(self, x):
        return self.row_sum.row_sum_cuda(x)
'''
HONEST = CANDIDATE.replace("BARRIER", "__syncthreads();").replace("NAME", "row_sum_synced")
RACY = CANDIDATE.replace("BARRIER", "").replace("NAME", "row_sum_racy")


@pytest.fixture(scope="module")
def verifier(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=100, timing_rounds=2)
    assert config.race_check and not config.sanitize  # the defaults this file is about
    with Verifier(config) as v:
        yield v


def test_missing_syncthreads_is_rejected_without_sanitize(verifier, tmp_path):
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not installed")
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    racy = verifier.verify(problem, kit.write(tmp_path, "racy.py", RACY))
    print(f"racy row sum: {racy.status.value}: {racy.message}; sanitizer {racy.sanitizer}; {racy.phase_seconds}")
    assert not racy.accepted, racy.message
    if racy.status == Status.cuda_error:  # the trials passed it: the race check caught it
        assert racy.sanitizer["tools"] == ["racecheck", "synccheck"], racy.sanitizer
        assert "sanitizer-racecheck" in [f.rule for f in racy.rejected_by], racy.findings
        assert "__shared__" in racy.sanitizer["plan"]


def test_synced_reduction_passes_the_race_check_and_reports_it(verifier, tmp_path):
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not installed")
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    honest = verifier.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    print(f"synced row sum: {honest.message}; race check {honest.phase_seconds.get('sanitize')} s")
    assert honest.accepted, honest.message
    assert honest.sanitizer["ran"] and honest.sanitizer["tools"] == ["racecheck", "synccheck"], honest.sanitizer
    assert honest.sanitizer["racecheck"]["errors"] == 0 and honest.sanitizer["synccheck"]["errors"] == 0
    # the race check is not the full run a verified CUDA solution needs
    assert "not sanitized" in " ".join(check_candidate([honest]).reasons)


def test_race_check_off_is_said_in_the_verdict(build_cache, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    config = VerifyConfig(device="cuda", trials=2, cache_dir=build_cache, timing=False, race_check=False)
    with Verifier(config) as off:
        v = off.verify(problem, kit.write(tmp_path, "honest.py", HONEST))
    assert v.accepted and not v.sanitizer["ran"], v.message
    assert v.sanitizer["skipped"].startswith("race check skipped: verify.race_check is off")
