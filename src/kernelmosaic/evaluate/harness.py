"""The verifier as evaluation uses it: every timed verdict also judged on alternative shapes, under the run's policy.

The agent harness gets this wrapper instead of the bare Verifier, so its benchmark() and submit() verdicts carry a
robustness section without any change to the agent; correctness-only calls (test()) stay as cheap as before.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.tasks.shapes import apply_shape_overrides, derive_alternatives
from kernelmosaic.verify.robustness import Alternative

__all__ = ["with_alternatives", "alternatives_for", "EvalVerifier", "for_evaluation", "for_seeds"]

log = logging.getLogger(__name__)


def alternatives_for(problem: Path, judged: Path | None = None) -> list[Alternative]:
    """One alternative per derived shape set (input sizes moved to nearby odd sizes), written beside the problem.
    `judged`: the problem file the verifier runs (its small form on the CPU, `problem_shapes.problem_at_shapes`),
    whose sizes the alternatives move; default `problem`."""
    source = Path(judged or problem).read_text(encoding="utf-8")
    try:
        derived = derive_alternatives(source)
    except (SyntaxError, ValueError) as exc:
        log.info("%s: no alternative shapes derived (%s)", problem, exc)
        return []
    out = []
    for k, overrides in enumerate(derived):
        path = Path(problem).with_name(f"{Path(problem).stem}.alt{k}.py")
        path.write_text(apply_shape_overrides(source, overrides), encoding="utf-8")
        out.append(Alternative(label=", ".join(f"{n}={v}" for n, v in overrides.items()), problem=path))
    return out


class EvalVerifier:
    """Delegates to a Verifier; `verify(timing=True)` adds the problem's alternatives (when enabled)."""

    def __init__(self, inner: Any, alternatives: bool) -> None:
        self.inner, self.alternatives = inner, alternatives

    def verify(self, problem: Path, candidate: Path, *, timing: bool | None = None, sanitize: bool | None = None,
               **options: Any) -> Verdict:
        timed = self.inner.config.timing if timing is None else timing
        if timed and self.alternatives and "alternatives" not in options:
            from kernelmosaic.verify.problem_shapes import problem_at_shapes

            judged = problem_at_shapes(Path(problem), self.inner.config).path  # small on the CPU: alternatives too
            options["alternatives"] = alternatives_for(problem, judged)
        return self.inner.verify(problem, candidate, timing=timing, sanitize=sanitize, **options)

    def __getattr__(self, name: str) -> Any:  # compile, profile, device_peaks, config, close
        return getattr(self.inner, name)


def for_evaluation(verifiers: Callable[[str], Any], alternatives: bool) -> Callable[[str], EvalVerifier]:
    """`verifiers(precision)` (a VerifierSet, local or on the cluster) as evaluation judges with it."""
    return lambda precision: EvalVerifier(verifiers(precision), alternatives)


def with_alternatives(verifiers: Callable[[str], Any]) -> Callable[[str], EvalVerifier]:
    """`for_evaluation` with derived shapes judged too: the `wrap` an evaluation's episodes judge with (a
    module-level function, so Ray sends it to episode actors by name)."""
    return for_evaluation(verifiers, True)


def for_seeds(verifiers: Any, seeds: int, alternatives: bool) -> list[Callable[[str], EvalVerifier]]:
    """`seeds` verifier sources as evaluation judges with them (the `wrap` of judging generations): `verifiers` (a
    VerifierSet, local or on the cluster) under its own seed, then copies under other base seeds, each drawn at
    random unless the settings fix one (`[verify] seed`: every copy keeps it)."""
    base = verifiers.base
    fixed = "seed" in base.model_fields_set
    sets = [verifiers, *(verifiers.reseeded(base.seed if fixed else secrets.randbelow(1 << 31))
                         for _ in range(seeds - 1))]
    return [for_evaluation(s, alternatives) for s in sets]
