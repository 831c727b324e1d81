"""The training recipe's typed configuration: the `[sft.train]` section of the project's configuration file
(`kernelmosaic.config`), each field overridable with `--set sft.train.KEY=VALUE`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LoraSettings", "TrainConfig"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class LoraSettings(_Model):
    enabled: bool = True
    """Train LoRA adapters through PEFT; false: full fine-tuning of every weight."""
    r: int = Field(16, ge=1)
    """Adapter rank."""
    alpha: int = Field(32, ge=1)
    """Scaling numerator (the update is scaled by alpha / r)."""
    dropout: float = Field(0.05, ge=0, lt=1)
    """Dropout on the adapter's input."""
    target_modules: str | list[str] = "all-linear"
    """Modules that get adapters: `all-linear`, or names such as `["q_proj", "v_proj"]`."""
    merge: bool = True
    """After training, merge the adapters into the base weights and save a plain model (`OUTPUT/merged`) that
    `generate` runs as `hf:PATH`."""


class TrainConfig(_Model):
    model: str = Field(min_length=1)
    """Folder of the base model and its tokenizer (Hugging Face format)."""
    dataset: str = Field(min_length=1)
    """An exported variant: a `load_from_disk` folder (e.g. `OUT/full`) or a Parquet file (`OUT/full.parquet`)."""
    output_dir: str = Field(min_length=1)
    """Where checkpoints, TensorBoard logs (`runs/`), the adapter or model (`final/`) and `merged/` go."""
    max_length: int = Field(16384, ge=16)
    """Tokens per sample; longer samples are truncated (keeping the start) and counted in a warning."""
    drop_overlong: bool = False
    """Drop samples longer than `max_length` instead of truncating them."""
    chat_template: str = ""
    """A Jinja template file with `{% generation %}` markers; empty: the tokenizer's own when it has markers or TRL can
    patch it, else KernelMosaic's ChatML tool template."""
    lora: LoraSettings = Field(default_factory=LoraSettings)
    """LoRA or full fine-tuning (`[sft.train.lora]`)."""
    learning_rate: float = Field(1e-4, gt=0)
    """Peak learning rate (LoRA typically 1e-4 to 2e-4; full fine-tuning 1e-5)."""
    epochs: float = Field(2.0, gt=0)
    """Passes over the dataset (ignored when `max_steps` > 0)."""
    max_steps: int = -1
    """Optimizer steps to run; -1: as many as `epochs` take."""
    batch_size: int = Field(1, ge=1)
    """Samples per device per forward pass."""
    grad_accum: int = Field(8, ge=1)
    """Forward passes per optimizer step."""
    warmup_ratio: float = Field(0.03, ge=0, lt=1)
    """Share of the steps spent warming the learning rate up."""
    scheduler: str = "cosine"
    """Learning-rate schedule (`linear`, `cosine`, `constant`, ...)."""
    weight_decay: float = Field(0.0, ge=0)
    """AdamW weight decay."""
    max_grad_norm: float = Field(1.0, gt=0)
    """Gradient clipping norm."""
    precision: Literal["auto", "bf16", "fp32"] = "auto"
    """`auto`: bf16 on a GPU that supports it, else fp32."""
    gradient_checkpointing: bool = True
    """Recompute activations in the backward pass: long trajectories fit in memory at about a third more compute."""
    attn_implementation: str = "sdpa"
    """Attention kernel: `sdpa`, `flash_attention_2` (when installed) or `eager`."""
    logging_steps: int = Field(10, ge=1)
    """Steps between loss logs (screen and TensorBoard)."""
    save_steps: int = Field(200, ge=1)
    """Steps between checkpoints."""
    save_total_limit: int = Field(3, ge=1)
    """Checkpoints kept (oldest deleted first)."""
    resume: bool = False
    """Continue from the latest checkpoint in `output_dir`."""
    seed: int = 0
    """Seed of data order and initialization (the trainer's `seed`)."""
    report_to: list[str] = Field(default_factory=lambda: ["tensorboard"])
    """Logging integrations (`tensorboard`; empty: none)."""
    progress: bool = True
    """Show a progress bar (rich) with the loss while training."""
