"""The `sft` commands (alone, and as stages of `loop`) print their own progress only: no tqdm bar of datasets or
transformers, no FutureWarning or UserWarning from the training libraries, no dict per log from the trainer."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app

datasets = pytest.importorskip("datasets")
pytest.importorskip("trl")

TQDM_BAR = re.compile(r"\d+%\||it/s|examples/s")


def _dataset(path):
    tool = {"type": "function", "function": {"name": "compile", "description": "Compile the kernel.",
                                             "parameters": {"type": "object", "properties": {}}}}
    rows = [{"messages": [{"role": "user", "content": f"Write a ReLU kernel, take {k}."},
                          {"role": "assistant", "content": "__global__ void relu(float* x, int n) { /* ... */ }"}],
             "tools": [tool]} for k in range(4)]
    datasets.Dataset.from_list(rows).save_to_disk(str(path))
    return path


def _library_warnings(caught) -> list[str]:
    return [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, FutureWarning | UserWarning)]


def test_tiny_base_and_train_print_no_library_bars_or_warnings(tmp_path):
    data, base = _dataset(tmp_path / "full"), tmp_path / "base"
    train = {"model": base, "dataset": data, "output_dir": tmp_path / "train", "max_steps": 2, "lora.enabled": "false",
             "grad_accum": 1, "logging_steps": 1, "save_steps": 2, "gradient_checkpointing": "false", "report_to": "[]"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # whatever pytest or an earlier import would hide
        made = CliRunner().invoke(app, ["sft", "tiny-base", "--data", str(data), "--out", str(base), "--hidden", "32"])
        trained = CliRunner().invoke(app, ["sft", "train", *[x for k, v in train.items()
                                                             for x in ("--set", f"sft.train.{k}={v}")]])
    assert made.exit_code == 0 and trained.exit_code == 0, made.output + trained.output
    assert not _library_warnings(caught), _library_warnings(caught)
    for res in (made, trained):
        assert not TQDM_BAR.search(res.stderr), res.stderr[-2000:]
    assert "{'loss'" not in trained.stdout and '"steps": 2' in trained.stdout  # the result, and no log dicts
    # piped, the command says what it does before the first step and once per logged step
    assert "sft train: loading" in trained.stderr and "sft train: step 1/2  loss" in trained.stderr, trained.stderr
    result = json.loads(trained.stdout[trained.stdout.index("{"):trained.stdout.rindex("}") + 1])
    assert result["peak_memory_gb"] is None and result["peak_host_memory_gb"] > 0  # CPU: no GPU figure, not 0.0


def test_warnings_and_bars_are_back_afterwards():
    from transformers.utils import logging as hf_logging

    from kernelmosaic.sft.quiet import quiet_libraries

    before = (datasets.is_progress_bar_enabled(), hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_libraries():
            assert not datasets.is_progress_bar_enabled() and not hf_logging.is_progress_bar_enabled()
            warnings.warn_explicit("old name", FutureWarning, "training_args.py", 1, module="transformers.training_args")
            warnings.warn_explicit("ours", FutureWarning, "train.py", 1, module="kernelmosaic.sft.train")
        warnings.warn_explicit("old name", FutureWarning, "training_args.py", 2, module="transformers.training_args")
    assert [str(w.message) for w in caught] == ["ours", "old name"], "only the libraries' warnings, only within"
    assert (datasets.is_progress_bar_enabled(), hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()) \
        == before
