"""Verification jobs on the cluster: the CPU stage as a task placed on a judge's node (the build cache is
node-local), then the least busy judge of the node that compiled it; verdicts stream back as they are decided.

A job whose task or judge dies (a killed process, a lost node) is started again, up to `max_attempts`; a judge that
died, or whose verdict was a CUDA error, is replaced through the registry. An error of the job itself (an unusable
input) is raised to the caller, as the local verifier raises it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kernelmosaic.contracts.results import CompileResult, DevicePeaks, ProfileReport
from kernelmosaic.contracts.verdict import Status, Verdict
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.ray.inputs import Sources
from kernelmosaic.verify.ray.judges import Prepared, compile_only, prepare

__all__ = ["Dispatcher", "JobLost"]

log = logging.getLogger(__name__)


class JobLost(RuntimeError):
    """A job whose worker or judge died `max_attempts` times."""


@dataclass
class _Flight:
    index: int
    sources: Sources
    options: dict[str, Any]
    attempt: int
    judge: int = -1
    generation: int = -1


class Dispatcher:
    """Runs jobs on the judges of a `JudgeRegistry` (an actor handle); usable from any process of the cluster."""

    def __init__(self, registry: Any, scale: ScaleConfig) -> None:
        import ray

        self.ray, self.registry, self.scale = ray, registry, scale
        self._lock = threading.Lock()
        self._judges: list[tuple[int, Any]] = ray.get(registry.judges.remote())
        self._nodes = [ray.get(h.info.remote())["node_id"] for _, h in self._judges]
        self._busy = [0] * len(self._judges)
        self._next = 0
        cpu = {"num_cpus": scale.compile_cpus, "max_retries": scale.max_attempts - 1}  # Ray retries a lost worker
        self._prepare, self._compile = ray.remote(prepare), ray.remote(compile_only).options(**cpu)
        self._cpu = cpu

    @property
    def judge_count(self) -> int:
        return len(self._judges)

    # -- judges -------------------------------------------------------------------------------

    def _replace(self, index: int, generation: int, why: str) -> None:
        log.warning("judge %d (generation %d) is replaced: %s", index, generation, why)
        fresh = self.ray.get(self.registry.replace.remote(index, generation))
        node = self.ray.get(fresh[1].info.remote())["node_id"]
        with self._lock:
            if self._judges[index][0] < fresh[0]:
                self._judges[index], self._nodes[index] = fresh, node

    def _node_for(self, affinity: int | None) -> str:
        with self._lock:
            if affinity is None:
                affinity, self._next = self._next, self._next + 1
            return self._nodes[affinity % len(self._nodes)]

    def _take_judge(self, node: str) -> tuple[int, int, Any]:
        """The least busy judge on `node` (any judge when none is there)."""
        with self._lock:
            here = [i for i, n in enumerate(self._nodes) if n == node] or list(range(len(self._nodes)))
            best = min(here, key=lambda i: self._busy[i])
            self._busy[best] += 1
            generation, handle = self._judges[best]
            return best, generation, handle

    def _release(self, index: int) -> None:
        with self._lock:
            self._busy[index] -= 1

    # -- jobs ---------------------------------------------------------------------------------

    def _start(self, config: dict, flight: _Flight, affinity: int | None, pending: dict) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = self._node_for(affinity)
        strategy = NodeAffinitySchedulingStrategy(node_id=node, soft=True)  # soft: a lost node's job goes elsewhere
        flight.judge = -1
        pending[self._prepare.options(scheduling_strategy=strategy, **self._cpu).remote(config, flight.sources, flight.options)] = flight

    def run(self, config: VerifyConfig, jobs: Sequence[tuple[Sources, dict[str, Any]]],
            affinity: int | None = None) -> Iterator[tuple[int, Verdict]]:
        """(index, verdict) for every job, in the order they are decided. `affinity`: send every job to the node of
        judge `affinity % judges` (an episode keeps its problem set up in one reference worker)."""
        from ray.exceptions import RayTaskError

        ray, data = self.ray, config.model_dump(mode="json")
        pending: dict[Any, _Flight] = {}
        for i, (sources, options) in enumerate(jobs):
            self._start(data, _Flight(i, sources, options, 1), affinity, pending)
        try:
            while pending:
                [ref], _ = ray.wait(list(pending), num_returns=1)
                flight = pending.pop(ref)
                if flight.judge >= 0:
                    self._release(flight.judge)
                try:
                    got = ray.get(ref)
                except RayTaskError as exc:  # the job's own error (an unusable input): the caller's to handle
                    raise exc.cause from None
                except ray.exceptions.RayError as exc:  # a worker, an actor or a node was lost
                    self._retry(data, flight, exc, affinity, pending)
                    continue
                if isinstance(got, Prepared):
                    if got.verdict is not None:
                        yield flight.index, got.verdict
                        continue
                    flight.judge, flight.generation, handle = self._take_judge(got.node_id)
                    pending[handle.judge.remote(data, flight.sources, got)] = flight
                    continue
                if got.status == Status.cuda_error:  # a CUDA context that saw an error is never reused
                    self._replace(flight.judge, flight.generation, "its verdict was a CUDA error")
                yield flight.index, got
        finally:
            for ref, flight in pending.items():
                if flight.judge >= 0:
                    self._release(flight.judge)
                else:  # the caller stopped early: compiles nobody waits for are dropped
                    ray.cancel(ref)

    def _retry(self, data: dict, flight: _Flight, exc: Exception, affinity: int | None, pending: dict) -> None:
        what = f"job {flight.index} ({flight.sources.candidate.name})"
        if flight.judge >= 0:
            self._replace(flight.judge, flight.generation, f"it died judging {what}: {type(exc).__name__}")
        if flight.attempt >= self.scale.max_attempts:
            raise JobLost(f"{what}: its worker or judge died {flight.attempt} times (last: {exc})") from None
        log.warning("%s is tried again (attempt %d): %s", what, flight.attempt + 1, type(exc).__name__)
        flight.attempt += 1
        self._start(data, flight, affinity, pending)

    def verify(self, config: VerifyConfig, sources: Sources, options: dict[str, Any], affinity: int | None = None) -> Verdict:
        for _, verdict in self.run(config, [(sources, options)], affinity):
            return verdict
        raise JobLost("the job returned no verdict")

    def compile(self, config: VerifyConfig, sources: Sources) -> CompileResult:
        return self.ray.get(self._compile.remote(config.model_dump(mode="json"), sources))

    def call(self, method: str, config: VerifyConfig, *args: Any, affinity: int = 0) -> ProfileReport | DevicePeaks:
        """`profile` or `device_peaks` on a judge, retried on another generation when the judge dies."""
        from ray.exceptions import RayTaskError

        for attempt in range(1, self.scale.max_attempts + 1):
            with self._lock:
                index = affinity % len(self._judges)
                generation, handle = self._judges[index]
            try:
                return self.ray.get(getattr(handle, method).remote(config.model_dump(mode="json"), *args))
            except RayTaskError as exc:
                raise exc.cause from None
            except self.ray.exceptions.RayError as exc:
                self._replace(index, generation, f"it died during {method}: {type(exc).__name__}")
                if attempt == self.scale.max_attempts:
                    raise JobLost(f"{method}: the judge died {attempt} times (last: {exc})") from None
        raise AssertionError("unreachable")
