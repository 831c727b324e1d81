"""`sft train`: TRL's SFTTrainer on an exported variant, assistant-only loss, LoRA (PEFT) or full fine-tuning,
checkpoints and resume, TensorBoard, and a merged model `generate` runs as `hf:PATH`."""

from __future__ import annotations

import logging
import resource
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from kernelmosaic.sft.train_config import TrainConfig
from kernelmosaic.sft.train_data import length_report, load_rows

__all__ = ["TrainResult", "train"]

log = logging.getLogger(__name__)


class TrainResult(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    output_dir: str
    serving_path: str
    """The folder to run as `hf:PATH` (the merged model, or the fully fine-tuned one)."""
    adapter_path: str = ""
    """The LoRA adapter (PEFT format), when LoRA was used."""
    template: str
    """Which chat template was trained with (`file`, `own`, `trl_patched`, `kernelmosaic`)."""
    samples: int
    """Samples trained on (after dropping overlong ones, when asked)."""
    truncated: int
    """Samples longer than `max_length` (truncated, or dropped with `drop_overlong`)."""
    longest_tokens: int
    steps: int
    train_loss: float
    tokens_seen: int
    """Input tokens processed in this session's loop (padding excluded; a resumed run's earlier ones not counted)."""
    seconds: float
    """Wall time of this session's training loop."""
    tokens_per_second: float
    peak_memory_gb: float | None
    """Peak GPU memory allocated by torch during training; None when it trained on the CPU (not measured)."""
    peak_host_memory_gb: float
    """Peak resident memory of this process (the kernel's high-water mark, model loading included)."""
    resumed_from: str = ""


def _precision(config: TrainConfig) -> tuple[bool, Any]:
    import torch

    on_gpu = torch.cuda.is_available()
    bf16 = config.precision == "bf16" or (config.precision == "auto" and on_gpu and torch.cuda.is_bf16_supported())
    # LoRA keeps the frozen base in bf16 (half the memory); full fine-tuning keeps fp32 master weights under autocast.
    return bf16, torch.bfloat16 if bf16 and config.lora.enabled else torch.float32


def _latest_checkpoint(output_dir: Path) -> str:
    checkpoints = sorted(output_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    if not checkpoints:
        raise ValueError(f"--resume (resume = true): nothing to resume, no checkpoint-* folder in output_dir "
                         f"{output_dir} yet: run once without --resume (a checkpoint is saved every save_steps)")
    return str(checkpoints[-1])


def _sft_args(config: TrainConfig, bf16: bool) -> Any:
    from trl import SFTConfig

    return SFTConfig(
        output_dir=config.output_dir, max_length=config.max_length, assistant_only_loss=True,
        per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate, num_train_epochs=config.epochs, max_steps=config.max_steps,
        lr_scheduler_type=config.scheduler, warmup_steps=config.warmup_ratio, weight_decay=config.weight_decay,
        max_grad_norm=config.max_grad_norm, bf16=bf16, gradient_checkpointing=config.gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False}, logging_steps=config.logging_steps,
        save_steps=config.save_steps, save_total_limit=config.save_total_limit, seed=config.seed,
        report_to=config.report_to or "none", disable_tqdm=True, include_num_input_tokens_seen="non_padding",
        dataloader_pin_memory=_cuda(),  # pinned host memory only helps a copy to a GPU (a warning on the CPU)
    )


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _lora(config: TrainConfig) -> Any:
    if not config.lora.enabled:
        return None
    from peft import LoraConfig

    s = config.lora
    return LoraConfig(r=s.r, lora_alpha=s.alpha, lora_dropout=s.dropout, target_modules=s.target_modules,
                      task_type="CAUSAL_LM")


def build_trainer(config: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """The SFTTrainer, ready to train, and facts about its data (template, lengths, truncation)."""
    import transformers
    from trl import SFTTrainer

    from kernelmosaic.sft.progress import RichProgress, Throughput
    from kernelmosaic.sft.template import choose_template

    rows = load_rows(config.dataset)
    if not (Path(config.model) / "config.json").is_file():  # never a hub name: nothing is downloaded here
        raise ValueError(f"model {config.model}: not a model folder (no config.json there)")
    tokenizer = transformers.AutoTokenizer.from_pretrained(config.model)
    template = choose_template(tokenizer, config.chat_template)
    lengths = length_report(rows, tokenizer, template)
    overlong = [i for i, n in enumerate(lengths) if n > config.max_length]
    if overlong:
        action = "dropped" if config.drop_overlong else "truncated to their first"
        log.warning("%d of %d samples are longer than max_length %d tokens (longest %d): %s %d tokens",
                    len(overlong), len(lengths), config.max_length, max(lengths), action, config.max_length)
    if overlong and config.drop_overlong:
        rows = rows.select([i for i in range(len(rows)) if i not in set(overlong)])
    bf16, dtype = _precision(config)
    model = transformers.AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype,
                                                              attn_implementation=config.attn_implementation)
    if len(tokenizer) > model.get_input_embeddings().num_embeddings:
        log.warning("the template's markers are new tokens: embeddings grown to %d rows", len(tokenizer))
        model.resize_token_embeddings(len(tokenizer))
    throughput = Throughput()
    trainer = SFTTrainer(model=model, args=_sft_args(config, bf16), train_dataset=rows, processing_class=tokenizer,
                         peft_config=_lora(config), callbacks=[throughput] + [RichProgress()] * config.progress)
    if config.progress:  # the rich bar shows the loss; the trainer would also print every log as a dict
        trainer.remove_callback(transformers.PrinterCallback)
    if len(trainer.train_dataset) == 0:  # TRL drops samples whose every assistant token was cut off
        raise ValueError(f"dataset {config.dataset}: no sample left to train on: {len(overlong)} of {len(lengths)} are "
                         f"longer than max_length {config.max_length} tokens (longest {max(lengths, default=0)}), and a "
                         "sample truncated before its first assistant turn has nothing to learn; raise max_length")
    facts = {"template": template, "samples": len(rows), "truncated": len(overlong),
             "longest_tokens": max(lengths, default=0), "tokenizer": tokenizer, "throughput": throughput}
    return trainer, facts


def _save(trainer: Any, config: TrainConfig, tokenizer: Any) -> tuple[str, str]:
    out = Path(config.output_dir)
    trainer.save_model(str(out / "final"))
    tokenizer.save_pretrained(str(out / "final"))
    if not config.lora.enabled:
        return str(out / "final"), ""
    if not config.lora.merge:
        return "", str(out / "final")
    merged = trainer.model.merge_and_unload()
    merged.generation_config.eos_token_id = tokenizer.eos_token_id
    merged.generation_config.pad_token_id = tokenizer.pad_token_id
    merged.save_pretrained(str(out / "merged"))
    tokenizer.save_pretrained(str(out / "merged"))
    return str(out / "merged"), str(out / "final")


def train(config: TrainConfig) -> TrainResult:
    """Train as configured; returns what was trained, where it was saved, and the throughput."""
    import torch

    resumed = _latest_checkpoint(Path(config.output_dir)) if config.resume else ""
    trainer, facts = build_trainer(config)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    output = trainer.train(resume_from_checkpoint=resumed or None)
    peak = round(torch.cuda.max_memory_allocated() / 2**30, 3) if torch.cuda.is_available() else None
    serving, adapter = _save(trainer, config, facts["tokenizer"])
    tokens, seconds = facts["throughput"].tokens, facts["throughput"].seconds
    return TrainResult(
        output_dir=config.output_dir, serving_path=serving, adapter_path=adapter, template=facts["template"],
        samples=facts["samples"], truncated=facts["truncated"], longest_tokens=facts["longest_tokens"],
        steps=trainer.state.global_step, train_loss=float(output.training_loss), tokens_seen=tokens,
        seconds=round(seconds, 3), tokens_per_second=round(tokens / seconds, 1) if seconds > 0 else 0.0,
        peak_memory_gb=peak,
        peak_host_memory_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3),
        resumed_from=resumed,
    )
