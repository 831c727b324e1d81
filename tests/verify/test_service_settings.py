"""Settings that weaken the checks (verify/strength.py): recorded in every verdict, never *verified*, and refused by
the verifier service when weaker than its own, whichever way a client asks (its settings, `--set`, a settings file in
the working directory it names)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from kernelmosaic.contracts.isolation import MINIMUM
from kernelmosaic.contracts.verdict import Correctness, Env, SettingsUsed, Stat, Status, Timing, Verdict
from kernelmosaic.contracts.verified import check_candidate
from kernelmosaic.paths import socket_path
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.forwarded import run_verify
from kernelmosaic.verify.service import serve
from kernelmosaic.verify.service_client import remote_verify
from kernelmosaic.verify.service_errors import ServiceDeclined
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.strength import service_view, settings_used

from .kit import PROBLEM_ADD_RELU, write

PLAIN_TORCH = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return torch.relu(a + b)\n"


def _used(tmp_path, **over) -> SettingsUsed:
    return settings_used(VerifyConfig(cache_dir=tmp_path, device="cpu", **over), timing=over.get("timing", True),
                         sanitize=over.get("sanitize", False))


def test_what_a_verdict_records_of_its_settings(tmp_path):
    assert _used(tmp_path) == SettingsUsed()  # the defaults: nothing recorded
    assert _used(tmp_path, seed=7) == SettingsUsed()  # the seed is correctness.seed
    three = _used(tmp_path, trials=3, policy="kernelbench", timing=False)
    assert three.changed == {"trials": "3", "policy": '"kernelbench"', "timing": "false"} and three.weakened == []
    assert _used(tmp_path, trials=2).weakened == ["trials"]
    assert _used(tmp_path, trials=9, sanitize=True).weakened == []  # stronger than the defaults
    off = _used(tmp_path, static_checks=False)
    assert off.changed == {"static_checks": "false"} and off.weakened == ["static_checks"]
    assert _used(tmp_path, atol=1e-3).weakened == ["tolerance"]
    assert _used(tmp_path, atol=1e-6).weakened == []
    assert _used(tmp_path, precision="bf16").weakened == []  # its own precision's tolerances
    loose = _used(tmp_path, static=StaticPolicy(torch_compute="flag", allowed_imports=["torch", "requests"]))
    assert loose.weakened == ["static"] and loose.changed["static.torch_compute"] == '"flag"'
    assert _used(tmp_path, static=StaticPolicy(severity={"torch-compute": "reject"})).weakened == []
    for name in ("derive_alt", "race_check"):
        assert _used(tmp_path, **{name: False}).weakened == [name]
    for name in ("timed_checks", "input_sets", "dataflow_functions", "robustness_trials"):
        assert _used(tmp_path, **{name: 1}).weakened == [name]


def test_every_static_policy_field_has_its_place_in_the_rule():
    """A new StaticPolicy field must be compared in strength._static before this passes."""
    assert set(StaticPolicy.model_fields) == {"torch_compute", "allowed_torch_ops", "allow_triton", "allow_streams",
                                              "allowed_imports", "allowed_env_writes", "severity"}


def test_the_service_keeps_its_own_workers_and_limits(tmp_path):
    own = VerifyConfig(cache_dir=tmp_path, device="cpu")
    asked = own.model_copy(update={"judges_per_gpu": 64, "memory_limit_gb": 500.0, "trials": 7})
    judged, kept = service_view(asked, own)
    assert sorted(kept) == ["judges_per_gpu", "memory_limit_gb"] and judged.judges_per_gpu == 3 and judged.trials == 7


def _verified_verdict(settings: SettingsUsed) -> Verdict:
    isolated = sorted({layer for options in MINIMUM.values() for layer in options[0]})
    stat = Stat(median_ms=1.0, q1_ms=1.0, q3_ms=1.0, samples=9)
    return Verdict(accepted=True, status=Status.accepted, message="ok", correctness=Correctness(trials=5, passed=5),
                   timing=Timing(candidate=stat, eager=stat, speedup_vs_eager=1.0, timer="host"),
                   env=Env(device="cpu", isolation=isolated), settings=settings)


def test_a_verdict_judged_with_weakened_settings_is_never_verified():
    assert check_candidate([_verified_verdict(SettingsUsed(changed={"trials": "3"}))]).verified
    weak = check_candidate([_verified_verdict(SettingsUsed(changed={"static_checks": "false"},
                                                           weakened=["static_checks"]))])
    assert not weak.verified and "judged with weakened settings: static_checks" in weak.reasons
    # nor one resting on an earlier weakened verdict since its last rejection
    history = [_verified_verdict(SettingsUsed(weakened=["trials"])), _verified_verdict(SettingsUsed())]
    assert not check_candidate(history).verified


@pytest.fixture
def service(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(cache))
    ready, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=serve, args=(cache,), kwargs={"ready": ready, "stop": stop}, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield cache
    stop.set()
    thread.join(60)


def test_the_service_refuses_checks_weaker_than_its_own(tmp_path, service):
    problem, cand = write(tmp_path, "p.py", PROBLEM_ADD_RELU), write(tmp_path, "c.py", PLAIN_TORCH)
    for weaker in ({"static_checks": False}, {"trials": 2}, {"atol": 0.5}, {"static": StaticPolicy(torch_compute="allow")}):
        with pytest.raises(ServiceDeclined, match="at least as strong as its own") as refused:
            remote_verify(VerifyConfig(cache_dir=service, device="cpu", **weaker), problem, cand)
        assert "never verified" in str(refused.value)
    # a request naming another build cache, sent to this service's socket (a crafted client)
    elsewhere = VerifyConfig(cache_dir=tmp_path / "elsewhere", device="cpu").model_dump(mode="json")
    request = {"op": "verify", "problem": str(problem), "candidate": str(cand), "config": elsewhere}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(socket_path(service)))
        sock.sendall((json.dumps(request) + "\n").encode())
        reply = json.loads(sock.makefile().readline())
    assert reply["ok"] is False and reply["kind"] == "declined" and "builds in" in reply["error"], reply
    assert not (tmp_path / "elsewhere").exists()


def test_a_forwarded_command_never_judges_weaker_inside_the_service(tmp_path, service):
    write(tmp_path, "p.py", PROBLEM_ADD_RELU)
    write(tmp_path, "c.py", PLAIN_TORCH)
    argv = ["verify", "p.py", "c.py", "--json", "--device", "cpu", "--set", "verify.static_checks=false"]
    reply = run_verify(argv, tmp_path, service)
    assert reply["ok"] is False and "static_checks=false" in reply["declined"], reply
    # a settings file in the working directory the client names: declined as the client itself declines it
    (tmp_path / "kernelmosaic.toml").write_text(f'[verify]\ncache_dir = "{tmp_path / "other"}"\nstatic_checks = false\n')
    reply = run_verify(["verify", "p.py", "c.py", "--json", "--device", "cpu"], tmp_path, service)
    assert reply["ok"] is False and "settings file" in reply["declined"], reply
    assert not (tmp_path / "other").exists()  # nothing was built there


@pytest.mark.slow
def test_static_checks_off_through_the_cli_is_judged_apart_and_says_so(tmp_path, service):
    """`verify --set verify.static_checks=false` with the service running: refused there, judged in the client's
    own process, and the verdict names the weakened setting; it is never verified."""
    write(tmp_path, "p.py", PROBLEM_ADD_RELU)
    write(tmp_path, "c.py", PLAIN_TORCH)
    argv = ["verify", "p.py", "c.py", "--json", "--device", "cpu", "--no-timing", "--set", "verify.static_checks=false"]
    done = subprocess.run([sys.executable, "-m", "kernelmosaic", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "KERNELMOSAIC_CACHE": str(service)})
    verdict = Verdict.model_validate(json.loads(done.stdout))
    assert "note: the service judges only with checks at least as strong" in done.stderr, done.stderr[-2000:]
    assert verdict.workers is None or verdict.workers.served_by == ""  # judged in the client's process
    assert verdict.settings.weakened == ["static_checks"] and verdict.settings.changed["static_checks"] == "false"
    if verdict.accepted:
        assert "judged with weakened settings (static_checks): never verified" in verdict.message
    assert "judged with weakened settings: static_checks" in check_candidate([verdict]).reasons
