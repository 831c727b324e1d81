"""`kernelmosaic sft tiny-base`: the random-weight base model the README's loop trains when no weights are given."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app

transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")


def _dataset(path):
    rows = [{"messages": [{"role": "user", "content": "Write a ReLU kernel."},
                          {"role": "assistant", "content": "__global__ void relu(float* x, int n) { /* ... */ }"}]}]
    datasets.Dataset.from_list(rows).save_to_disk(str(path))
    return path


def test_the_base_loads_and_its_tokenizer_round_trips_the_data(tmp_path):
    data, out = _dataset(tmp_path / "full"), tmp_path / "base"
    res = CliRunner().invoke(app, ["sft", "tiny-base", "--data", str(data), "--out", str(out), "--hidden", "32"])
    assert res.exit_code == 0, res.output
    assert "not a model that writes kernels" in " ".join(res.output.split())
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    model = transformers.AutoModelForCausalLM.from_pretrained(out)
    assert (model.config.hidden_size, model.config.num_hidden_layers) == (32, 2)
    assert model.config.vocab_size == len(tokenizer)
    text = "__global__ void relu(float* x, int n)"
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text
    assert "<tool_call>" in tokenizer.chat_template  # KernelMosaic's ChatML tool template, with generation markers
    assert "{% generation %}" in tokenizer.chat_template


@pytest.mark.parametrize("args, named", [(["--data", "{tmp}/missing"], "missing: no exported dataset there"),
                                         (["--data", "{tmp}/full", "--hidden", "40"], "hidden size 40")])
def test_bad_input_exits_2_naming_it(tmp_path, args, named):
    _dataset(tmp_path / "full")
    argv = ["sft", "tiny-base", *[a.format(tmp=tmp_path) for a in args], "--out", str(tmp_path / "base")]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2 and named in " ".join(res.output.split()), res.output
    assert not (tmp_path / "base").exists()
