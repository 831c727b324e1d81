"""Judgement on Ray: the CPU stage of a job (a task), the per-GPU judge actor, and the registry that replaces a
judge that died or saw a CUDA error.

These classes are plain Python; `ray.remote` wraps them where they are started, so importing this module does not
import Ray. A judge holds `Verifier`s (one per distinct config) whose one device slot keeps its reference worker and
warm spare candidate worker between jobs; the worker processes are the verifier's own (standard library + torch).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kernelmosaic.contracts.results import CompileResult, DevicePeaks, ProfileReport
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.job import Job, finish
from kernelmosaic.verify.ray.inputs import Sources
from kernelmosaic.verify.verifier import Verifier

__all__ = ["Prepared", "prepare", "compile_only", "JudgeActor", "JudgeRegistry"]

_KEEP = 4
"""Verifiers (distinct settings: precisions, seeds) a judge keeps warm at once."""


@dataclass
class Prepared:
    """The CPU stage's result: a verdict already decided (static reject, compile error), or a compiled job."""

    node_id: str
    verdict: Verdict | None = None
    job: Job | None = None
    elapsed: float = 0.0
    """Seconds the job had run when it left the CPU stage (clocks differ between processes and machines)."""


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def prepare(config: dict[str, Any], sources: Sources, options: dict[str, Any]) -> Prepared:
    """Read, hash, static checks, build-cache lookup and compile (a CPU worker) — `Verifier.start` and
    `compile_job`, as the local lookahead runs them. Runs as a Ray task with CPU resources."""
    base = VerifyConfig.model_validate(config)
    problem, candidate, alternatives = sources.place(base.cache_dir)
    with Verifier(base, devices=[base.device]) as verifier:  # names only: no worker starts here
        job = verifier.start(problem, candidate, alternatives=alternatives, **options)
        verifier.compile_job(job)
    if job.stop is not None:
        return Prepared(node_id=_node_id(), verdict=finish(job))
    return Prepared(node_id=_node_id(), job=job, elapsed=time.perf_counter() - job.started)


def compile_only(config: dict[str, Any], sources: Sources) -> CompileResult:
    """The agent's compile() tool on a CPU task."""
    base = VerifyConfig.model_validate(config)
    _, candidate, _ = sources.place(base.cache_dir)
    with Verifier(base, devices=[base.device]) as verifier:
        return verifier.compile(candidate)


class JudgeActor:
    """One GPU (or, on the CPU device, one logical GPU or one CPU judge): judges compiled jobs on its slot."""

    def __init__(self, index: int) -> None:
        import ray

        self.index = index
        self.gpu_ids = [str(g) for g in ray.get_gpu_ids()]
        self.node_id = _node_id()
        gpus = f"GPU {','.join(self.gpu_ids)}" if self.gpu_ids else "no GPU"
        self.label = f"ray judge {index} ({gpus}) pid {os.getpid()} on {socket.gethostname()}"
        self._verifiers: OrderedDict[str, Verifier] = OrderedDict()
        self._lock = threading.Lock()

    def info(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "gpu_ids": self.gpu_ids, "label": self.label}

    def _verifier(self, config: dict[str, Any]) -> Verifier:
        key = json.dumps(config, sort_keys=True)
        with self._lock:
            if key not in self._verifiers:
                base = VerifyConfig.model_validate(config)
                # `cuda`, not `cuda:N`: Ray set CUDA_VISIBLE_DEVICES to this actor's GPU and the workers inherit it
                verifier = Verifier(base, devices=["cuda" if base.device == "cuda" else "cpu"])
                verifier.served_by = self.label
                self._verifiers[key] = verifier
                while len(self._verifiers) > _KEEP:
                    self._verifiers.popitem(last=False)[1].close()
            self._verifiers.move_to_end(key)
            return self._verifiers[key]

    def judge(self, config: dict[str, Any], sources: Sources, prepared: Prepared) -> Verdict:
        """The device stage of a prepared job, on this judge's slot (its inputs placed on this node)."""
        job = prepared.job
        job.started = time.perf_counter() - prepared.elapsed
        job.problem, job.candidate, given = sources.place(job.config.cache_dir)
        if given or not job.alternatives:
            job.alternatives = given
        else:  # sizes `prepare` derived (verify/problem_shapes.alternatives_to_judge): derived again on this node
            from kernelmosaic.verify.problem_shapes import alternatives_to_judge

            job.alternatives = alternatives_to_judge(job.problem.read_text(encoding="utf-8"), (), job.config)[0]
        return self._verifier(config).judge(job)

    def profile(self, config: dict[str, Any], sources: Sources) -> ProfileReport:
        problem, candidate, _ = sources.place(VerifyConfig.model_validate(config).cache_dir)
        return self._verifier(config).profile(problem, candidate)

    def device_peaks(self, config: dict[str, Any]) -> DevicePeaks:
        return self._verifier(config).device_peaks()

    def close(self) -> None:
        with self._lock:
            for verifier in self._verifiers.values():
                verifier.close()
            self._verifiers.clear()


class JudgeRegistry:
    """The current judge of every index, and its generation; `replace` starts a new one once per dead generation,
    however many callers saw it die."""

    def __init__(self, count: int, gpus_each: float, concurrency: int) -> None:
        import ray

        self._make = lambda i: ray.remote(JudgeActor).options(num_gpus=gpus_each, num_cpus=0,
                                                               max_concurrency=concurrency).remote(i)
        self._judges = [(0, self._make(i)) for i in range(count)]
        self.replaced = 0

    def judges(self) -> list[tuple[int, Any]]:
        return list(self._judges)

    def replace(self, index: int, generation: int) -> tuple[int, Any]:
        import ray

        current, handle = self._judges[index]
        if current == generation:
            ray.kill(handle, no_restart=True)
            self._judges[index] = (current + 1, self._make(index))
            self.replaced += 1
        return self._judges[index]

    def replacements(self) -> int:
        return self.replaced
