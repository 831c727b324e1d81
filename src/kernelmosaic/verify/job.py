"""One verification in progress, split into the stages the lookahead schedules: start (read, hash, static checks,
build-cache lookup), compile (a CPU worker), judge (a device slot). The verdict is assembled once, in `finish`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from kernelmosaic.contracts.verdict import Correctness, Finding, Status, Verdict, WeightCopy
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Outcome, Stop
from kernelmosaic.verify.robustness import Alternative
from kernelmosaic.verify.static.precision import RULE as PRECISION_RULE

__all__ = ["Job", "finish", "accepted_message"]

# Rejects found after an otherwise accepted run; any other is an integrity violation. A memory, race or barrier error
# found by compute-sanitizer is a CUDA fault the plain run got away with.
_LATE_REJECT_STATUS = {"sanitizer-memcheck": Status.cuda_error, "sanitizer-racecheck": Status.cuda_error,
                       "sanitizer-synccheck": Status.cuda_error}


@dataclass
class Job:
    problem: Path
    candidate: Path
    candidate_src: str
    config: VerifyConfig
    """The run's config with this call's policy and timing profile applied."""
    timing: bool
    sanitize: bool
    alternatives: list[Alternative]
    alt_shas: list[str]
    verdict: Verdict
    started: float = field(default_factory=time.perf_counter)
    findings: list[Finding] = field(default_factory=list)
    out: Outcome = field(default_factory=lambda: Outcome(correctness=Correctness()))
    stop: Stop | None = None
    """Set when an early stage already decided the verdict (static reject, compile error)."""
    compiled: bool = False
    """The compile stage is done (or there was nothing to build)."""
    compile_nice: int = 0
    """CPU niceness of its compile workers (`build_order`: 0 unless another build of the batch is waited on more)."""
    device: str = ""
    """The device its latest judgement attempt ran on (`cuda:N`, `cuda`, `cpu`; "" before any)."""

    def mark(self, phase: str) -> float:
        """Record the wall-clock start of `phase`; returns a perf_counter stamp for its length."""
        self.verdict.phase_started[phase] = round(time.time(), 4)
        return time.perf_counter()


def finish(job: Job) -> Verdict:
    """The verdict from what the stages recorded (a Stop's status, or accepted unless a reject finding says no)."""
    verdict, out = job.verdict, job.out
    if job.stop is not None:
        verdict.status, verdict.message = job.stop.status, job.stop.message
        job.findings += job.stop.findings
    verdict.findings = job.findings + out.findings
    if verdict.status == Status.output_mismatch and (tf32 := next(
            (f for f in verdict.findings if f.rule == PRECISION_RULE), None)):
        verdict.message += f"; likely cause: {tf32.message} ({tf32.evidence.split(': ', 1)[0]})"
    verdict.correctness, verdict.timing = out.correctness, out.timing
    verdict.phase_seconds = {k: round(v, 3) for k, v in out.phase_seconds.items()}
    if "timing_held" in out.phase_started:
        verdict.phase_started["timing_held"] = out.phase_started["timing_held"]
    if out.census is not None:
        verdict.census = out.census
    verdict.memory = out.memory
    if out.weights:
        verdict.weights = WeightCopy.model_validate(out.weights)
    if verdict.status == Status.accepted and verdict.rejected_by:
        first = verdict.rejected_by[0]
        verdict.status = _LATE_REJECT_STATUS.get(first.rule, Status.integrity_violation)
        verdict.message = f"rejected by `{first.rule}`: {first.message}"
    verdict.accepted = verdict.status == Status.accepted
    verdict.seconds = round(time.perf_counter() - job.started, 3)
    return verdict


def accepted_message(out: Outcome, verdict: Verdict) -> str:
    """The message of an accepted verdict: trials, error, policy, custom share, speedups and their caveats."""
    c = out.correctness
    text = f"correct on {c.passed}/{c.trials} trials (max abs err {c.max_abs_error:.2e}) under `{verdict.policy}`"
    if verdict.custom is not None and verdict.custom.share is not None:
        text += f", custom kernels {100 * verdict.custom.share:.0f}% of {verdict.custom.share_basis.replace('_', ' ')}"
    if out.timing:
        from kernelmosaic.contracts.speedup import timing_speedups

        t = out.timing
        readings = timing_speedups(t)
        eager, compiled = readings["eager_device"], readings["compile_device"]
        text += f"; {t.candidate.median_ms:.3f} ms, {t.speedup_vs_eager:.2f}x vs eager"
        text += f" ({eager.caveat()})" if eager.caveat() else ""
        if compiled.measured:
            text += f", {compiled.value:.2f}x vs torch.compile" + (f" ({compiled.caveat()})" if compiled.caveat() else "")
    if verdict.settings.weakened:
        text += f"; judged with weakened settings ({', '.join(verdict.settings.weakened)}): never verified"
    return text

