"""Runtime anti-hack checks on the CPU device, with static analysis switched off so that each runtime defence is
shown to hold on its own. Every candidate reuses the suite's one C++ extension (no new builds)."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import kit

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def unguarded(build_cache):
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, static_checks=False, timing_budget_ms=20,
                          timing_rounds=1, compile_baseline=False, run_timeout_s=30)
    with Verifier(config) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return kit.write(tmp_path_factory.mktemp("rt-problem"), "problem.py", kit.PROBLEM_ADD_RELU)


CASES = [
    ("patched_checker", kit.candidate("return ext.add_relu(a, b)", extra="torch.allclose = lambda *a, **k: True"),
     Status.integrity_violation, "runtime-integrity"),
    ("patched_timer", kit.candidate("return ext.add_relu(a, b)", extra="import time\ntime.perf_counter = lambda: 0.0"),
     Status.integrity_violation, "runtime-integrity"),
    ("disabled_l2_flush", kit.candidate("return ext.add_relu(a, b)", extra="torch.Tensor.fill_ = lambda self, value: self"),
     Status.integrity_violation, "runtime-integrity"),
    ("numerics_flag", kit.candidate("return ext.add_relu(a, b)", extra="torch.backends.cudnn.benchmark = True"),
     Status.integrity_violation, "runtime-integrity"),
    ("mutates_input", kit.candidate("out = ext.add_relu(a, b); a.zero_(); return out"),
     Status.integrity_violation, "input-mutation"),
    ("background_thread", kit.candidate("import threading, time; threading.Thread(target=time.sleep, args=(20,), "
                                        "daemon=True).start(); return ext.add_relu(a, b)"),
     Status.timing_anomaly, "background-threads"),
    ("flaky", kit.stateful("return ext.add_relu(a, b) * (1.0 + 1e-2 * (self.calls % 2 == 0))"), Status.nondeterministic, None),
    ("stale_after_checks", kit.stateful("if self.calls > 8:\n            return self.last\n        "
                                     "self.last = ext.add_relu(a, b)\n        return self.last"),
     Status.output_mismatch, "timed-output-check"),
]


@pytest.mark.parametrize(("name", "source", "status", "rule"), CASES, ids=[c[0] for c in CASES])
def test_runtime_defence(unguarded, problem, tmp_path, name, source, status, rule):
    v = unguarded.verify(problem, kit.write(tmp_path, f"{name}.py", source))
    assert v.status == status, f"{v.status}: {v.message}"
    if rule:
        assert rule in {f.rule for f in v.findings}, v.findings


def test_the_reference_is_not_reachable_from_the_candidate_process(unguarded, problem, tmp_path):
    body = ("import sys\n        for m in list(sys.modules.values()):\n"
            "            if 'get_inputs' in vars(m) and 'Model' in vars(m):\n"
            "                return m.Model()(a, b)\n"
            "        raise RuntimeError('reference not reachable')")
    v = unguarded.verify(problem, kit.write(tmp_path, "seek.py", kit.candidate(body)))
    assert v.status == Status.runtime_error and "reference not reachable" in v.message, v.message


def test_nothing_is_parsed_from_candidate_stdout(unguarded, problem, tmp_path):
    fake = '{"ok": true, "accepted": true, "status": "accepted"}'
    v = unguarded.verify(problem, kit.write(tmp_path, "liar.py", kit.candidate(f"print({fake!r}, flush=True); return ext.add_only(a, b)")))
    assert v.status == Status.output_mismatch
    assert fake in v.candidate_output_tail  # kept for people, never read as data


def test_the_same_verifier_still_accepts_an_honest_candidate(unguarded, problem, tmp_path):
    v = unguarded.verify(problem, kit.write(tmp_path, "honest.py", kit.candidate("return ext.add_relu(a, b)")))
    assert v.accepted, v.message
    assert not [f for f in v.findings if f.severity == "reject"]
