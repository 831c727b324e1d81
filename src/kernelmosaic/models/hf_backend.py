"""`hf:PATH` — a Hugging Face transformers model loaded in this process from a local folder.

Generation runs in a worker thread under a lock: one model, one generation at a time, while the
event loop keeps serving other episodes. Tool calls are read from the generated text with the same
parser the OpenAI backend uses for servers that return calls as text. transformers is imported
only when such a backend is made.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kernelmosaic.config import describe_error
from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec, Usage
from kernelmosaic.models.base import ModelConfigError, ModelUnavailable
from kernelmosaic.models.chat_format import to_template_messages
from kernelmosaic.models.toolcalls import extract_text_tool_calls, prior_call_count

__all__ = ["HFConfig", "HFBackend", "hf_backend", "split_reasoning"]

_KEPT_MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>")
_THINK = re.compile(r"^\s*(?:<think>)?(.*?)</think>\s*", re.DOTALL)


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, rest) of generated text whose template thinks in `<think>...</think>` (Qwen3, DeepSeek-R1).

    Templates that open the think block in the generation prompt leave only its closing tag in the output; text
    without a closing tag has no reasoning.
    """
    match = _THINK.match(text)
    if match is None or "<think>" in match.group(1):
        return "", text
    return match.group(1).strip(), text[match.end():]


def _with_reasoning(messages: list[Message]) -> list[dict[str, Any]]:
    # Templates that render past reasoning (Qwen3 and others) read it from `reasoning_content`.
    entries = to_template_messages(messages)
    for entry, message in zip(entries, messages, strict=True):
        if message.reasoning:
            entry["reasoning_content"] = message.reasoning
    return entries


class HFConfig(BaseModel):
    """How to load and sample a local transformers model."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    path: str = Field(min_length=1)
    """Folder holding the tokenizer and model (config.json, weights, tokenizer files)."""
    max_new_tokens: int = Field(1024, ge=1)
    """Most tokens generated per reply."""
    temperature: float = Field(0.0, ge=0)
    """0 decodes greedily; above 0 samples at this temperature."""
    top_p: float = Field(1.0, gt=0, le=1)
    """Nucleus sampling mass when sampling."""
    device: str = Field("auto", validate_default=True)  # the default is resolved too
    """Torch device for the model, e.g. `cpu` or `cuda:0`; `auto` is the first GPU when there is one, else `cpu`."""

    @field_validator("device")
    @classmethod
    def _resolve_device(cls, device: str) -> str:
        if device != "auto":
            return device
        import torch

        return "cuda:0" if torch.cuda.is_available() else "cpu"
    dtype: str = "auto"
    """Weights dtype: `auto` (as saved), `float32`, `bfloat16` or `float16`."""
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Extra variables for the chat template, e.g. `{"enable_thinking": false}` for Qwen3."""


@dataclass
class _Generation:
    text: str
    usage: Usage
    hit_limit: bool
    """Stopped at `max_new_tokens` rather than on a stop token."""


class HFBackend:
    """In-process generation; `for_task` returns the same instance, so all episodes share one model and lock."""

    def __init__(self, config: HFConfig, name: str = "") -> None:
        self.config = config
        self.name = name or f"hf:{config.path}"
        self._lock = threading.Lock()
        self.tokenizer, self.model = self._load()

    def _load(self) -> tuple[Any, Any]:
        path = Path(self.config.path).expanduser()
        if not (path / "config.json").is_file():
            raise ModelConfigError(f"hf:{path}: not a model folder (no config.json there)")
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise ModelUnavailable(f"hf:{path}: transformers is not installed ({exc}); pip install transformers") from None
        transformers.utils.logging.disable_progress_bar()  # a bar per weight load would cut into the run's own lines
        dtype = "auto" if self.config.dtype == "auto" else getattr(torch, self.config.dtype, None)
        if dtype is None:
            raise ModelConfigError(f"hf:{path}: unknown dtype {self.config.dtype!r}")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
            # transformers renamed `torch_dtype` to `dtype` in 4.56; older releases ignore `dtype`.
            major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
            dtype_key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
            model = transformers.AutoModelForCausalLM.from_pretrained(str(path), **{dtype_key: dtype})
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"hf:{path}: cannot load: {exc}") from None
        if tokenizer.chat_template is None:
            raise ModelConfigError(f"hf:{path}: the tokenizer has no chat template")
        model.to(self.config.device).eval()
        return tokenizer, model

    def for_task(self, task_id: str) -> HFBackend:
        return self

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        try:
            generation = await asyncio.to_thread(self._generate, messages, tools)
        except Exception as exc:  # template, tokenizer or torch failures (OOM, prompt too long) become typed
            raise ModelUnavailable(f"{self.name}: generation failed: {type(exc).__name__}: {exc}") from exc
        reasoning, text = split_reasoning(generation.text)
        found = extract_text_tool_calls(text, prior_call_count(messages), {t.name for t in tools})
        finish = "tool_calls" if found.calls else "length" if generation.hit_limit else "stop"
        return ModelReply(
            message=Message(role="assistant", content=found.content, reasoning=reasoning, tool_calls=found.calls),
            usage=generation.usage,
            raw=generation.text,
            finish_reason=finish,
        )

    def _generate(self, messages: list[Message], tools: list[ToolSpec]) -> _Generation:
        import torch

        # One lock around all of it: fast tokenizers are not safe to share between threads either.
        with self._lock, torch.inference_mode():
            prompt = self.tokenizer.apply_chat_template(
                _with_reasoning(messages),
                tools=[t.openai_format() for t in tools] or None,
                add_generation_prompt=True,
                tokenize=False,
                **self.config.chat_template_kwargs,
            )
            # The template already wrote any BOS it wants; adding special tokens again would double it.
            inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.config.device)
            sampling: dict[str, Any] = {"do_sample": False}
            if self.config.temperature > 0:
                sampling = {"do_sample": True, "temperature": self.config.temperature, "top_p": self.config.top_p}
            tok = self.tokenizer
            pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
            output = self.model.generate(**inputs, max_new_tokens=self.config.max_new_tokens, pad_token_id=pad, **sampling)
            prompt_len = inputs["input_ids"].shape[1]
            new_ids = output[0, prompt_len:].tolist()
            text = self._decode(new_ids)
        stopped = bool(new_ids) and new_ids[-1] in self._stop_ids()
        return _Generation(
            text=text,
            usage=Usage(prompt_tokens=prompt_len, completion_tokens=len(new_ids)),
            hit_limit=len(new_ids) >= self.config.max_new_tokens and not stopped,
        )

    def _stop_ids(self) -> set[int]:
        # Chat models often stop on several ids (Qwen: <|im_end|> and <|endoftext|>), listed in the generation config.
        configured = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        ids = set(configured) if isinstance(configured, list) else {configured}
        ids.add(self.tokenizer.eos_token_id)
        return {i for i in ids if isinstance(i, int)}

    def _decode(self, ids: list[int]) -> str:
        # Decode with special tokens kept, then drop them ourselves: some tokenizers mark the
        # <tool_call> (and <think>) tags as special, and skip_special_tokens would erase the calls with them.
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        for token in self.tokenizer.all_special_tokens:
            if token and token not in _KEPT_MARKERS:
                text = text.replace(token, "")
        return text.strip()


def hf_backend(path: str, **options: Any) -> HFBackend:
    """The backend for spec `hf:PATH`; options are `HFConfig` fields."""
    try:
        config = HFConfig(path=path, **options)
    except ValidationError as exc:
        raise ModelConfigError(describe_error(exc, HFConfig, "model", f"hf:{path}")) from None
    return HFBackend(config)
