"""Every corpus case (tests/corpus/README.md) through the static analysis only, under its policy: fast, no builds.

Honest cases must have no finding of severity `reject` (a static false reject is as bad as a missed cheat); a hack's
findings are recorded, not asserted, except where its header expects `static_reject`: most hacks are the runtime's
to catch. The corpus's own layout is checked too: headers, problems, and one source per extension name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.static import analyze_candidate

from .corpus import PROBLEMS, CorpusCase, CorpusError, load_corpus, parse_case, policies

CASES = load_corpus()
HONEST = [(c, p) for c in CASES if not c.is_hack for p in policies(c)]
HACKS = [(c, p) for c in CASES if c.is_hack for p in policies(c)]


def _analyze(case: CorpusCase, policy: str) -> list[Finding]:
    static = VerifyConfig(device=case.device, policy=policy).static_policy()
    return analyze_candidate(case.path.read_text(), case.path.name, static)


def _describe(findings: list[Finding]) -> str:
    return "\n".join(f"  {f.severity} {f.rule}: {f.message} [{f.evidence}]" for f in findings)


@pytest.mark.parametrize(("case", "policy"), HONEST, ids=[f"{c.id}[{p}]" for c, p in HONEST])
def test_honest_case_has_no_static_reject(case: CorpusCase, policy: str):
    findings = _analyze(case, policy)
    rejects = [f for f in findings if f.severity == "reject"]
    assert not rejects, f"{case.id} under {policy} ({case.style}): static rejects\n{_describe(rejects)}"


@pytest.mark.parametrize(("case", "policy"), HACKS, ids=[f"{c.id}[{p}]" for c, p in HACKS])
def test_hack_static_findings_are_recorded(case: CorpusCase, policy: str, record_property):
    findings = _analyze(case, policy)
    record_property("static_findings", [f"{f.severity}:{f.rule}" for f in findings])
    broken = [f for f in findings if f.rule in ("unanalyzable", "syntax-error")]
    assert not broken, f"{case.id}: the analysis itself failed\n{_describe(broken)}"
    if case.status == "static_reject":
        assert any(f.severity == "reject" for f in findings), f"{case.id} expects a static reject\n{_describe(findings)}"


def test_corpus_has_cases_of_every_kind():
    assert any(c.device == "cpu" and not c.is_hack for c in CASES)
    assert any(c.device == "cpu" and c.is_hack for c in CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("problem", sorted(PROBLEMS.glob("*.py")), ids=lambda p: p.stem)
def test_problem_is_in_kernelbench_format(problem: Path):
    tree = ast.parse(problem.read_text(), problem.name)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    missing = {"Model", "get_inputs", "get_init_inputs"} - defined
    assert not missing, f"{problem.name} defines no {sorted(missing)}"
    assert problem.stem.startswith(("kb_l1_", "kb_l2_", "kb_l3_")), f"{problem.name}: name it kb_l<L>_<NNN>_<slug>.py"


def test_every_problem_is_used():
    used = {c.problem for c in CASES}
    unused = [p.name for p in sorted(PROBLEMS.glob("*.py")) if p not in used]
    assert not unused, f"problems no case solves: {unused}"


def _load_inline_builds(path: Path) -> list[tuple[str, str]]:
    """(name, every other keyword as resolved text) of each `load_inline(...)` call whose keywords are literals or
    module-level string constants; calls with anything else are left out (nothing to compare)."""
    tree = ast.parse(path.read_text(), path.name)
    strings = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
               for t in n.targets if isinstance(t, ast.Name)}

    def resolve(node: ast.expr) -> object:
        if isinstance(node, ast.Name) and node.id in strings:
            return strings[node.id]
        if isinstance(node, ast.List | ast.Tuple):
            return [resolve(e) for e in node.elts]
        return ast.literal_eval(node)

    out = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and any(k.arg == "name" for k in call.keywords)):
            continue
        if not any(k.arg in ("cpp_sources", "cuda_sources") for k in call.keywords):
            continue
        try:
            kwargs = {k.arg: resolve(k.value) for k in call.keywords if k.arg not in ("verbose", "build_directory")}
        except ValueError:
            continue
        out.append((str(kwargs.pop("name")), repr(sorted(kwargs.items()))))
    return out


def test_one_source_per_extension_name():
    """Candidates that share an extension name share its whole build (sources, functions, flags), so the build
    cache builds it once; a name reused for another source would build twice and hide which one a case ran."""
    seen: dict[str, tuple[str, str]] = {}
    for case in CASES:
        for name, build in _load_inline_builds(case.path):
            first = seen.setdefault(name, (case.id, build))
            assert first[1] == build, f"{case.id}: extension {name!r} differs from its build in {first[0]}"
    assert seen


def test_malformed_header_names_the_file(tmp_path: Path):
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "kb_l1_019_relu.py").write_text("")
    (tmp_path / "cpu").mkdir()
    good = "# corpus: problem=kb_l1_019_relu device=cpu expect=accepted policy=both\n# style: s\n# class: 1, 8\n"
    case = tmp_path / "cpu" / "kb_l1_019_relu__x.py"
    case.write_text(good)
    parsed = parse_case(case, tmp_path / "problems")
    assert (parsed.policy, parsed.classes, parsed.status) == ("both", ("1", "8"), None)
    for bad in (good.replace("policy=both", "policy=lenient"), good.replace("# class: 1, 8", "# class: nine"),
                good.replace("relu device", "gelu device"), good.replace("expect=accepted", "expect=rejected"),
                good.replace("# style: s\n", "")):
        case.write_text(bad)
        with pytest.raises(CorpusError, match="kb_l1_019_relu__x.py"):
            parse_case(case, tmp_path / "problems")
