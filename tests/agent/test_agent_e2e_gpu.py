"""A real episode on a CUDA GPU: a CUDA load_inline candidate, tested, benchmarked (with achieved bandwidth against
the measured device peaks), profiled and submitted."""

from __future__ import annotations

import asyncio

import pytest
import torch
from agent_kit import call, make_task

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.contracts.trajectory import ToolResultEvent
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.verifier_set import VerifierSet

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

CUDA_RELU = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x)
        y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="km_agent_gpu_relu", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["relu_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_forward(x)
'''


def test_cuda_episode_benchmarks_against_peaks_and_profiles(store, tmp_path):
    script = [call("write_candidate", source=CUDA_RELU), call("test"), call("benchmark"), call("profile"), call("submit")]
    config = GenerateConfig(tasks="inline", model="scripted:gpu", out_dir=tmp_path / "runs", agent=AgentConfig(device="cuda"))
    run_id = store.create_run("gpu", config.model, config.tasks, config)
    with VerifierSet(VerifyConfig(device="cuda", trials=3)) as verifiers:
        [info] = asyncio.run(run_tasks([make_task("gpu_relu")], store=store, verifier_for=verifiers,
                                       backend=ScriptedModel(script), run_id=run_id, config=config,
                                       peaks=verifiers.device_peaks))
    traj = store.load_trajectory(info.id)
    results = {e.name: e for e in traj.events if isinstance(e, ToolResultEvent)}
    assert results["test"].verdict.accepted, results["test"].content
    bench = results["benchmark"]
    assert bench.verdict.timing.timer == "cuda_events" and "speedup vs eager" in bench.content
    assert "GB/s" in bench.content and "% of" in bench.content, bench.content
    assert "relu_kernel" in results["profile"].content, results["profile"].content
    assert info.exit_reason == "submitted" and traj.totals.gpu_seconds > 0
    # On CUDA, submit() runs the final solution under compute-sanitizer: only then is it a verified solution.
    final = results["submit"].verdict
    assert final is not None and final.sanitizer.get("ran"), results["submit"].content
    assert info.solved and traj.best.verified and traj.best.verification.sanitized, traj.best.verification
