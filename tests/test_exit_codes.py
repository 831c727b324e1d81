"""The exit-status contract of docs/cli.md, command by command, on inputs that are decided before (or without) any
judgement: 2 for unusable input (unknown settings, a device the machine lacks, missing files), 1 when a run measured
nothing (the model's backend failed on every episode), 0 when the model answered without ever writing a candidate. The 0/1 of judged work is tested beside each command (tests/verify, tests/agent, tests/evaluate)."""

from __future__ import annotations

import shlex

import pytest
import torch
from typer.testing import CliRunner

from kernelmosaic.cli import _COMMANDS, app, stage_command
from kernelmosaic.contracts.messages import Message
from kernelmosaic.models.base import Timeout
from kernelmosaic.models.scripted import register_script
from kernelmosaic.store import open_store


def _unreachable(messages):
    raise Timeout("no answer within 600 s")


register_script("exitcodes-silent", lambda: [Message(role="assistant", content="I will not write a kernel.")])
register_script("exitcodes-unreachable", lambda: [_unreachable] * 8)
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")


def _run(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def pair(tmp_path):
    folder = tmp_path / "pairs" / "p1"  # also a verify-batch folder of one pair
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text("import torch\n")
    (folder / "candidate.py").write_text("import torch\n")
    return str(folder / "problem.py"), str(folder / "candidate.py")


# Each command that reads settings, with the arguments that get it as far as reading them.
SETTINGS_COMMANDS = {
    "verify": lambda p: ["verify", *p, "--device", "cpu"],
    "verify-batch": lambda p: ["verify-batch", str(p[0]).rsplit("/", 2)[0], "--device", "cpu"],
    "generate": lambda p: ["generate", "--device", "cpu", "--no-live"],
    "evaluate": lambda p: ["evaluate", "--model", "scripted:exitcodes-silent", "--device", "cpu"],
    "curate select": lambda p: ["curate", "select", "--budget", "1", "--out", str(p[0]) + ".out"],
    "sft export": lambda p: ["sft", "export", "--out", str(p[0]) + ".out"],
}


@pytest.mark.parametrize("command", sorted(SETTINGS_COMMANDS))
def test_an_unknown_section_in_set_is_exit_2_naming_the_nearest(command, pair, tmp_path, monkeypatch):
    section = {"curate select": "select", "sft export": "sft.export"}.get(command, "verify")
    typo = {"verify": "verfy", "select": "selekt", "sft.export": "sft.exprot"}[section]
    res = _run(tmp_path, monkeypatch, *SETTINGS_COMMANDS[command](pair), "--set", f"{typo}.trials=1")
    assert res.exit_code == 2, res.output
    assert f"unknown section [{typo}]" in res.output and f"did you mean [{section}]?" in res.output


@pytest.mark.parametrize("command", sorted(SETTINGS_COMMANDS))
def test_an_unknown_section_in_the_file_is_exit_2(command, pair, tmp_path, monkeypatch):
    (tmp_path / "kernelmosaic.toml").write_text("[generat]\nlimit = 1\n")
    res = _run(tmp_path, monkeypatch, *SETTINGS_COMMANDS[command](pair))
    assert res.exit_code == 2, res.output
    assert "kernelmosaic.toml: unknown section [generat] (did you mean [generate]?)" in res.output


READS = {"verify": "[verify], [scale]", "verify-batch": "[verify], [scale]",
         "generate": "[generate], [model], [verify], [scale]", "evaluate": "[model], [verify], [scale]",
         "curate select": "[select]", "sft export": "[sft.export]"}


@pytest.mark.parametrize("command", sorted(SETTINGS_COMMANDS))
def test_an_unknown_section_lists_only_the_sections_the_command_reads(command, pair, tmp_path, monkeypatch):
    (tmp_path / "kernelmosaic.toml").write_text("[verfy]\ntrials = 1\n")
    said = " ".join(_run(tmp_path, monkeypatch, *SETTINGS_COMMANDS[command](pair)).output.split())
    assert f"unknown section [verfy] (did you mean [verify]?); this command reads {READS[command]}" in said, said
    assert "[review]" not in said  # before: every section of every command


# Commands that read no section of the settings file, each with the exit it gives with a good one (or none).
READS_NOTHING = {"tasks list": 0, "tasks validate builtin": 0, "runs list": 0, "curate duplicates builtin": 1,
                 "review log": 0}


@pytest.mark.parametrize("command", sorted(READS_NOTHING))
def test_a_command_that_reads_no_section_still_checks_the_file(command, tmp_path, monkeypatch):
    with open_store(f"sqlite:///{tmp_path / 'kernelmosaic.db'}"):
        pass  # an empty store, for `runs list` and `review log`
    assert _run(tmp_path, monkeypatch, *command.split()).exit_code == READS_NOTHING[command]
    (tmp_path / "kernelmosaic.toml").write_text("[verfy]\ntrials = 1\n")
    res = _run(tmp_path, monkeypatch, *command.split())  # before: the misspelt section passed unnoticed
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "kernelmosaic.toml: unknown section [verfy] (did you mean [verify]?); this command reads no section" in said


def test_an_unknown_key_is_exit_2_naming_the_nearest(pair, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, "verify", *pair, "--device", "cpu", "--set", "verify.trails=1")
    assert res.exit_code == 2 and "unknown key `trails` in [verify] (did you mean `trials`?)" in res.output


def test_sft_train_without_settings_says_where_it_looked_and_how_to_give_them(tmp_path, monkeypatch):
    said = " ".join(_run(tmp_path, monkeypatch, "sft", "train").output.split())  # before: "Field required (got {})"
    assert "no settings file was found (./kernelmosaic.toml, or --config FILE)" in said, said
    assert "`sft train` needs [sft.train] model = ..." in said and "--set sft.train.model=..." in said
    assert _run(tmp_path, monkeypatch, "sft", "train").exit_code == 2
    (tmp_path / "kernelmosaic.toml").write_text('[sft.train]\nmodel = "m"\n')
    said = " ".join(_run(tmp_path, monkeypatch, "sft", "train").output.split())
    assert "kernelmosaic.toml has no [sft.train] dataset, output_dir" in said, said


def test_a_set_of_a_section_the_command_does_not_read_is_exit_2(pair, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, "verify", *pair, "--device", "cpu", "--set", "generate.limit=3")
    assert res.exit_code == 2 and "this command reads [verify], [scale]" in res.output


@no_gpu
@pytest.mark.parametrize("args", [["generate", "--no-live", "--task", "l1_relu"],
                                  ["evaluate", "--model", "scripted:exitcodes-silent", "--task", "l1_relu"]])
def test_cuda_on_a_cpu_machine_is_one_sentence_and_exit_2(args, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, *args, "--device", "cuda")
    assert res.exit_code == 2, res.output
    assert "sees no CUDA GPU on this machine" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_evaluate_whose_model_never_answered_is_exit_1(tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, "evaluate", "--model", "scripted:exitcodes-unreachable", "--task", "l1_relu",
               "--device", "cpu", "--db", str(tmp_path / "km.db"))
    assert res.exit_code == 1, res.output
    assert "nothing was judged in run 1" in res.output and "--resume 1" in res.output
    assert "no answer within 600 s" in res.output
    db = shlex.quote(str(tmp_path / "km.db"))
    assert f"evaluate --resume 1 --db {db}" in " ".join(res.output.split())  # the store it ran on, to copy
    with open_store(str(tmp_path / "km.db")) as store:
        assert store.latest_run().status == "failed", "`runs` must not show a run that ended as still running"


def test_evaluate_of_a_model_that_writes_no_candidate_is_a_score_and_exit_0(tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, "evaluate", "--model", "scripted:exitcodes-silent", "--task", "l1_relu",
               "--device", "cpu", "--db", str(tmp_path / "km.db"))
    assert res.exit_code == 0, res.output
    assert "correct 0% of 1 episode(s)" in res.output and "no episode of run 1 wrote a candidate" in res.output


def test_missing_inputs_are_exit_2(tmp_path, monkeypatch):
    assert _run(tmp_path, monkeypatch, "verify", "nope.py", "nope2.py", "--device", "cpu").exit_code == 2
    assert _run(tmp_path, monkeypatch, "verify-batch", "nowhere", "--device", "cpu").exit_code == 2
    assert _run(tmp_path, monkeypatch, "report", "7", "--out", "r", "--db", str(tmp_path / "km.db")).exit_code == 2
    assert _run(tmp_path, monkeypatch, "tasks", "show", "no_such_task").exit_code == 2


@pytest.mark.parametrize("args", [["generate", "--no-live", "--model", "scripted:no-such-script"],
                                  ["evaluate", "--model", "scripted:no-such-script"],
                                  ["evaluate", "--model", "replay:bundled", "--tasks", "no-such-folder"],
                                  ["evaluate", "--generations", "no-such-folder"],
                                  ["evaluate", "--resume", "3"]], ids=" ".join)
def test_a_run_that_cannot_start_leaves_no_store(args, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, *args, "--device", "cpu")
    assert res.exit_code == 2, res.output
    assert not list(tmp_path.glob("kernelmosaic.db*")), "a failed start leaves an empty store behind"
    (tmp_path / "kernelmosaic.db").write_bytes(b"")  # a store that was there before is never removed
    assert _run(tmp_path, monkeypatch, *args, "--device", "cpu").exit_code == 2
    assert (tmp_path / "kernelmosaic.db").exists()


def _takes(option: str) -> list[list[str]]:
    """Every command and sub-command with `option`, with a placeholder for each argument it requires."""
    found = []

    def walk(path: list[str], command) -> None:
        if any(option in getattr(p, "opts", ()) for p in command.params):
            found.append([*path, *("x" for p in command.params if p.param_type_name == "argument" and p.required)])
        for name, sub in getattr(command, "commands", {}).items():
            walk([*path, name], sub)

    for name in _COMMANDS:
        walk([name], stage_command(name))
    return found


DEVICE_COMMANDS = _takes("--device")


def test_every_command_with_a_device_option_is_checked():
    assert {" ".join(a for a in c if a != "x") for c in DEVICE_COMMANDS} == {
        "verify", "verify-batch", "verify-serve", "generate", "evaluate", "loop", "tasks audit"}


@pytest.mark.parametrize("args", DEVICE_COMMANDS, ids=[" ".join(a) for a in DEVICE_COMMANDS])
def test_a_device_no_command_takes_is_exit_2_in_one_wording(args, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, *args, "--device", "tpu")
    assert res.exit_code == 2 and res.stdout == ""
    assert "Invalid value for '--device': 'tpu' is not one of 'cuda', 'cpu'" in res.stderr or (
        "Invalid value for '--device': 'tpu' is not one of 'auto', 'cpu', 'cuda'" in res.stderr), res.stderr
    assert "Value error" not in res.stderr


POLICY_COMMANDS = _takes("--policy")


@pytest.mark.parametrize("args", POLICY_COMMANDS, ids=[" ".join(a) for a in POLICY_COMMANDS])
def test_a_policy_no_command_takes_is_exit_2_naming_the_option_and_the_choices(args, tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, *args, "--policy", "bogus")
    assert res.exit_code == 2 and res.stdout == ""
    assert "Invalid value for '--policy': 'bogus' is not one of" in res.stderr, res.stderr
    assert "'strict'" in res.stderr and "'kernelbench'" in res.stderr and "pydantic" not in res.stderr
