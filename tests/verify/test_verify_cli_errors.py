"""`verify` and `verify-batch` refuse unusable invocations with exit 2, a message naming the option (or file, or
setting) and what is allowed, on stderr; stdout stays empty, so `--json` output is never polluted. No worker runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import kernelmosaic.verify.settings as settings
from kernelmosaic.cli import app
from kernelmosaic.config import ConfigError, read_config
from kernelmosaic.verify.settings import DeviceUnavailable, verify_settings

from . import kit


@pytest.fixture
def pair(tmp_path):
    problem = kit.write(tmp_path, "problem.py", kit.PROBLEM_ADD_RELU)
    candidate = kit.write(tmp_path, "candidate.py", kit.candidate("return ext.add_relu(a, b)"))
    return problem, candidate


def _verify(*args):
    return CliRunner().invoke(app, ["verify", *map(str, args), "--json"], env={"COLUMNS": "200"})


@pytest.mark.parametrize(("option", "value", "allowed"), [
    ("--device", "tpu", "'cuda', 'cpu'"),
    ("--precision", "fp8", "'fp32', 'fp16', 'bf16'"),
    ("--policy", "loose", "'strict', 'kernelbench'"),
    ("--shapes", "tiny", "'auto', 'small', 'full'"),
    ("--trials", "0", "greater than or equal to 1"),
])
def test_a_bad_option_names_itself_and_what_is_allowed(pair, option, value, allowed):
    res = _verify(*pair, option, value)
    assert res.exit_code == 2 and res.stdout == ""
    assert f"'{option}'" in res.stderr and allowed in res.stderr and "pydantic" not in res.stderr


def test_a_problem_that_is_not_python_is_unusable_input(pair, tmp_path):
    broken = kit.write(tmp_path, "broken.py", "import torch\ndef get_inputs(:\n")
    res = _verify(broken, pair[1])
    assert res.exit_code == 2 and res.stdout == ""
    assert "broken.py:2" in res.stderr and "not valid Python" in res.stderr


def test_missing_files_and_bad_settings_go_to_stderr(pair, tmp_path):
    res = _verify(pair[0], tmp_path / "nope.py")
    assert res.exit_code == 2 and res.stdout == "" and "candidate" in res.stderr and "nope.py" in res.stderr
    res = _verify(*pair, "--set", "verify.precision=fp8")
    assert res.exit_code == 2 and res.stdout == "" and "[verify] precision" in res.stderr and "'fp16'" in res.stderr
    (tmp_path / "km.toml").write_text("[verify]\ntrails = 3\n")
    res = _verify(*pair, "--config", tmp_path / "km.toml")
    assert res.exit_code == 2 and "km.toml" in res.stderr and "trails" in res.stderr and "known keys" in res.stderr


def test_cuda_asked_for_without_a_gpu_is_refused_before_any_worker(pair, tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "default_device", lambda: "cpu")  # this machine, as far as the CLI can tell
    res = _verify(*pair, "--device", "cuda")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--device cuda" in res.stderr and "no CUDA GPU" in res.stderr and "--device cpu" in res.stderr
    (tmp_path / "kernelmosaic.toml").write_text('[verify]\ndevice = "cuda"\n')
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "verdicts.jsonl"
    res = CliRunner().invoke(app, ["verify-batch", str(tmp_path / "pairs.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "pairs.jsonl" in res.stderr  # the manifest is checked first
    (tmp_path / "pairs.jsonl").write_text('{"problem": "problem.py", "candidate": "candidate.py"}\n')
    res = CliRunner().invoke(app, ["verify-batch", str(tmp_path / "pairs.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "[verify] device" in res.stderr and "kernelmosaic.toml" in res.stderr
    assert not out.exists(), "a batch that judged nothing leaves no output file"


def test_manifest_rows_name_their_line_and_missing_files(tmp_path):
    manifest = tmp_path / "pairs.jsonl"
    manifest.write_text('{"problem": "p.py", "candidate": "c.py"}\n')
    res = CliRunner().invoke(app, ["verify-batch", str(manifest), "--out", str(tmp_path / "v.jsonl")])
    assert res.exit_code == 2 and "pairs.jsonl:1" in res.stderr and "problem" in res.stderr and "p.py" in res.stderr
    manifest.write_text('["p.py", "c.py"]\n')
    res = CliRunner().invoke(app, ["verify-batch", str(manifest), "--out", str(tmp_path / "v.jsonl")])
    assert res.exit_code == 2 and "not a manifest row" in res.stderr


def test_settings_precedence_file_then_set_then_flags(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "default_device", lambda: "cpu")
    (tmp_path / "km.toml").write_text('[verify]\ntrials = 2\ntiming_rounds = 7\nprecision = "fp16"\n')
    tree = read_config(tmp_path / "km.toml", ["verify.trials=3", "verify.seed=11"])
    config = verify_settings(tree, {"trials": 4, "precision": None})
    assert (config.trials, config.timing_rounds, config.precision, config.seed) == (4, 7, "fp16", 11)
    assert config.device == "cpu", "no device given anywhere: the machine's"
    with pytest.raises(DeviceUnavailable, match=r"--set"):
        verify_settings(read_config(None, ["verify.device=cuda"], cwd=tmp_path), {})
    with pytest.raises(ConfigError, match=r"\[verify\] timing_rounds"):
        verify_settings(read_config(None, ["verify.timing_rounds=many"], cwd=tmp_path), {})


def test_small_shapes_asked_for_a_problem_that_is_no_task(pair):
    res = _verify(*pair, "--device", "cpu", "--shapes", "small")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--shapes small" in res.stderr and "problem.py" in res.stderr and "task.toml" in res.stderr


def test_the_python_api_refuses_cuda_without_a_gpu_in_the_cli_s_sentence(tmp_path, monkeypatch):
    from kernelmosaic.verify import Verifier, VerifyConfig

    monkeypatch.setattr(settings, "default_device", lambda: "cpu")  # this machine's torch sees no GPU
    with pytest.raises(ValueError, match=r'VerifyConfig\(device="cuda"\): torch .* sees no CUDA GPU on this machine; '
                                         r'use VerifyConfig\(device="cpu"\)'):
        Verifier(VerifyConfig(device="cuda", cache_dir=tmp_path / "cache"))  # before: a torch traceback in a worker
    assert not (tmp_path / "cache").exists(), "refused before anything was set up"
