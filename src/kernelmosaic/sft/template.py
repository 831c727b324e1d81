"""Which chat template training renders with: one with `{% generation %}` markers, so only assistant tokens carry loss.

In order: a template file named in the config; the tokenizer's own when it already has markers; the tokenizer's
own when TRL knows how to patch it (TRL swaps in its training variant); else KernelMosaic's ChatML template with
tools, which is then saved with the checkpoint so `generate` renders prompts exactly as training did.
"""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path
from typing import Any, Literal

__all__ = ["TemplateChoice", "chatml_tools_template", "choose_template"]

log = logging.getLogger(__name__)

TemplateChoice = Literal["file", "own", "trl_patched", "kernelmosaic"]


def chatml_tools_template() -> str:
    return resources.files("kernelmosaic.sft").joinpath("templates/chatml_tools.jinja").read_text(encoding="utf-8")


def _trl_patches(tokenizer: Any) -> bool:
    from trl.chat_template_utils import get_training_chat_template

    try:
        get_training_chat_template(tokenizer)
    except ValueError:
        return False
    return True


def choose_template(tokenizer: Any, path: str = "") -> TemplateChoice:
    """Set `tokenizer.chat_template` to the template training uses and say which it is."""
    from trl.chat_template_utils import has_generation_markers

    if path:
        try:
            tokenizer.chat_template = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"chat_template {path!r}: cannot read: {exc.strerror}") from None
        if not has_generation_markers(tokenizer.chat_template):
            raise ValueError(f"chat_template {path!r}: no {{% generation %}} markers, so assistant-only loss cannot work")
        return "file"
    own = tokenizer.chat_template
    if own and has_generation_markers(own):
        return "own"
    if own and _trl_patches(tokenizer):
        return "trl_patched"
    if own:
        log.warning("the tokenizer's chat template has no {% generation %} markers and TRL has no training variant "
                    "of it: training with KernelMosaic's ChatML tool template instead (saved with the checkpoint)")
    tokenizer.chat_template = chatml_tools_template()
    missing = [m for m in ("<|im_start|>", "<|im_end|>") if m not in tokenizer.get_vocab()]
    if missing:  # the trainer grows the embeddings to match (train.py)
        tokenizer.add_tokens(missing, special_tokens=True)
    tokenizer.eos_token = "<|im_end|>"
    return "kernelmosaic"
