"""Shared pieces of the agent tests: a tiny task, a fake verifier driven by markers in the candidate, call builders."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

from kernelmosaic.contracts.isolation import MINIMUM
from kernelmosaic.contracts.messages import Message, ToolCall, Usage
from kernelmosaic.contracts.results import CompileResult, DevicePeaks, KernelStat, ProfileReport
from kernelmosaic.contracts.verdict import (
    CompileInfo,
    Correctness,
    Env,
    Finding,
    Stat,
    Status,
    Timing,
    Verdict,
)
from kernelmosaic.tasks.schema import Forms, Shapes, Task

ISOLATED = sorted({layer for options in MINIMUM.values() for layer in options[0]})
"""Layers meeting the documented minimum (`contracts.isolation.MINIMUM`), as the real verifier records them on this machine."""

REFERENCE = '''\
import torch
import torch.nn as nn

batch_size = 512
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def make_task(task_id: str = "t_relu", reference: str = REFERENCE, small: dict | None = None) -> Task:
    return Task(id=task_id, title="ReLU", level=1, category="activation", tags=["relu"],
                forms=Forms(nl="Apply ReLU elementwise to x of shape (batch_size, dim).", reference=reference),
                shapes=Shapes(small=small if small is not None else {"batch_size": 4, "dim": 64}))


_ids = itertools.count()


def call(name: str, usage: Usage | None = None, **arguments) -> Message | tuple:
    """An assistant message calling one tool (ids are unique across the test session)."""
    tc = ToolCall(id=f"call_{next(_ids)}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
    return Message(role="assistant", content=f"calling {name}", tool_calls=[tc])


def candidate(marker: str) -> str:
    """A candidate source for the fake verifier: `compile_error`, `wrong`, `ms=1.5` (accepted, that fast), `stale`
    (accepted untimed, rejected when timed), `taskflag` (accepted with a `task-*` flag)."""
    return f"# {marker}\nclass ModelNew: pass\n"


class FakeVerifier:
    """Judges by markers in the candidate text; records every call. Thread-safe like the real one."""

    def __init__(self, seconds: float = 0.01) -> None:
        self.seconds = seconds
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.profiles: list[str | None] = []

    def _source(self, op: str, candidate: Path) -> str:
        source = Path(candidate).read_text()
        with self._lock:
            self.calls.append((op, source))
        return source

    def compile(self, candidate: Path) -> CompileResult:
        source = self._source("compile", candidate)
        if "compile_error" in source:
            log = "[1/2] c++ -c /b/abc/main.cpp -o main.o\nFAILED: main.o\n/b/abc/main.cpp:7:3: error: 'y' was not declared in this scope\n    7 |   y = 1;\n      |   ^\n"
            return CompileResult(ok=False, status=Status.compile_error, message="extension failed to build",
                                 info=CompileInfo(seconds=1.0, log=log))
        return CompileResult(ok=True, status=Status.accepted, message="compiled", info=CompileInfo(seconds=1.0))

    def verify(self, problem: Path, candidate: Path, *, timing: bool | None = None, sanitize: bool | None = None,
               timing_profile: str | None = None) -> Verdict:
        source = self._source("verify_timed" if timing else "verify", candidate)
        self.profiles.append(timing_profile)
        if "stale" in source and timing:  # passes the correctness trials, caught by the timed-output check
            return Verdict(accepted=False, status=Status.output_mismatch, message="rejected by `timed-output-check`",
                           findings=[Finding(rule="timed-output-check", severity="reject", message="timed output differs")],
                           correctness=Correctness(trials=5, passed=5), seconds=self.seconds, phase_seconds={"judge": self.seconds}, env=Env(device="cpu"))
        assert Path(problem).is_file()
        if "compile_error" in source:
            result = self.compile(candidate)
            return Verdict(accepted=False, status=Status.compile_error, message=result.message, compile=result.info,
                           seconds=self.seconds, phase_seconds={"judge": self.seconds})
        if "wrong" in source:
            return Verdict(accepted=False, status=Status.output_mismatch, message="output differs from the reference",
                           correctness=Correctness(trials=5, passed=0, max_abs_error=0.75, max_rel_error=1.0,
                                                   atol=1e-4, rtol=1e-4, detail="first mismatch at [0, 3]: got 0.0, expected 0.75"),
                           seconds=self.seconds, phase_seconds={"judge": self.seconds})
        ms = float(source.split("ms=")[1].split()[0]) if "ms=" in source else 2.0
        flags = [Finding(rule="task-zero-output-passes", severity="flag", message="zeros pass")] if "taskflag" in source else []
        verdict = Verdict(accepted=True, status=Status.accepted, message="correct", seconds=self.seconds, phase_seconds={"judge": self.seconds}, findings=flags,
                          correctness=Correctness(trials=5, passed=5, max_abs_error=0.0),
                          env=Env(device="cpu", isolation=ISOLATED))
        if timing:
            stat = Stat(median_ms=ms, q1_ms=ms * 0.95, q3_ms=ms * 1.05, samples=30)
            eager = Stat(median_ms=2.0, q1_ms=1.9, q3_ms=2.1, samples=30)
            verdict.timing = Timing(candidate=stat, eager=eager, speedup_vs_eager=2.0 / ms, timer="host",
                                    profile=timing_profile or "full")
        return verdict

    def profile(self, problem: Path, candidate: Path) -> ProfileReport:
        self._source("profile", candidate)
        return ProfileReport(kernels=[KernelStat(name="relu_kernel", calls=3, total_ms=0.3, custom=True)], message="profiled")

    def device_peaks(self) -> DevicePeaks:
        return DevicePeaks(bandwidth_gbps=100.0, fp32_tflops=1.0, bf16_tflops=2.0, measured=False)
