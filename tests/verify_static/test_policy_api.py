"""The public API: RULES, StaticPolicy knobs, JSON-clean findings and clear errors."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from static_fixtures import FIXTURES, load

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify.static import RULES, Rule, StaticPolicy, analyze_candidate


def _run(name: str, **policy) -> set[tuple[str, str]]:
    fx = load(FIXTURES / name)
    return {(f.rule, f.severity) for f in analyze_candidate(fx.source, fx.path.name, StaticPolicy(**policy))}


def test_rules_are_documented_one_liners():
    for rid, rule in RULES.items():
        assert isinstance(rule, Rule) and rule.id == rid
        assert rule.severity in ("reject", "flag")
        assert rule.rationale and "\n" not in rule.rationale and len(rule.rationale) < 160
        assert bool(rule.instead) == (rule.severity == "reject"), f"{rid}: a rejecting rule says what is accepted"


def test_a_static_rejection_names_the_rule_the_line_and_the_way_out():
    from kernelmosaic.verify.static.rules import reject_message

    fx = load(FIXTURES / "streams_cuda_host_thread.py")
    [reject] = [f for f in analyze_candidate(fx.source, fx.path.name, StaticPolicy()) if f.severity == "reject"]
    line = next(i for i, text in enumerate(fx.source.splitlines(), 1) if "std::thread warm" in text)
    message = reject_message(reject.rule, reject.message, reject.evidence)
    assert message.startswith(f"static check `streams-cuda` (line {line}): uses `std::thread`"), message
    assert message.endswith("; instead: " + RULES["streams-cuda"].instead)
    # a finding that already says its line and its way out is not told twice
    said = "calls `at::matmul` (line 7): write that step as a kernel of your own, or judge under `--policy kernelbench`"
    assert reject_message("aten-compute-in-extension", said, "c.py:7: x") == f"static check `aten-compute-in-extension`: {said}"


def test_torch_compute_policy_flag_and_allow():
    name = "torch_compute_matmul_operator.py"
    assert _run(name) == {("torch-compute", "reject")}
    assert _run(name, torch_compute="flag") == {("torch-compute", "flag")}
    assert _run(name, torch_compute="allow") == set()


def test_allowed_torch_ops_extends_the_allow_list():
    assert _run("torch_compute_functional_aliases.py") == {("torch-compute", "reject")}
    allowed = ["torch.nn.functional.gelu", "torch.tanh"]
    assert _run("torch_compute_functional_aliases.py", allowed_torch_ops=allowed) == set()
    assert _run("torch_compute_tensor_method_in_helper.py", allowed_torch_ops=["softmax"]) == set()


def test_allow_streams_accepts_side_streams_but_not_threads():
    assert _run("streams_python_side_stream.py", allow_streams=True) == set()
    assert _run("streams_cuda_private_stream.py", allow_streams=True) == set()
    assert _run("streams_cuda_host_thread.py", allow_streams=True) == {("streams-cuda", "reject")}
    # the fast form's streams go by the same switch: a CuPy side stream, and a stream handle taken at init
    assert _run("streams_python_cupy_side_stream.py") == {("streams-python", "reject")}
    assert _run("streams_python_cupy_side_stream.py", allow_streams=True) == set()
    assert ("streams-python", "reject") in _run("streams_python_cupy_stream_taken_at_init.py")
    assert _run("streams_python_cupy_stream_taken_at_init.py", allow_streams=True) == set()


def test_severity_override_and_env_allow_list():
    assert _run("printf_in_kernel.py", severity={"printf-in-kernel": "reject"}) == {("printf-in-kernel", "reject")}
    assert _run("env_tamper_launch_blocking.py", allowed_env_writes=["CUDA_LAUNCH_BLOCKING"]) == set()
    assert _run("import_not_allowed_problem_module.py", allowed_imports=["torch", "level1_problem"]) == set()


def test_policy_rejects_unknown_rule_and_unknown_field():
    with pytest.raises(ValidationError, match="not-a-rule"):
        StaticPolicy(severity={"not-a-rule": "flag"})
    with pytest.raises(ValidationError, match="torch_compte"):
        StaticPolicy(torch_compte="flag")
    with pytest.raises(ValidationError):
        StaticPolicy(torch_compute="maybe")


def test_findings_are_typed_and_json_clean_rejects_first():
    fx = load(FIXTURES / "try_fallback_torch.py")
    findings = analyze_candidate(fx.source)
    assert findings and all(isinstance(f, Finding) for f in findings)
    assert all(f.evidence.startswith("candidate.py:") for f in findings)
    json.dumps([f.model_dump(mode="json") for f in findings])
    severities = [f.severity for f in findings]
    assert severities == sorted(severities, key=lambda s: s != "reject")


def test_syntax_error_is_a_finding_not_an_exception():
    (f,) = analyze_candidate("class ModelNew(:\n    pass\n", "broken.py")
    assert (f.rule, f.severity) == ("syntax-error", "reject")
    assert f.evidence.startswith("broken.py:1:")


def test_empty_source_has_nothing_to_judge():
    rules = {f.rule for f in analyze_candidate("")}
    assert rules == {"no-custom-kernel-defined", "missing-modelnew"}


def test_cpp_line_numbers_follow_concatenated_sources():
    src = (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
        "A = 'torch::Tensor f(torch::Tensor x) {\\n'\n"
        "B = '  return at::exp(x);\\n}\\n'\n"
        "ext = load_inline(name='e', cpp_sources=A + B, functions=['f'])\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x)\n"
    )
    (f,) = analyze_candidate(src)
    assert f.rule == "aten-compute-in-extension"
    assert f.evidence == "candidate.py:5: return at::exp(x);"


def test_internal_error_rejects_instead_of_raising(monkeypatch, caplog):
    import kernelmosaic.verify.static.analyze as analyze

    def broken(*args, **kwargs):
        raise KeyError("simulated bug")

    monkeypatch.setattr(analyze, "check_forward", broken)
    fx = load(FIXTURES / "legit_cpu_add_relu.py")
    (f,) = analyze_candidate(fx.source, "c.py")
    assert (f.rule, f.severity) == ("unanalyzable", "reject")
    assert "KeyError" in f.message and "static analysis of c.py failed" in caplog.text


def test_analysis_is_fast_enough_to_run_before_every_compile():
    import time

    sources = [fx.source for fx in map(load, sorted(FIXTURES.glob("legit_*.py")))]
    started = time.perf_counter()
    for src in sources:
        analyze_candidate(src)
    per_candidate = (time.perf_counter() - started) / len(sources)
    assert per_candidate < 1.0, per_candidate  # ~0.02 s here; the bound only catches pathologies


def test_threat_model_page_documents_every_rule():
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "threat-model-static.md"
    text = page.read_text()
    missing = [rid for rid in RULES if f"| `{rid}` |" not in text]
    assert not missing, f"rules missing from {page.name}: {missing}"


def test_a_candidate_may_import_what_its_problem_imports():
    """KernelBench's Mamba problems import `einops`; an answer that keeps the reference's code keeps the import and
    was `import-not-allowed`. A module some rule owns stays that rule's even when the problem imports it."""
    candidate = "import torch\nimport ctypes\nfrom einops import rearrange\n\n\nclass ModelNew(torch.nn.Module):\n" \
                "    def forward(self, x):\n        return rearrange(x, 'b n -> n b')\n"
    rules = {f.rule for f in analyze_candidate(candidate, "c.py", StaticPolicy())}
    assert "import-not-allowed" in rules
    problem = "import torch\nimport ctypes\nimport torch.nn as nn\nfrom einops import rearrange, repeat\n"
    policy = StaticPolicy().with_problem_imports(problem)
    assert "einops" in policy.allowed_imports and "ctypes" in policy.allowed_imports
    after = {f.rule for f in analyze_candidate(candidate, "c.py", policy)}
    assert "import-not-allowed" not in after
    assert after & (rules - {"import-not-allowed"}) == rules - {"import-not-allowed"}, (rules, after)  # ctypes' own rule
    assert StaticPolicy().with_problem_imports("not python (") == StaticPolicy()
