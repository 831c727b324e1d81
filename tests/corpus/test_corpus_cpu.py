"""Every CPU corpus case (tests/corpus/README.md) through the real CPU verifier, timing on (the `quick` profile),
under its policy: honest cases must be accepted, hacks rejected. A `policy=both` case is judged under `strict`, whose
runtime checks are kernelbench's and more (test_corpus_static.py checks it under both); judging it twice would double
the module's cost for no verdict that could differ.

One Verifier judges the whole corpus, its candidates batched with `verify_many` (compiles ahead of judgement; the
cases of one extension share its build). Problems run at their small sizes (`tasks.shapes.small_shapes`, the rule
the sanitizer and the audits use), written beside the test as shrunk copies: KernelBench's own sizes are for the GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmosaic.tasks.shapes import apply_shape_overrides, small_shapes
from kernelmosaic.verify import Status, Verdict, Verifier, VerifyConfig

from .corpus import CorpusCase, load_corpus, policies

# The module's one Verifier judges every case in its fixture, which the first test waits for: 15 extension builds
# (the cases of one extension share its build) and one judgement per case, minutes on two cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

CASES = [c for c in load_corpus() if c.device == "cpu"]
RUNS = [(c, policies(c)[0]) for c in CASES]


def _small_problem(problem: Path, folder: Path) -> Path:
    source = problem.read_text()
    path = folder / problem.name
    path.write_text(apply_shape_overrides(source, small_shapes(source)))
    return path


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[tuple[str, str], Verdict]:
    folder = tmp_path_factory.mktemp("corpus-problems")
    small = {p: _small_problem(p, folder) for p in sorted({c.problem for c in CASES})}
    config = VerifyConfig(device="cpu", trials=3, timing=True, timing_profile="quick", compile_baseline=False,
                          memory_limit_gb=8)
    out: dict[tuple[str, str], Verdict] = {}
    with Verifier(config) as verifier:
        for policy in ("strict", "kernelbench"):
            runs = [c for c, p in RUNS if p == policy]
            pairs = [(small[c.problem], c.path) for c in runs]
            for index, verdict in verifier.verify_many(pairs, policy=policy, timing=True, timing_profile="quick"):
                out[(runs[index].id, policy)] = verdict
    return out


def _explain(case: CorpusCase, policy: str, verdict: Verdict) -> str:
    flags = "; ".join(f"{f.severity} {f.rule}: {f.message} [{f.evidence}]" for f in verdict.findings)
    return f"{case.id} under {policy} ({case.style}): {verdict.status}: {verdict.message}\n  findings: {flags or 'none'}"


@pytest.mark.parametrize(("case", "policy"), RUNS, ids=[f"{c.id}[{p}]" for c, p in RUNS])
def test_cpu_case_gets_its_verdict(verdicts, case: CorpusCase, policy: str):
    verdict = verdicts[(case.id, policy)]
    assert verdict.policy == policy
    if case.expect == "accepted":
        assert verdict.accepted and verdict.status == Status.accepted, _explain(case, policy, verdict)
        assert verdict.timing is not None and verdict.timing.candidate.samples > 0, _explain(case, policy, verdict)
        return
    assert not verdict.accepted, _explain(case, policy, verdict)
    if case.status is not None:
        assert verdict.status == Status(case.status), _explain(case, policy, verdict)
