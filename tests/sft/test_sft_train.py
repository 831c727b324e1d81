"""Training end to end on CPU: export -> a tiny random Llama with a tokenizer trained here -> LoRA SFT through the
CLI -> assistant-only labels, changed weights, checkpoints, resume -> the merged model runs `generate` as hf:PATH."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("trl")
pytest.importorskip("peft")

import datasets  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from kernelmosaic.cli import app  # noqa: E402
from kernelmosaic.sft.config import ExportConfig  # noqa: E402
from kernelmosaic.sft.export import export_dataset  # noqa: E402
from kernelmosaic.sft.tiny import build_tiny_base  # noqa: E402
from kernelmosaic.sft.train import build_trainer  # noqa: E402
from kernelmosaic.sft.train_config import TrainConfig  # noqa: E402
from kernelmosaic.store import open_store  # noqa: E402

pytestmark = pytest.mark.slow
# A template without generation markers that TRL cannot patch: training must fall back to KernelMosaic's.
PLAIN_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


@pytest.fixture(scope="module")
def exported(recorded, tmp_path_factory):
    out = tmp_path_factory.mktemp("sft-data")
    with open_store(recorded.db) as store:
        export_dataset(store, ExportConfig(tasks=str(recorded.tasks_dir), variants=["full"]), out)
    return out


@pytest.fixture(scope="module")
def base_model(exported, tmp_path_factory):
    """A byte-level BPE tokenizer trained on the exported trajectories and a random 2-layer Llama, with a template
    that has no generation markers."""
    return build_tiny_base(exported / "full", tmp_path_factory.mktemp("tiny-base"), hidden=32, vocab=1200, head_dim=8,
                           chat_template=PLAIN_TEMPLATE)


def _config_file(folder, base_model, exported, out):
    path = folder / "train.toml"
    path.write_text(f"""[sft.train]
