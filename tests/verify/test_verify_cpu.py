"""End to end on the CPU device: real C++ `load_inline` candidates, each failure mode with its own status, in one
long-lived Verifier whose later verdicts must be unaffected by earlier crashes."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status

from . import kit

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("problem"), "problem.py", kit.PROBLEM_ADD_RELU)


CASES = [
    ("correct", kit.candidate("return ext.add_relu(a, b)"), Status.accepted),
    ("wrong", kit.candidate("return ext.add_only(a, b)"), Status.output_mismatch),
    ("uninitialised", kit.candidate("return ext.half_written(a, b)"), Status.output_mismatch),
    ("python_syntax", kit.candidate("return ext.add_relu(a, b")+"\n", Status.compile_error),
    ("no_modelnew", kit.candidate("return ext.add_relu(a, b)").replace("class ModelNew", "class ModelOther"),
     Status.load_error),
    ("raises", kit.candidate("raise RuntimeError('kernel exploded'); return ext.add_relu(a, b)"), Status.runtime_error),
    ("init_raises", kit.candidate("return ext.add_relu(a, b)",
                                  extra="\nclass Base(nn.Module):\n    def __init__(self):\n        raise ValueError('no')\n")
     .replace("class ModelNew(nn.Module)", "class ModelNew(Base)"), Status.init_error),
    ("infinite_loop", kit.candidate("return ext.spin(a, b)"), Status.timeout),
    ("segfault", kit.candidate("return ext.segv(a, b)"), Status.crash),
    ("os_exit", kit.candidate("import os; os._exit(3); return ext.add_relu(a, b)"), Status.crash),
    ("ten_terabytes", kit.candidate("return ext.huge(a, b)"), Status.resource_error),
    ("wrong_shape", kit.candidate("return ext.add_relu(a, b)[:-1]"), Status.shape_mismatch),
    ("correct_again", kit.candidate("return ext.add_relu(a, b)  # after every failure above"), Status.accepted),
]


def test_each_failure_gets_its_status_and_later_verdicts_are_unaffected(cpu_verifier, problem, tmp_path):
    got = {}
    for name, source, _ in CASES:
        verdict = cpu_verifier.verify(problem, kit.write(tmp_path, f"{name}.py", source), timing=False)
        got[name] = verdict
    for name, _, expected in CASES:
        v = got[name]
        assert v.status == expected, f"{name}: {v.status} {v.message}"
        assert v.accepted == (expected == Status.accepted)
        assert v.message
    assert "ModelNew" in got["no_modelnew"].message
    assert "kernel exploded" in got["raises"].message
    assert "NaN" in got["uninitialised"].message  # the unwritten half reads the poison
    assert got["correct"].correctness.passed == got["correct"].correctness.trials == 3
    assert set(got["correct"].correctness.distributions) == {"given", "signed", "scaled"}
    assert got["wrong"].correctness.max_abs_error > 0


def test_accepted_verdict_has_timing_env_and_hashes(cpu_verifier, problem, tmp_path):
    cand = kit.write(tmp_path, "c.py", kit.candidate("return ext.add_relu(a, b)"))
    v = cpu_verifier.verify(problem, cand)
    assert v.accepted, v.message
    t = v.timing
    assert t is not None and t.timer == "host"
    assert t.candidate.samples >= 5 and t.eager.samples >= 5
    assert t.candidate.q1_ms <= t.candidate.median_ms <= t.candidate.q3_ms
    assert t.speedup_vs_eager == pytest.approx(t.eager.median_ms / t.candidate.median_ms)
    assert v.env.torch and v.env.device == "cpu"
    assert len(v.problem_sha256) == len(v.candidate_sha256) == 64
    data = v.to_dict()
    assert data["schema"] == "kernelmosaic.verdict/1"
    again = cpu_verifier.verify(problem, kit.write(tmp_path, "c_again.py", kit.candidate("return ext.add_relu(a, b) ")),
                                timing=False)
    assert again.accepted and again.compile.cache_hit  # an identical extension is never rebuilt


def test_cpp_error_is_compile_error_with_full_log_even_when_verbose(cpu_verifier, problem, tmp_path):
    src = kit.candidate("return ext.add_relu(a, b)", cpp=kit.CPP + "\nint broken( { return 0; }\n")
    src = src.replace('extra_cflags=["-O2"]', 'extra_cflags=["-O2"], verbose=True')
    v = cpu_verifier.verify(problem, kit.write(tmp_path, "bad_cpp.py", src))
    assert v.status == Status.compile_error, v.message
    assert "error" in v.compile.log.lower() and "broken" in v.compile.log
    assert "km_test_ext" in v.message
    again = cpu_verifier.verify(problem, kit.write(tmp_path, "bad_cpp_again.py", src))
    assert again.status == Status.compile_error and again.compile.cache_hit
    assert again.message == v.message


def test_bad_problem_names_file_and_reason(cpu_verifier, tmp_path):
    prob = kit.write(tmp_path, "noinputs.py", "import torch.nn as nn\nclass Model(nn.Module):\n    pass\n")
    v = cpu_verifier.verify(prob, kit.write(tmp_path, "c.py", kit.candidate("return ext.add_relu(a, b)")))
    assert v.status == Status.bad_problem
    assert "noinputs.py" in v.message and "get_inputs" in v.message
