"""On a CUDA GPU (scripts/gpu/gpu-check): issue 11's items 1, 3, 6 and 8 and issue 18's GPU identity on the device
itself. A block-tree row reduction passes the error budget; stale, skipping and identity-cached candidates fail
with their rules; both times are reported; a clock slowed in native code is caught by the parent's clock."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import gpu_kit as gk
from . import harness_kit as hk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

TIMED_RULES = {"timed-output-check", "timed-output-fingerprint"}

ROW_SUM_CUDA = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// One block per row; each thread sums a strided slice, then a shared-memory tree: not torch's order.
__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    __shared__ float part[256];
    const float* row = x + blockIdx.x * n;
    float acc = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc += row[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

torch::Tensor row_sum(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty({xc.size(0)}, xc.options());
    row_sum_kernel<<<xc.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), out.data_ptr<float>(),
                                                                            xc.size(1));
    return out;
}
'''

ROW_SUM_CANDIDATE = f'''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="km_gpu_row_sum", cpp_sources="torch::Tensor row_sum(torch::Tensor x);",
                  cuda_sources=r"""{ROW_SUM_CUDA}""", functions=["row_sum"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.row_sum(x)
'''


@pytest.fixture(scope="module")
def unguarded(build_cache):
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=100, timing_rounds=2,
                          static_checks=False, compile_baseline=False)
    with Verifier(config) as v:
        yield v


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu-call-problems")
    (d / "add.py").write_text(gk.PROBLEM_ADD_RELU)
    (d / "rowsum.py").write_text(hk.PROBLEM_ROW_SUM.replace("rows, n = 256, 4096", "rows, n = 1024, 4096"))
    return d


def _stateful(body: str, init: str = "") -> str:
    src = gk.cuda_candidate("self._fwd(a, b)")
    head = ("\n    def __init__(self):\n        super().__init__()\n        self.calls = 0\n        self.last = None\n"
            f"{init}\n    def _fwd(self, a, b):\n        self.calls += 1\n        {body}\n")
    return src.replace("class ModelNew(nn.Module):\n", "class ModelNew(nn.Module):" + head)


def test_block_tree_row_sum_passes_the_budget_on_every_trial(build_cache, problems, tmp_path):
    for seed in (1, 2, 3):
        config = VerifyConfig(device="cuda", trials=6, seed=seed, cache_dir=build_cache, timing=False)
        with Verifier(config) as v:
            verdict = v.verify(problems / "rowsum.py", kit.write(tmp_path, "row_sum.py", ROW_SUM_CANDIDATE))
        assert verdict.accepted and verdict.correctness.passed == 6, verdict.message


def test_both_times_and_the_judging_gpu_are_reported(unguarded, problems, tmp_path):
    v = unguarded.verify(problems / "add.py", kit.write(tmp_path, "ok.py", gk.cuda_candidate("ext.add_relu(a, b)")))
    assert v.accepted, v.message
    t = v.timing
    assert t.candidate_host is not None and t.eager_host is not None and t.speedup_vs_eager_host > 0
    assert t.candidate_host.median_ms >= 0.5 * t.candidate.median_ms  # host-inclusive holds the device time too
    assert t.timed_calls_checked >= 2 * 2 and t.clock_ratio > 0
    assert v.env.gpu_index == "0" and v.env.gpu_uuid.startswith("GPU-") and v.env.gpu_name == v.env.device_name


@pytest.mark.parametrize("n", [3, 30, 200])
def test_stale_after_n_calls_is_rejected_on_cuda(unguarded, problems, tmp_path, n):
    body = (f"if self.calls > {n} and self.last is not None:\n            return self.last\n"
            "        self.last = ext.add_relu(a, b)\n        return self.last")
    v = unguarded.verify(problems / "add.py", kit.write(tmp_path, f"stale_{n}.py", _stateful(body)))
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"


def test_stale_when_the_calls_come_back_to_back_is_rejected_on_cuda(unguarded, problems, tmp_path):
    """The burst's calls come microseconds apart (no flush, sync or lead between them); a candidate that answers those
    with its last output must still be rejected (by the bursts' last-call check, or earlier if a timed call's gap
    was that short too). The threshold is tuned to this harness as a cheat would tune it: between two burst calls
    the worker picks the next inputs and projects the last output (tens of microseconds); at 20 us this candidate
    never answered stale here and was accepted, its every call computed and timed (H100, 2026-12-05)."""
    body = ("gap = time.perf_counter() - self.returned\n"
            "        self.stale = self.calls > 12 and (gap < 3e-4 or (self.stale and gap < 1e-3))\n"
            "        if not self.stale:\n            self.last = ext.add_relu(a, b)\n"
            "        self.returned = time.perf_counter()\n        return self.last")
    source = "import time\n" + _stateful(body, "        self.returned = 0.0\n        self.stale = False\n")
    v = unguarded.verify(problems / "add.py", kit.write(tmp_path, "stale_in_burst.py", source))
    assert v.status == Status.output_mismatch, f"{v.status}: {v.message}"
    assert (TIMED_RULES | {"burst-output-fingerprint"}) & {f.rule for f in v.findings}, v.findings


def test_skipping_a_fifth_of_the_calls_is_rejected_on_cuda(unguarded, problems, tmp_path):
    body = ("if self.calls > 8 and self.calls % 5 == 0:\n            return self.last\n"
            "        self.last = ext.add_relu(a, b)\n        return self.last")
    v = unguarded.verify(problems / "add.py", kit.write(tmp_path, "skips.py", _stateful(body)))
    assert v.status == Status.output_mismatch and TIMED_RULES & {f.rule for f in v.findings}, v.message


def test_a_cache_keyed_on_buffer_identity_is_rejected_on_cuda(unguarded, problems, tmp_path):
    body = ("key = (a.data_ptr(), b.data_ptr(), tuple(a.shape), a._version, b._version)\n"
            "        if key not in self.cache:\n            self.cache[key] = ext.add_relu(a, b)\n"
            "        return self.cache[key]")
    v = unguarded.verify(problems / "add.py", kit.write(tmp_path, "cache.py", _stateful(body, "        self.cache = {}")))
    assert v.status == Status.output_mismatch and "stale-buffer-check" in {f.rule for f in v.findings}, v.message


@pytest.mark.parametrize("watch", [True, False])
def test_a_clock_slowed_in_native_code_is_caught_on_cuda(unguarded, problems, tmp_path, watch):
    """The memory watch sees `time.perf_counter`'s method-table entry swapped (the H100, 2026-12-07); with the watch
    off, the parent's clock still sees the burst last ten times what the worker reports."""
    prelude = (f'clock = load_inline(name="km_harness_ext", cpp_sources=r"""{hk.CPP}""", '
               f'functions={hk.FUNCTIONS!r}, extra_cflags=["-O2"])\nclock.slow_native_clock(10.0)\n')
    candidate = kit.write(tmp_path, "clock.py", gk.cuda_candidate("ext.add_relu(a, b)", prelude=prelude))
    if watch:
        v = unguarded.verify(problems / "add.py", candidate)
        assert v.status == Status.integrity_violation and "time.perf_counter" in v.message, v.message
        return
    config = unguarded.config.model_copy(update={"memory_watch": False})
    with Verifier(config) as unwatched:
        v = unwatched.verify(problems / "add.py", candidate)
    assert v.status == Status.timing_anomaly and "timing-wall-clock" in {f.rule for f in v.findings}, v.message


