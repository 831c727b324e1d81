"""The training libraries' own screen output, off while an `sft` command runs (alone or as a stage of `loop`): their
progress bars (a tqdm bar per dataset map, save and weight load) and their FutureWarnings and UserWarnings, which speak
of the libraries' internals, not of anything a `kernelmosaic` user sets. What this package prints stays: the rich
progress of training, the summaries, our log records."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["LIBRARIES", "quiet_libraries"]

LIBRARIES = ("transformers", "trl", "datasets", "peft", "accelerate", "huggingface_hub", "tokenizers")
"""The packages whose FutureWarnings and UserWarnings are dropped (matched on the module that warns)."""


def _installed(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:  # the [hf] / [train] extras are optional: what is not installed prints nothing
        return None


@contextmanager
def quiet_libraries() -> Iterator[None]:
    """Within: no progress bars from datasets or transformers, transformers' log at errors only, and no FutureWarning
    or UserWarning raised inside LIBRARIES. Everything is as it was afterwards."""
    datasets = _installed("datasets")
    hf_logging = _installed("transformers.utils.logging")
    datasets_bars = datasets is not None and datasets.is_progress_bar_enabled()
    if datasets_bars:
        datasets.disable_progress_bars()
    if hf_logging is not None:
        verbosity, hf_bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            for category in (FutureWarning, UserWarning):
                warnings.filterwarnings("ignore", category=category, module=rf"({'|'.join(LIBRARIES)})(\.|$)")
            yield
    finally:
        if datasets_bars:
            datasets.enable_progress_bars()
        if hf_logging is not None:
            hf_logging.set_verbosity(verbosity)
            if hf_bars:
                hf_logging.enable_progress_bar()