model = "{base_model}"
dataset = "{exported / 'full'}"
output_dir = "{out}"
max_length = 16384
learning_rate = 0.01
grad_accum = 1
logging_steps = 1
save_steps = 2
gradient_checkpointing = false
lora = {{ r = 4, alpha = 8, dropout = 0.0 }}
""")
    return path


@pytest.fixture(scope="module")
def trained(base_model, exported, tmp_path_factory):
    """A 3-step LoRA run through the CLI: (its settings file, its output folder)."""
    folder = tmp_path_factory.mktemp("lora")
    config = _config_file(folder, base_model, exported, folder / "run")
    first = CliRunner().invoke(app, ["sft", "train", "--config", str(config), "--set", "sft.train.max_steps=3"])
    assert first.exit_code == 0, first.output
    return config, folder / "run"


def test_only_assistant_tokens_carry_loss(base_model, exported, tmp_path):
    config = TrainConfig(model=str(base_model), dataset=str(exported / "full"), output_dir=str(tmp_path / "o"),
                         report_to=[], progress=False)
    trainer, facts = build_trainer(config)
    assert facts["template"] == "kernelmosaic" and facts["truncated"] == 0
    row = datasets.load_from_disk(str(exported / "full"))[0]
    tokenizer = facts["tokenizer"]
    text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    sample = trainer.train_dataset[0]
    assert sample["input_ids"] == encoded["input_ids"]
    # Assistant spans found in the rendered text: after each assistant header, through its end-of-turn marker.
    spans = [m.span(1) for m in re.finditer(r"<\|im_start\|>assistant\n(.*?<\|im_end\|>\n)", text, re.DOTALL)]
    assert len(spans) == sum(m["role"] == "assistant" for m in row["messages"]) == 5
    expected = [any(lo <= start < hi for lo, hi in spans) for start, _ in encoded["offset_mapping"]]
    carries_loss = [label != -100 for label in sample["labels"]]
    assert carries_loss == expected
    assert 0 < sum(carries_loss) < len(carries_loss) / 2
    learned = tokenizer.decode([t for t, keep in zip(sample["input_ids"], carries_loss, strict=True) if keep])
    assert '<tool_call>\n{"name": "write_candidate"' in learned and "PASSED" not in learned  # tool output is not learned
    assert "<think>\nLeaky ReLU is elementwise" in learned  # the reasoning is


def test_a_max_length_that_cuts_off_every_assistant_turn_is_a_clear_error(base_model, exported, tmp_path):
    """Found by a dry run of scripts/gpu/gpu_sft_check.py: TRL dropped every sample and training died in its sampler."""
    config = TrainConfig(model=str(base_model), dataset=str(exported / "full"), output_dir=str(tmp_path / "o"),
                         report_to=[], progress=False, max_length=64)
    with pytest.raises(ValueError, match="no sample left to train on.*raise max_length"):
        build_trainer(config)


def test_lora_training_changes_weights_resumes_and_the_checkpoint_runs_generate(base_model, trained, recorded, tmp_path):
    config, out = trained
    runner = CliRunner()
    assert (out / "checkpoint-2").is_dir() and list((out / "runs").rglob("events.out.tfevents.*"))
    adapter = load_file(str(out / "final" / "adapter_model.safetensors"))
    assert any("lora_B" in k and v.abs().sum() > 0 for k, v in adapter.items())  # B starts at zero
    base = load_file(str(base_model / "model.safetensors"))
    merged = load_file(str(out / "merged" / "model.safetensors"))
    changed = [k for k in base if "q_proj" in k and not torch.equal(base[k], merged[k])]
    assert changed and torch.equal(base["model.embed_tokens.weight"], merged["model.embed_tokens.weight"])
    resumed = runner.invoke(app, ["sft", "train", str(config), "--set", "sft.train.max_steps=4", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert '"resumed_from"' in resumed.output and "checkpoint-" in resumed.output and '"steps": 4' in resumed.output

    db = f"sqlite:///{tmp_path / 'gen.db'}"
    generated = runner.invoke(app, ["generate", "--tasks", str(recorded.tasks_dir), "--task", "sft_leaky", "--model",
                                    f"hf:{out / 'merged'}", "--max-turns", "1", "--device", "cpu", "--db", db,
                                    "--out", str(tmp_path / "gen"), "--no-live", "--set", "model.max_new_tokens=16"])
    assert generated.exit_code in (0, 1), generated.output
    with open_store(db) as store:
        [run] = store.list_runs()
        [info] = store.list_episodes(run.id)
        trajectory = store.load_trajectory(info.id)
    assert info.status == "done" and info.exit_reason == "budget_exhausted", info
    replies = [e for e in trajectory.events if e.type == "message" and e.message.role == "assistant"]
    assert trajectory.model == f"hf:{out / 'merged'}" and len(replies) == 1 and replies[0].usage.completion_tokens >= 1


def test_the_checkpoint_and_its_base_are_evaluated_and_compared(base_model, trained, recorded, tmp_path):
    """The SFT stage's hand-off: `evaluate` runs the starting model and the checkpoint as hf:PATH on the same tasks
    (bounded by [model] max_new_tokens), and `report --compare` puts the two runs side by side."""
    _, out = trained
    runner, db = CliRunner(), f"sqlite:///{tmp_path / 'eval.db'}"
    runs = {}
    for name, path in (("base", base_model), ("tuned", out / "merged")):
        result = runner.invoke(app, ["evaluate", "--model", f"hf:{path}", "--tasks", str(recorded.tasks_dir),
                                     "--device", "cpu", "--db", db, "--out", str(tmp_path / "runs"),
                                     "--set", "model.max_new_tokens=8", "--set", "model.device=cpu"])
        assert result.exit_code == 0, result.output
        runs[name] = int(re.search(r"evaluation run (\d+)", result.output).group(1))
    report = runner.invoke(app, ["report", str(runs["base"]), "--compare", str(runs["tuned"]), "--db", db,
                                 "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert [r["run"]["model"] for r in summary["runs"]] == [f"hf:{base_model}", f"hf:{out / 'merged'}"]
    for r in summary["runs"]:
        assert r["run"]["mode"] == "one-shot" and r["overall"]["episodes"] == 2
        assert sorted(t["task_id"] for t in r["tasks"]) == ["sft_leaky", "sft_unsolved"]
    assert (tmp_path / "report" / "report.html").is_file() and "hf:" in (tmp_path / "report" / "summary.md").read_text()
    with open_store(db) as store:
        for run_id in runs.values():
            assert store.get_run(run_id).config["model_options"] == {"max_new_tokens": 8, "device": "cpu"}
            for info in store.list_episodes(run_id):
                assert info.status == "done", info
                replies = [e for e in store.load_trajectory(info.id).events
                           if e.type == "message" and e.message.role == "assistant"]
                assert len(replies) == 1 and 1 <= replies[0].usage.completion_tokens <= 8


def test_bad_train_config_exits_2_naming_file_and_problem(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[sft.train]\nmodel = "m"\ndataset = "d"\noutput_dir = "o"\nmax_length = 4\n')
    result = CliRunner().invoke(app, ["sft", "train", "--config", str(path)])
    assert result.exit_code == 2 and "t.toml: [sft.train] max_length" in result.output
    overridden = CliRunner().invoke(app, ["sft", "train", str(path), "--set", "sft.train.max_length=64",
                                          "--set", "sft.train.lora.rank=4"])
    assert overridden.exit_code == 2 and "--set sft.train.lora.rank=4: unknown key `rank` in [sft.train.lora]" in \
        overridden.output and "known keys: alpha, dropout, enabled, merge, r," in overridden.output
    path.write_text(f'[sft.train]\nmodel = "m"\ndataset = "{tmp_path}/none"\noutput_dir = "{tmp_path}/o"\n')
    result = CliRunner().invoke(app, ["sft", "train", str(path)])
    assert result.exit_code == 2 and "none: cannot load" in result.output
    resumed = CliRunner().invoke(app, ["sft", "train", str(path), "--resume"])  # a first run given --resume
    assert resumed.exit_code == 2 and "--resume" in resumed.output and "run once without --resume" in \
        " ".join(resumed.output.split()), resumed.output


def test_the_former_train_table_and_set_keys_are_named_with_their_new_form(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text('[train]\nmodel = "m"\ndataset = "d"\noutput_dir = "o"\n')
    result = CliRunner().invoke(app, ["sft", "train", str(path)])
    assert result.exit_code == 2 and "old.toml: the [train] table is now [sft.train]" in result.output
    result = CliRunner().invoke(app, ["sft", "train", str(path), "--set", "max_steps=3"])
    assert result.exit_code == 2 and "--set sft.train.max_steps=3" in result.output


def test_a_bare_set_key_the_section_lacks_names_the_nearest_and_never_suggests_a_key_that_is_not_there(tmp_path):
    """`sft export --set max_steps=5` suggested `--set sft.export.max_steps=5`, a key export does not have."""
    result = CliRunner().invoke(app, ["sft", "export", "--out", str(tmp_path / "o"), "--set", "max_steps=5"])
    assert result.exit_code == 2 and "[sft.export] has no key `max_steps`" in result.output
    assert "sft.export.max_steps" not in result.output
    result = CliRunner().invoke(app, ["sft", "export", "--out", str(tmp_path / "o"), "--set", "variant=full"])
    assert result.exit_code == 2 and "did you mean `sft.export.variants`" in result.output
