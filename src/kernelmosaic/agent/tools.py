"""The tools' behaviour: each call turns into verifier work and a concise text result for the model.

The verifier is blocking and shared by all episodes, so every call to it runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from kernelmosaic.agent.config import AgentConfig
from kernelmosaic.agent.feedback import (
    profile_feedback,
    short_paths,
    test_feedback,
    timing_feedback,
    trim_compile_log,
)
from kernelmosaic.agent.guidance import GuidanceLibrary
from kernelmosaic.agent.prompts import PHASE_TWO
from kernelmosaic.agent.workload import estimate_workload, roofline_text
from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.contracts.messages import ToolCall
from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.contracts.tool_output import ToolOutput
from kernelmosaic.contracts.tool_specs import argument_error
from kernelmosaic.contracts.trajectory import Solution
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.contracts.verifier import Verifier
from kernelmosaic.tasks.schema import Task

__all__ = ["Toolbox"]

log = logging.getLogger(__name__)
_NO_CANDIDATE = "There is no candidate yet: call write_candidate(source) first."


class Toolbox:
    """The tools of one episode: its task, problem file, candidate file and state, and the shared verifier."""

    def __init__(self, *, verifier: Verifier, task: Task, problem: Path, workdir: Path, state: EpisodeState,
                 library: GuidanceLibrary, config: AgentConfig, peaks: Callable[[], DevicePeaks] | None = None) -> None:
        self.verifier, self.task, self.problem, self.state = verifier, task, problem, state
        self.library, self.config, self.peaks = library, config, peaks
        self.candidate = workdir / "candidate.py"
        self.final = workdir / "final.py"
        """Where submit() writes the best candidate for its final check (it need not be the current one)."""
        if state.current_source:  # resume: the file must hold what the conversation says was written
            self.candidate.write_text(state.current_source, encoding="utf-8")

    async def run(self, call: ToolCall) -> ToolOutput:
        problem = argument_error(call)
        if problem:
            return ToolOutput(problem, format_error=True)
        return await getattr(self, f"_{call.name}")(call, **call.arguments)

    def gpu_seconds(self, verdict: Verdict) -> float:
        return self._gpu(verdict.device_seconds)

    def _gpu(self, seconds: float) -> float:
        return seconds if self.config.device == "cuda" else 0.0

    def _guide(self, out: ToolOutput, status: str) -> ToolOutput:
        """Attach advice for a failure type the model has not been shown yet."""
        items = self.library.for_status(status, self.config.device, self.state.guidance_shown,
                                        self.config.guidance_per_failure)
        if items:
            out.guidance, out.guidance_reason = items, f"failure status {status}"
            out.content += "\n\n" + "\n\n".join(i.render() for i in items)
        return out

    async def _verify(self, timing: bool) -> tuple[Verdict, bool]:
        # benchmark() iterates: the quick timing profile (one short round, the same checks); submit() times in full
        options = {"timing_profile": "quick"} if timing else {}
        verdict = await asyncio.to_thread(self.verifier.verify, self.problem, self.candidate, timing=timing, **options)
        was_best = self.state.best
        became_best = self.state.consider(self.state.current_sha, verdict, self.state.turns)
        return verdict, became_best and was_best is None

    def _demotion(self, sha: str) -> str:
        """What the model must know when a rejection took the best candidate's place away."""
        best = self.state.best
        if best is None:
            return "\nNo candidate passes any more: repair one and test() again."
        return f"\nThe best candidate is now the one of step {best.step} (sha256 {best.candidate_sha256[:12]})."

    async def _write_candidate(self, call: ToolCall, source: str) -> ToolOutput:
        if not source.strip():
            return ToolOutput("The source is empty; send the complete candidate module.")
        sha = self.state.set_candidate(source)
        self.candidate.write_text(source, encoding="utf-8")
        lines = source.count("\n") + 1
        return ToolOutput(f"Candidate written ({lines} lines, sha256 {sha[:12]}). Next: compile() or test().",
                          candidate_sha256=sha, source=source)

    async def _compile(self, call: ToolCall) -> ToolOutput:
        if not self.state.current_sha:
            return ToolOutput(_NO_CANDIDATE)
        result = await asyncio.to_thread(self.verifier.compile, self.candidate)
        info = result.info
        if result.ok:
            text = f"Compiled and imported in {info.seconds:.1f} s (cache hit: {'yes' if info.cache_hit else 'no'}). Next: test()."
            return ToolOutput(text, candidate_sha256=self.state.current_sha)
        head = f"Compile failed ({result.status}): {short_paths(result.message)}"
        text = head + "\n" + trim_compile_log(info.log, max_lines=self.config.max_feedback_lines, shown=head)
        return self._guide(ToolOutput(text, candidate_sha256=self.state.current_sha), str(result.status))

    async def _test(self, call: ToolCall) -> ToolOutput:
        if not self.state.current_sha:
            return ToolOutput(_NO_CANDIDATE)
        was_best = self.state.best
        verdict, first = await self._verify(timing=False)
        out = ToolOutput(test_feedback(verdict, self.config.max_feedback_lines), verdict=verdict,
                         candidate_sha256=self.state.current_sha, gpu_seconds=self._gpu(verdict.device_seconds))
        if first:
            out.content += "\n\n" + PHASE_TWO
        if verdict.accepted:
            return out
        if was_best is not None and was_best.candidate_sha256 == self.state.current_sha:
            out.content += self._demotion(self.state.current_sha)
        return self._guide(out, verdict.status.value)

    async def _benchmark(self, call: ToolCall) -> ToolOutput:
        if not self.state.current_sha:
            return ToolOutput(_NO_CANDIDATE)
        was_best = self.state.best
        verdict, first = await self._verify(timing=True)
        out = ToolOutput("", verdict=verdict, candidate_sha256=self.state.current_sha, gpu_seconds=self._gpu(verdict.device_seconds))
        if not verdict.accepted:
            out.content = test_feedback(verdict, self.config.max_feedback_lines)
            if was_best is not None and was_best.candidate_sha256 == self.state.current_sha:
                out.content += self._demotion(self.state.current_sha)
            return self._guide(out, verdict.status.value)
        out.content = f"PASSED ({verdict.message})\n" + timing_feedback(verdict, await self._roofline(verdict))
        best = self.state.best
        if best is not None and best.candidate_sha256 == self.state.current_sha:
            out.content += "\nThis candidate is now the best one."
        elif best is not None and best.verdict.timing is not None:
            out.content += f"\nThe best remains the candidate of step {best.step} ({best.verdict.timing.candidate.median_ms:.4g} ms)."
        if first:
            out.content += "\n\n" + PHASE_TWO
        return out

    async def _roofline(self, verdict: Verdict) -> str:
        if self.peaks is None:
            return ""
        peaks = await asyncio.to_thread(self.peaks)  # measured once by the verifier, then cached
        workload = await asyncio.to_thread(estimate_workload, self.problem, self.task.dtype)
        assert verdict.timing is not None
        return roofline_text(workload, verdict.timing.candidate.median_ms, peaks, self.task.dtype)

    async def _profile(self, call: ToolCall) -> ToolOutput:
        if not self.state.current_sha:
            return ToolOutput(_NO_CANDIDATE)
        started = time.perf_counter()
        report = await asyncio.to_thread(self.verifier.profile, self.problem, self.candidate)
        return ToolOutput(profile_feedback(report.kernels, report.ncu_metrics, report.message),
                          candidate_sha256=self.state.current_sha, gpu_seconds=self._gpu(time.perf_counter() - started))

    async def _guidance(self, call: ToolCall, topic: str = "") -> ToolOutput:
        if not topic.strip():
            return ToolOutput("Guidance topics:\n" + self.library.topics())
        items = self.library.lookup(topic, self.config.device)
        if not items:
            return ToolOutput(f"No guidance matches {topic!r}. Topics:\n" + self.library.topics())
        return ToolOutput("\n\n".join(i.render() for i in items), guidance=items, guidance_reason=f"query: {topic}")

    async def final_check(self, best: Solution) -> Verdict:
        """The final solution's own verification: full timing, and compute-sanitizer on CUDA. The state takes the
        verdict (a rejection demotes the candidate); the caller records it."""
        self.final.write_text(best.source, encoding="utf-8")
        checked = await asyncio.to_thread(self.verifier.verify, self.problem, self.final, timing=True, timing_profile="full",
                                          sanitize=self.config.device == "cuda")
        self.state.consider(best.candidate_sha256, checked, self.state.turns)
        return checked

    async def _submit(self, call: ToolCall) -> ToolOutput:
        """End the episode with the best candidate, once it is verified on its own record.

        A best candidate that was never timed (or, on CUDA, never sanitized) gets its final check here: one
        timed (and sanitized) verification. If that rejects it, it is demoted and the episode goes on.
        """
        best = self.state.best
        if best is None:
            return ToolOutput("Nothing to submit yet: no candidate has passed test(). Repair the candidate and call test().")
        checked: Verdict | None = None
        if best.verification is None or not best.verification.candidate_ok:
            checked = await self.final_check(best)
            if not checked.accepted or self.state.best is None or self.state.best.candidate_sha256 != best.candidate_sha256:
                text = (f"The final check (timed{', sanitized' if self.config.device == 'cuda' else ''}) of the candidate "
                        f"of step {best.step} rejected it:\n{test_feedback(checked, self.config.max_feedback_lines)}"
                        + self._demotion(best.candidate_sha256))
                return self._guide(ToolOutput(text, verdict=checked, candidate_sha256=best.candidate_sha256,
                                              gpu_seconds=self._gpu(checked.device_seconds)), checked.status.value)
            best = self.state.best
        timing = best.verdict.timing or (checked.timing if checked else None)
        speed = f", {timing.candidate.median_ms:.4g} ms" if timing else ""
        text = f"Submitted the candidate of step {best.step} (sha256 {best.candidate_sha256[:12]}{speed})."
        if best.verification is not None and not best.verification.verified:
            text += " It is kept but not counted as verified: " + "; ".join(best.verification.reasons) + "."
        return ToolOutput(text, verdict=checked, candidate_sha256=best.candidate_sha256 if checked else "",
                          gpu_seconds=self._gpu(checked.device_seconds) if checked else 0.0, submitted=True)
