"""Every fixture candidate yields exactly the findings its header names; legit ones yield none."""

from __future__ import annotations

import re

import pytest
from static_fixtures import all_fixtures

from kernelmosaic.verify.static import RULES, StaticPolicy, analyze_candidate

FIXTURES = all_fixtures()
BREAKING = [f for f in FIXTURES if not f.path.name.startswith("legit_")]
LEGIT = [f for f in FIXTURES if f.path.name.startswith("legit_")]


@pytest.mark.parametrize("fx", BREAKING, ids=lambda f: f.path.stem)
def test_breaking_fixture_gets_exact_rules(fx):
    findings = analyze_candidate(fx.source, fx.path.name, StaticPolicy(**fx.policy))
    got = {(f.rule, f.severity) for f in findings}
    assert got == fx.expected, "\n".join(f"{f.rule} {f.severity}: {f.message} @ {f.evidence}" for f in findings)
    # The file name announces the rule it breaks.
    assert any(fx.path.stem.startswith(rule.replace("-", "_")) for rule, _ in fx.expected)


@pytest.mark.parametrize("fx", LEGIT, ids=lambda f: f.path.stem)
def test_legit_fixture_has_no_reject(fx):
    findings = analyze_candidate(fx.source, fx.path.name, StaticPolicy(**fx.policy))
    assert not [f for f in findings if f.severity == "reject"], findings
    assert {(f.rule, f.severity) for f in findings} == fx.expected


def test_every_rule_has_a_breaking_fixture():
    covered = {rule for fx in BREAKING for rule, _ in fx.expected}
    assert covered == set(RULES), f"rules without a fixture: {sorted(set(RULES) - covered)}"


def test_enough_legit_fixtures():
    names = {f.path.stem for f in LEGIT}
    assert {"legit_cpu_add_relu", "legit_cuda_elementwise", "legit_cuda_tiled_matmul", "legit_triton_softmax",
            "legit_tricky_comments"} <= names


@pytest.mark.parametrize("fx", BREAKING, ids=lambda f: f.path.stem)
def test_evidence_points_at_the_offending_line(fx):
    lines = fx.source.splitlines()
    for f in analyze_candidate(fx.source, fx.path.name, StaticPolicy(**fx.policy)):
        m = re.match(rf"{re.escape(fx.path.name)}:(\d+): (.*)$", f.evidence)
        assert m, f.evidence
        line, snippet = int(m.group(1)), m.group(2)
        if line == 0:
            # About the whole file; only rules that can have no better place use it.
            assert f.rule in ("unanalyzable", "missing-modelnew", "no-custom-kernel-defined") and not snippet
            continue
        assert 1 <= line <= len(lines)
        if f.rule != "syntax-error" and snippet:
            # The snippet is the text of that line (for macros: the part of it after the macro name).
            assert snippet[:30] in lines[line - 1], (f.rule, line, snippet)