def _event_lie(factor: float) -> str:
    """The tiled matmul, honest in its results, beside host code that cuts every event time `factor` times through
    the GOT slots of `cudaEventElapsedTime`, and a forward that answers back-to-back calls from a memo keyed on its
    input buffers (the burst's calls come microseconds apart)."""
    prelude = (f'import time\nlie = load_inline(name="km_event_lie", cpp_sources=r"""{hk.event_lie_cpp(factor)}""", '
               'functions=["lie_about_events"], extra_cflags=["-O2"])\n'
               + (f'PATCHED = lie.lie_about_events({factor})\n' if factor != 1.0 else ""))
    src = gk.matmul_candidate("self._fwd(a, b)", prelude=prelude)
    head = ("\n    def __init__(self):\n        super().__init__()\n        self.memo = {}\n        self.returned = 0.0\n"
            "\n    def _fwd(self, a, b):\n"
            "        key = (a.data_ptr(), b.data_ptr())\n"
            "        if time.perf_counter() - self.returned < 2e-4 and key in self.memo:\n"
            "            out = self.memo[key]\n"
            "        else:\n"
            "            out = ext.matmul(a, b)\n"
            "            self.memo[key] = out\n"
            "            while len(self.memo) > 8:\n"
            "                self.memo.pop(next(iter(self.memo)))\n"
            "        self.returned = time.perf_counter()\n"
            "        return out\n")
    return src.replace("class ModelNew(nn.Module):\n", "class ModelNew(nn.Module):" + head)


def test_event_times_cut_through_the_got_with_a_memoised_burst_are_caught_on_cuda(unguarded, tmp_path):
    """Issue 36 (the review's H200 case): the honest tiled matmul (0.55x eager) with every event time cut 6x through
    the GOT and back-to-back calls answered from a memo of its input buffers was accepted at 3.29x eager, because the
    burst's calls cycled four input sets. Each burst call now has inputs of its own, so the burst costs what the calls
    cost and the parent's clock shows the lie. The rewritten slots themselves are now read from outside the worker
    (`got_watch.py`): an integrity violation naming `cudaEventElapsedTime`, before any timing. The same code with its
    event times left alone is accepted."""
    problem = kit.write(tmp_path, "matmul.py", gk.PROBLEM_MATMUL)
    v = unguarded.verify(problem, kit.write(tmp_path, "event_lie.py", _event_lie(6.0)))
    assert v.status == Status.integrity_violation, f"{v.status}: {v.message}"
    assert "harness-got" in {f.rule for f in v.findings} and "cudaEventElapsedTime" in v.message, v.findings
    honest = unguarded.verify(problem, kit.write(tmp_path, "event_honest.py", _event_lie(1.0)))
    assert honest.accepted, honest.message
    assert honest.timing.burst_inputs_distinct is True
