"""Judging one existing candidate as an episode of an evaluation run (no model, no conversation).

Its events are the write (a `write_candidate` call and its result) and then one `benchmark` call per verifier seed,
each result carrying its verdict: the same shape as an agent episode's, so the metrics read both the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from kernelmosaic.agent.episode import run_dir, task_sha256
from kernelmosaic.contracts.hashing import problem_hash
from kernelmosaic.contracts.messages import ToolCall
from kernelmosaic.contracts.tool_output import ToolOutput
from kernelmosaic.contracts.trajectory import Trajectory
from kernelmosaic.evaluate.generations import Generation
from kernelmosaic.evaluate.samples import sample_id
from kernelmosaic.runs.recorder import Recorder
from kernelmosaic.store import Store
from kernelmosaic.store.records import EpisodeInfo
from kernelmosaic.verify.stopping import Stopped, stop_requested

__all__ = ["judge_generation"]

log = logging.getLogger(__name__)


def _call(name: str, call_id: str, **arguments: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def judge_generation(gen: Generation, *, store: Store, run_id: int, out_dir: Path, device: str,
                     verifiers: Sequence[Callable[[str], object]], origin: str) -> EpisodeInfo:
    """Judge `gen` once per verifier (one per seed) and record it; a resumed episode skips the verdicts it holds."""
    episode_id = sample_id(gen.task.id, gen.sample)
    workdir = run_dir(out_dir, run_id) / "episodes" / episode_id
    if gen.problem is not None:
        problem = workdir / "problem.py"
        problem.parent.mkdir(parents=True, exist_ok=True)
        problem.write_text(gen.problem.read_text(encoding="utf-8"), encoding="utf-8")
    else:
        problem = gen.task.write_problem(workdir / "problem.py",
                                         "small" if device == "cpu" and gen.task.shapes.small else "default")
    source = gen.candidate.read_text(encoding="utf-8")
    psha = problem_hash(problem.read_text(encoding="utf-8"))
    header = {"tools": [], "origin_model": origin}
    trajectory = Trajectory(task_id=episode_id, task_sha256=task_sha256(gen.task), problem_sha256=psha,
                            model=origin, origin_model=origin)
    recorder = Recorder.open(store, run_id=run_id, episode_id=episode_id, task_sha256=task_sha256(gen.task),
                             problem_sha256=psha, flags=[], header=header, opening=[], trajectory=trajectory,
                             path=run_dir(out_dir, run_id) / "trajectories" / f"{episode_id}.json")
    state = recorder.state
    candidate = workdir / "candidate.py"
    candidate.write_text(source, encoding="utf-8")
    if not state.current_sha:
        write = _call("write_candidate", "gen-write", source=source)
        recorder.call(write)
        sha = state.set_candidate(source)
        recorder.result(write, ToolOutput(f"Candidate {gen.candidate} (sha256 {sha[:12]}).", candidate_sha256=sha,
                                          source=source))
    judged = sum(1 for _ in state.verdicts.get(state.current_sha, []))
    try:
        for k, verifier_for in enumerate(verifiers):
            if k < judged:
                continue
            verifier = verifier_for(gen.task.dtype)
            verdict = verifier.verify(problem, candidate, timing=True, sanitize=device == "cuda" and k == 0)  # once a candidate
            state.consider(state.current_sha, verdict, 0)
            bench = _call("benchmark", f"gen-judge-{k}")
            recorder.call(bench)
            recorder.result(bench, ToolOutput(f"{verdict.status.value}: {verdict.message}", verdict=verdict,
                                              candidate_sha256=state.current_sha,
                                              gpu_seconds=verdict.device_seconds if device == "cuda" else 0.0))
            recorder.save()
    except Exception as exc:  # the verifier or the store broke: the episode failed, and says why
        if stop_requested():  # Ctrl-C killed its workers: nothing to record, the episode resumes
            raise Stopped("interrupted") from exc
        log.exception("candidate %s: infrastructure error", gen.candidate)
        return recorder.finish("infra_error", status="failed", detail=f"{type(exc).__name__}: {exc}")
    return recorder.finish("judged")
