"""A reference worker killed by the host (the kernel's out-of-memory killer, on a crowded machine) while it computes on
data from the candidate's process is not yet the candidate's fault: the judgement is run once more alone, on a fresh
reference worker (`device_memory.retry_reason`), and only a second death stands as the candidate's `resource_error`.
A blind CPU answer for LayerNorm at KernelBench's size was rejected that way beside other jobs on a 24 GiB machine.
Real worker, real SIGKILL."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify.device_memory import attribute, retry_reason
from kernelmosaic.verify.judgement import Stop, call_on_candidate_data
from kernelmosaic.verify.pool import Worker, WorkerLimits

from .kit import write

SLOW = '''\
import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        if bool((x == 1).all()):  # the data the test sends as the candidate's: long enough to be killed in
            time.sleep(30)
        return x * 2


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
'''


def _stop_when_killed(tmp_path, sig: int) -> Stop:
    problem = write(tmp_path, "problem.py", SLOW)
    worker = Worker("reference", "cpu", WorkerLimits())
    worker.start()
    try:
        worker.call("setup", 120.0, problem=str(problem), seed=0, precision="fp32")
        pid = worker.pid
        threading.Timer(1.0, os.kill, (pid, sig)).start()
        with pytest.raises(Stop) as stopped:
            call_on_candidate_data(worker, "compute", 60.0, "a timed call's reported inputs", inputs=[torch.ones(8)])
        return stopped.value
    finally:
        worker.kill()
        time.sleep(0.1)


def test_a_reference_killed_by_the_host_is_judged_again_alone_before_it_is_the_candidates(tmp_path):
    stop = _stop_when_killed(tmp_path, signal.SIGKILL)
    assert stop.status == Status.resource_error and stop.oom == "reference_host", (stop.status, stop.oom)
    assert "killed for host memory; judged again alone" in retry_reason(stop)
    # the second time (alone) it stands, as the candidate's
    assert attribute(stop, {}) is stop


def test_a_reference_that_crashes_on_the_candidates_data_is_the_candidates_at_once(tmp_path):
    stop = _stop_when_killed(tmp_path, signal.SIGSEGV)
    assert stop.status == Status.crash and stop.oom == "" and retry_reason(stop) == ""
