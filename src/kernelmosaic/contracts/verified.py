"""What a *verified solution* is: the one definition the agent, the store, `runs`, SFT export and evaluation import.

A candidate is verified when its latest verdict is accepted, it was timed with the `full` profile (every device
times: CUDA events on a GPU, host timers on a CPU; the `quick` profile is for iterations and checks fewer timed
calls), no verdict since its last rejection carries a `reject` finding, on CUDA it
passed compute-sanitizer, its latest verdict was judged inside the documented minimum of OS isolation layers
(`verify/isolation.py`: no network, every process ending with the judgement, writes confined to its scratch folder,
the reference out of reach), none of the verdicts it rests on was judged with weakened settings (a check off, a
looser threshold, fewer trials: `Verdict.settings.weakened`, verify/strength.py), and its task carries no `task-*` flag and no failed audit. Anything else it may be
(accepted once, accepted but never timed, accepted on a degenerate task) is recorded, never counted as solved.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.isolation import missing as missing_isolation
from kernelmosaic.contracts.sanitizer import TOOLS, tool_passed
from kernelmosaic.contracts.verdict import Verdict

__all__ = ["Verification", "TASK_FLAG_PREFIX", "sanitizer_passed", "SANITIZER_GATES", "AUDIT_FAILED", "task_flags_of", "passed_every_trial", "check_candidate",
           "rank"]

TASK_FLAG_PREFIX = "task-"
"""Findings whose rule starts with this are about the task, not the candidate: the verdict is not evidence."""
AUDIT_FAILED = "task-audit-failed"
"""The task flag recorded for an episode whose task failed its audit (run with `--include-flagged`)."""


class Verification(BaseModel):
    """The judgement over one candidate's verdict history (oldest first) and its task's flags."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    candidate_ok: bool
    """The candidate's own record passes: latest verdict accepted, timed, no reject finding, sanitized on CUDA."""
    task_flags: list[str] = Field(default_factory=list)
    """`task-*` rules seen on its verdicts or recorded for its task (a failed audit is `task-audit-failed`)."""
    timed: bool = False
    """An accepted verdict since the last rejection carries timing of the `full` profile."""
    sanitized: bool = False
    """An accepted verdict since the last rejection ran compute-sanitizer with no rejecting finding."""
    sanitizer_required: bool = False
    """The candidate was judged on CUDA, where a verified solution must have passed compute-sanitizer."""
    rests_on: list[int] = Field(default_factory=list)
    """Indexes (into the history given) of the accepted verdicts since the last rejection."""
    reasons: list[str] = Field(default_factory=list)
    """Why it is not verified, one short phrase each; empty when it is."""

    @property
    def verified(self) -> bool:
        """Counted as solved and exported as training data only when this is true."""
        return self.candidate_ok and not self.task_flags

    @property
    def flagged(self) -> bool:
        """The candidate passes but its task is degenerate or failed its audit: kept, marked, not counted."""
        return self.candidate_ok and bool(self.task_flags)


def task_flags_of(verdict: Verdict) -> list[str]:
    """The task-level rules a verdict carries (whatever their severity)."""
    return sorted({f.rule for f in verdict.findings if f.rule.startswith(TASK_FLAG_PREFIX)})


SANITIZER_GATES = tuple(name for name, severity in TOOLS.items() if severity == "reject")
"""The compute-sanitizer tools whose errors reject (memcheck, racecheck, synccheck); initcheck only flags
(verify/sanitize.py). A verified CUDA solution passed every one of them in one run, so a kernel using shared memory
has passed the race check (racecheck and synccheck) before it counts."""


def sanitizer_passed(verdict: Verdict) -> bool | None:
    """Did this verdict's compute-sanitizer run pass? None when it never ran. A pass needs every rejecting tool to
    have finished the forward (its summary read, exit status 0) with no error: a tool that printed nothing, timed
    out or saw the program fail claims nothing, and that is not a pass."""
    report = verdict.sanitizer or {}
    if not report.get("ran"):
        return None
    if any(f.rule.startswith("sanitizer-") and f.severity == "reject" for f in verdict.findings):
        return False
    if "tools" not in report:  # a report from before synccheck ran (it lists no tools): its gates were these two
        return all(tool_passed(tool, report.get(tool)) for tool in ("memcheck", "racecheck"))
    if any(tool not in report["tools"] for tool in SANITIZER_GATES):
        return None  # the race check alone (verify/sanitize.py): clean as far as it went, not a full run
    return all(tool_passed(tool, report.get(tool)) for tool in SANITIZER_GATES)


def _sanitized(verdict: Verdict) -> bool:
    return sanitizer_passed(verdict) is True


def passed_every_trial(verdict: Verdict) -> bool:
    """This one verdict accepted the candidate on every one of at least one correctness trial."""
    c = verdict.correctness
    return verdict.accepted and c.trials > 0 and c.passed == c.trials


def check_candidate(history: Sequence[Verdict], task_flags: Sequence[str] = ()) -> Verification:
    """Judge a candidate from every verdict it received, in order, and the flags recorded for its task."""
    flags = set(task_flags)
    for verdict in history:
        flags.update(task_flags_of(verdict))
    if not history:
        return Verification(candidate_ok=False, task_flags=sorted(flags), reasons=["never verified"])
    last_reject = max((i for i, v in enumerate(history) if not v.accepted), default=-1)
    since = list(range(last_reject + 1, len(history)))
    latest = history[-1]
    reasons = []
    if not latest.accepted:
        reasons.append(f"latest verdict is {latest.status.value}: {latest.message}"[:200])
    rejecting = sorted({f.rule for i in since for f in history[i].findings if f.severity == "reject"})
    if rejecting:
        reasons.append("reject finding(s): " + ", ".join(rejecting))
    c = latest.correctness
    if latest.accepted and (c.trials == 0 or c.passed < c.trials):
        reasons.append(f"accepted on {c.passed}/{c.trials} trials")
    timed = any((t := history[i].timing) is not None and t.profile == "full" for i in since)
    if latest.accepted and not timed:
        quick = any(history[i].timing is not None for i in since)
        reasons.append("timed only with the quick profile since its last rejection" if quick
                       else "never timed since its last rejection")
    required = latest.env.device == "cuda"
    sanitized = any(_sanitized(history[i]) for i in since)
    if latest.accepted and required and not sanitized:
        reasons.append("not sanitized (compute-sanitizer memcheck/racecheck/synccheck/initcheck) on CUDA")
    unisolated = missing_isolation(latest.env.isolation)
    if latest.accepted and unisolated:
        reasons.append("judged without the minimum isolation: " + "; ".join(unisolated))
    weakened = sorted({name for i in since for name in history[i].settings.weakened})
    if weakened:
        reasons.append("judged with weakened settings: " + ", ".join(weakened))
    reasons += [f"task flag {flag}" for flag in sorted(flags)]
    ok = passed_every_trial(latest) and not rejecting and timed and (sanitized or not required) and not unisolated \
        and not weakened
    return Verification(candidate_ok=ok, task_flags=sorted(flags), timed=timed, sanitized=sanitized,
                        sanitizer_required=required, rests_on=since, reasons=reasons)


def rank(verdict: Verdict) -> tuple[int, float]:
    """Higher is better among passing candidates: a timed one beats an untimed one, then lower median time."""
    if verdict.timing is None:
        return (0, 0.0)
    return (1, -verdict.timing.candidate.median_ms)
