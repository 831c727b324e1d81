"""One configuration mechanism for generate: kernelmosaic.toml sections, `--set` overrides, flags win; errors name
the file, the key and the allowed values; the API key is never a stored setting."""

from __future__ import annotations

import pytest
from resume_driver import FakeVerifierSet
from typer.testing import CliRunner

import kernelmosaic.verify.verifier_set as agent_verifiers
from kernelmosaic.cli import app
from kernelmosaic.config import ConfigError, build, read_config
from kernelmosaic.store import open_store
from kernelmosaic.verify.config import VerifyConfig


@pytest.fixture
def fake_verifiers(monkeypatch):
    monkeypatch.setattr(agent_verifiers, "VerifierSet", FakeVerifierSet)  # the local executor's


def _generate(tmp_path, *args):
    url = f"sqlite:///{tmp_path / 'km.db'}"
    result = CliRunner().invoke(app, ["generate", "--db", url, "--no-live", "--limit", "1", *args], env={"COLUMNS": "200"})
    return result, url


def test_file_then_set_then_flags(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernelmosaic.toml").write_text(
        '[generate]\nconcurrency = 2\nagent.device = "cpu"\nagent.budgets.max_turns = 7\n'
        '[verify]\ntrials = 2\n[model]\n')
    result, url = _generate(tmp_path, "--set", "verify.trials=3", "--set", "generate.agent.budgets.max_cost_usd=2.5",
                            "--max-turns", "9")
    assert result.exit_code == 0, result.output
    with open_store(url) as store:
        config = store.latest_run().config
    assert config["concurrency"] == 2 and config["agent"]["device"] == "cpu"
    assert config["agent"]["budgets"]["max_turns"] == 9, "an explicit flag wins over the file"
    assert config["agent"]["budgets"]["max_cost_usd"] == 2.5 and config["verify"] == {"trials": 3}


def test_errors_name_the_key_and_the_allowed_values(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad_device, url = _generate(tmp_path, "--device", "cpu", "--set", "verify.precision=fp8")
    assert bad_device.exit_code == 2 and "precision" in bad_device.output and "'fp16'" in bad_device.output
    secret, _ = _generate(tmp_path, "--device", "cpu", "--set", "model.api_key=sk-123")
    assert secret.exit_code == 2 and "OPENAI_API_KEY" in secret.output
    (tmp_path / "broken.toml").write_text("[generate\n")
    broken, _ = _generate(tmp_path, "--config", str(tmp_path / "broken.toml"))
    assert broken.exit_code == 2 and "broken.toml: not valid TOML" in broken.output
    unknown, _ = _generate(tmp_path, "--device", "cpu", "--set", "generate.concurrenzy=3")
    assert unknown.exit_code == 2 and "concurrenzy" in unknown.output and "did you mean `concurrency`" in unknown.output
    with open_store(url) as store:
        assert store.list_runs() == [], "nothing is created from a bad configuration"


def test_build_and_read_config_directly(tmp_path):
    tree = read_config(None, ["verify.trials=4", "verify.device=cpu", "verify.static_checks=false"], cwd=tmp_path)
    config = build(VerifyConfig, tree, "verify")
    assert (config.trials, config.device, config.static_checks) == (4, "cpu", False)
    with pytest.raises(ConfigError, match=r"\[verify\] device: .*allowed: 'cuda', 'cpu'"):
        build(VerifyConfig, read_config(None, ["verify.device=tpu"], cwd=tmp_path), "verify")
    with pytest.raises(ConfigError, match="expected SECTION.KEY=VALUE"):
        read_config(None, ["trials"], cwd=tmp_path)


def test_policy_flag_reaches_the_verifier_settings(fake_verifiers, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result, url = _generate(tmp_path, "--device", "cpu", "--policy", "kernelbench")
    assert result.exit_code == 0, result.output
    with open_store(url) as store:
        config = store.latest_run().config
    assert config["verify"] == {"policy": "kernelbench"}
    bad, _ = _generate(tmp_path, "--device", "cpu", "--policy", "loose")
    assert bad.exit_code == 2 and "policy" in bad.output and "'kernelbench'" in bad.output
