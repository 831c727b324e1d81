"""generate and evaluate choose the device they judge on by one rule (`verify.settings.run_device`): the `--device`
flag over the settings' `[verify] device`, and the run's verifier settings take the run's device. generate let
`[verify] device` beat `--device` while evaluate let `--device` win."""

from __future__ import annotations

from kernelmosaic.agent.cli import _new_config
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.verify.settings import run_device

TREE = {"verify": {"device": "cuda", "trials": 2}}  # the settings file asks for cuda...
FLAGS = {"model": None, "compile_baseline": None}


def _generate(device: str | None):
    return _new_config(TREE, dict(FLAGS), device, None)


def _evaluate(device: str | None):
    return EvalConfig(mode="one-shot", model="scripted:x", device=run_device(device, TREE["verify"]),
                      verify=TREE["verify"])


def test_the_device_flag_beats_the_settings_verify_device_in_both_commands():
    generate, evaluate = _generate("cpu"), _evaluate("cpu")  # ...and the command line says cpu
    assert generate.agent.device == "cpu" and generate.verify_config().device == "cpu"
    assert evaluate.device == "cpu" and evaluate.verify_config().device == "cpu"
    assert generate.verify_config().trials == evaluate.verify_config().trials == 2  # the rest of [verify] rides along


def test_without_the_flag_the_settings_verify_device_beats_the_machines_default_in_both():
    assert run_device(None, {"device": "cpu"}) == "cpu"
    assert run_device(None, {"device": "cuda"}) == "cuda"  # chosen; refused later on a machine without a GPU
    assert run_device(None, {"device": "cuda"}, "cpu") == "cpu"  # the run's own section ([generate] agent.device)
    assert run_device(None, {}, None, "cuda") == "cuda"  # a recording's device, when nothing else chose
    assert run_device("cpu", {"device": "cuda"}, "cuda", "cuda") == "cpu"  # the flag over everything


def test_both_runs_build_their_verifier_settings_by_one_rule():
    """Both configs are `runs.config.RunConfig`s: a setting the run owns (its device, `compile_baseline`) beats the
    same key in `[verify]`, whichever command the run is."""
    from kernelmosaic.runs.config import RunConfig

    tree = {"verify": {"device": "cuda", "compile_baseline": True, "trials": 3}}
    generate = _new_config(tree, {"model": None, "compile_baseline": False}, "cpu", None)
    evaluate = EvalConfig(mode="one-shot", model="scripted:x", device="cpu", compile_baseline=False,
                          verify=tree["verify"])
    assert isinstance(generate, RunConfig) and isinstance(evaluate, RunConfig)
    for config in (generate, evaluate):
        settings = config.verify_config()
        assert (settings.device, settings.compile_baseline, settings.trials) == ("cpu", False, 3)
        assert settings.timing_budget_ms == 25.0  # the CPU's short budget, which [verify] may still override
    assert EvalConfig(device="cpu", verify={"timing_budget_ms": 80.0}).verify_config().timing_budget_ms == 80.0


def test_a_setting_the_run_owns_comes_from_the_settings_when_no_flag_is_given():
    """flag > settings ([verify]) > the command's default, for compile_baseline in both commands and evaluate's policy:
    `[verify] compile_baseline = false` used to be beaten by the on-cuda default in both."""
    from kernelmosaic.runs.config import owned_setting

    tree = {"verify": {"compile_baseline": False, "policy": "strict"}}
    generate = _new_config(tree, {"model": None, "compile_baseline": None}, "cpu", None)
    assert generate.compile_baseline is False and generate.verify_config().compile_baseline is False
    assert _new_config({"verify": {}}, {"model": None, "compile_baseline": None}, "cpu", None).compile_baseline is False
    assert _new_config(tree, {"model": None, "compile_baseline": True}, "cpu", None).compile_baseline is True  # the flag
    verify = tree["verify"]
    assert owned_setting(None, verify, "policy", "kernelbench") == "strict"  # evaluate's --policy left out
    assert owned_setting("kernelbench", verify, "policy", "kernelbench") == "kernelbench"
    assert owned_setting(None, {}, "compile_baseline", True) is True  # nothing said: the command's default


def test_evaluate_takes_its_policy_and_baseline_from_the_settings_file(tmp_path, monkeypatch):
    """The whole command: a settings file's [verify] policy and compile_baseline reach the stored run's config."""
    from typer.testing import CliRunner

    from kernelmosaic.cli import app
    from kernelmosaic.store import open_store

    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernelmosaic.toml").write_text('[verify]\npolicy = "strict"\ncompile_baseline = true\n')
    gens = tmp_path / "gens" / "pair"
    gens.mkdir(parents=True)
    (gens / "problem.py").write_text("this is not a problem\n")
    (gens / "candidate.py").write_text("nor a candidate\n")
    db = f"sqlite:///{tmp_path / 'km.db'}"
    result = CliRunner().invoke(app, ["evaluate", "--generations", str(tmp_path / "gens"), "--device", "cpu",
                                      "--db", db])
    store = open_store(db)
    config = EvalConfig.model_validate(store.get_run(store.list_runs()[-1].id).config)
    assert (config.policy, config.compile_baseline) == ("strict", True), result.output


def test_verify_times_the_compile_baseline_on_cuda_only_unless_the_settings_say():
    """`verify`, `verify-batch` and `verify-serve` take the runs' default for the `torch.compile` baseline (on for
    CUDA only: a CPU verify of a ReLU spent 45 of its 70 s building Inductor's baseline), and a setting still wins."""
    from kernelmosaic.verify.settings import verify_settings

    def cuda(_config):
        return "cuda"

    assert verify_settings({}, {"device": "cpu"}).compile_baseline is False
    assert verify_settings({}, {}, probe=cuda).compile_baseline is True
    assert verify_settings({"verify": {"compile_baseline": True}}, {"device": "cpu"}).compile_baseline is True
    assert verify_settings({"verify": {"compile_baseline": False}}, {}, probe=cuda).compile_baseline is False
    assert verify_settings({}, {"device": "cpu", "compile_baseline": True}).compile_baseline is True
