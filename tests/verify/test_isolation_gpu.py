"""On a CUDA GPU: a CUDA candidate judged with the GPU isolation layers on (network namespace where this process may
make one, Landlock, subreaper, a non-dumpable reference) is accepted, and its processes cannot connect out.

The layers must not break CUDA: device nodes, /dev/shm and CUDA IPC between the reference and candidate workers
(no user or PID namespace on CUDA, `verify/isolation.py` says why)."""

from __future__ import annotations

import socket

import pytest
import torch

from kernelmosaic.contracts.isolation import missing
from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.isolation import plan_for

from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

PROBE = '''
import socket as _s
try:
    _s.create_connection(("127.0.0.1", {port}), timeout=2).close()
    print("connect: connected", flush=True)
except OSError as e:
    print(f"connect: failed {{type(e).__name__}}", flush=True)
'''


def test_cuda_candidate_is_accepted_inside_the_gpu_layers(build_cache, tmp_path):
    plan = plan_for("cuda")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    problem = kit.write(tmp_path, "add.py", gk.PROBLEM_ADD_RELU)
    cand = kit.write(tmp_path, "ok.py", gk.cuda_candidate("ext.add_relu(a, b)",
                                                          prelude=PROBE.format(port=listener.getsockname()[1])))
    config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=100, timing_rounds=2,
                          static_checks=False)
    with Verifier(config) as verifier:
        verdict = verifier.verify(problem, cand)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    assert verdict.accepted, (verdict.status, verdict.message, verdict.candidate_output_tail[-2000:])
    assert "connect: connected" not in verdict.compile.log + verdict.candidate_output_tail
    layers = set(verdict.env.isolation)
    assert ("landlock-fs" in layers) == plan.landlock
    assert ("netns" in layers) == ("netns" in plan.namespaces)
    assert "userns" not in layers and "pidns" not in layers  # kept off CUDA workers
    assert not missing(verdict.env.isolation) or plan.unavailable, verdict.env.isolation


SELF_MEM = '''
import os as _o, threading as _th
for _path in (f"/proc/self/task/{_th.get_native_id()}/mem", "/proc/thread-self/mem"):
    try:
        _o.close(_o.open(_path, _o.O_RDWR))
        print(f"selfmem: opened {_path}", flush=True)
    except OSError as e:
        print(f"selfmem: refused {_path} {type(e).__name__}", flush=True)
'''


def test_the_opt_in_task_layer_keeps_cuda_working_and_its_memory_file_closed(build_cache, tmp_path, monkeypatch):
    """`landlock-tasks` (not on by default): once CUDA has started, a second Landlock layer takes the worker's own
    /proc/self/task back, and with it `/proc/self/task/TID/mem`, which would let candidate code patch the worker's
    clock code ignoring page protections. What this decides: whether CUDA keeps working under it (IPC from the
    reference, allocations, kernels, the timer's events) so that it can become a default layer."""
    layers = ",".join(["netns", "landlock-fs", "landlock-net", "landlock-scope", "subreaper", "no-capabilities",
                       "reference-nondumpable", "landlock-tasks"])
    monkeypatch.setenv("KERNELMOSAIC_ISOLATION_CUDA", layers)
    plan_for.cache_clear()
    try:
        if not plan_for("cuda").seal_tasks:
            pytest.skip("no Landlock here")
        problem = kit.write(tmp_path, "add.py", gk.PROBLEM_ADD_RELU)
        cand = kit.write(tmp_path, "ok.py", gk.cuda_candidate("ext.add_relu(a, b)", prelude=SELF_MEM))
        config = VerifyConfig(device="cuda", trials=3, cache_dir=build_cache, timing_budget_ms=100, timing_rounds=2,
                              static_checks=False)
        with Verifier(config) as verifier:
            verdict = verifier.verify(problem, cand)
    finally:
        plan_for.cache_clear()
    said = verdict.compile.log + verdict.candidate_output_tail
    assert verdict.accepted, (verdict.status, verdict.message, verdict.candidate_output_tail[-2000:])
    assert "landlock-tasks" in verdict.env.isolation, verdict.env.isolation
    assert "selfmem: opened" not in said and "selfmem: refused" in said, said[-2000:]
