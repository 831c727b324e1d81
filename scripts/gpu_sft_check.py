"""The SFT loop on a GPU, end to end: generate (bundled replays, real CPU verifier) -> sft export -> a byte-level
tokenizer and a small random-init Llama -> full fine-tuning for a few hundred steps at >= 8k tokens per sample,
then a short LoRA run merged for serving -> each checkpoint runs one `generate` episode on the GPU as hf:PATH.
Writes summary.json and summary.md (tokens/s, peak memory, sample lengths) into --out.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
from pathlib import Path

import datasets
import tokenizers
import torch
import transformers

from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.export import export_dataset
from kernelmosaic.sft.template import chatml_tools_template
from kernelmosaic.sft.train import train
from kernelmosaic.sft.train_config import LoraSettings, TrainConfig
from kernelmosaic.store import open_store

log = logging.getLogger("gpu-sft-check")


def _cli(*args: str) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", *args], capture_output=True, text=True)
    log.info("kernelmosaic %s: exit %d in %.0f s\n%s", " ".join(args[:2]), done.returncode, time.monotonic() - started,
             (done.stdout + done.stderr)[-3000:])
    return done


def _base_model(rows: datasets.Dataset, path: Path, hidden: int, layers: int) -> None:
    """Byte-level tokenizer (the 256 bytes and the chat markers, no merges: ~1 token a character) and a random Llama."""
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    specials = ["<|im_start|>", "<|im_end|>", "[PAD]"]
    corpus = [m["content"] for row in rows for m in row["messages"]]
    bpe.train_from_iterator(corpus, tokenizers.trainers.BpeTrainer(
        vocab_size=256 + len(specials), special_tokens=specials,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="[PAD]", eos_token="<|im_end|>")
    tokenizer.chat_template = chatml_tools_template()
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 11 // 4, num_hidden_layers=layers,
        num_attention_heads=hidden // 64, num_key_value_heads=hidden // 64, max_position_embeddings=32768,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    transformers.LlamaForCausalLM(config).save_pretrained(path)


def _generate_on_gpu(model_path: str, work: Path, name: str, device: str) -> dict:
    db = work / f"{name}.db"
    started = time.monotonic()
    done = _cli("generate", "--tasks", "builtin", "--task", "l1_relu", "--model", f"hf:{model_path}", "--max-turns", "2",
                "--device", device, "--db", f"sqlite:///{db}", "--out", str(work / f"{name}-runs"), "--no-live",
                "--set", "model.max_new_tokens=64", "--set", f"model.device={device}")
    with open_store(f"sqlite:///{db}") as store:
        runs = store.list_runs()
        episodes = store.list_episodes(runs[0].id) if runs else []
        trajectory = store.load_trajectory(episodes[0].id) if episodes else None
    replies = [e for e in trajectory.events if e.type == "message" and e.message.role == "assistant"] if trajectory else []
    return {"exit_code": done.returncode, "seconds": round(time.monotonic() - started, 1),
            "episode": episodes[0].model_dump(mode="json", include={"status", "exit_reason", "exit_detail"}) if episodes else None,
            "assistant_turns": len(replies), "completion_tokens": sum(e.usage.completion_tokens for e in replies),
            "model": trajectory.model if trajectory else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/km-sft"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lora-steps", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=16384)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a dry run of this script, not the check
    summary: dict = {"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "torch": torch.__version__,
                     "transformers": transformers.__version__}

    db = f"sqlite:///{work / 'data.db'}"
    gen = _cli("generate", "--tasks", "builtin", "--model", "replay:bundled", "--device", "cpu", "--db", db,
               "--out", str(work / "runs"), "--no-live")
    summary["data_generate_exit"] = gen.returncode
    with open_store(db) as store:
        report = export_dataset(store, ExportConfig(variants=["full", "final_answer"]), work / "data")
    summary["export"] = {"rows": report.rows, "skipped": report.skipped, "totals": report.counts.totals}
    rows = datasets.load_from_disk(str(work / "data" / "full"))

    base = work / "base"
    _base_model(rows, base, args.hidden, args.layers)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    lengths = [len(tokenizer.apply_chat_template(r["messages"], tools=r["tools"], tokenize=True, return_dict=True)["input_ids"])
               for r in rows]
    summary["sample_tokens"] = {"min": min(lengths), "median": statistics.median(lengths), "max": max(lengths),
                                "samples": len(lengths), "at_least_8k": sum(n >= 8192 for n in lengths)}
    params = sum(p.numel() for p in transformers.AutoModelForCausalLM.from_pretrained(base).parameters())
    summary["model"] = {"hidden": args.hidden, "layers": args.layers, "parameters": params}

    full = TrainConfig(model=str(base), dataset=str(work / "data" / "full"), output_dir=str(work / "full-ft"),
                       max_length=args.max_length, lora=LoraSettings(enabled=False), learning_rate=3e-4,
                       max_steps=args.steps, grad_accum=1, logging_steps=25, save_steps=max(1, args.steps // 2),
                       progress=False)
    summary["full_ft"] = train(full).model_dump(mode="json")
    lora = full.model_copy(update={"output_dir": str(work / "lora"), "lora": LoraSettings(), "max_steps": args.lora_steps,
                                   "learning_rate": 1e-3})
    summary["lora"] = train(lora).model_dump(mode="json")
    summary["generate_full_ft"] = _generate_on_gpu(summary["full_ft"]["serving_path"], work, "gen-full", device)
    summary["generate_lora_merged"] = _generate_on_gpu(summary["lora"]["serving_path"], work, "gen-lora", device)

    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    ft, lo = summary["full_ft"], summary["lora"]
    lines = [f"# gpu-sft-check {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}", "",
             f"{summary['device']}, torch {summary['torch']}, transformers {summary['transformers']}",
             f"data: {summary['export']}", f"sample tokens: {summary['sample_tokens']}", f"model: {summary['model']}", "",
             "| run | steps | samples | truncated | loss | tokens | s | tokens/s | peak GiB |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in (("full fine-tuning", ft), ("LoRA (merged)", lo)):
        lines.append(f"| {name} | {r['steps']} | {r['samples']} | {r['truncated']} | {r['train_loss']:.4f} | "
                     f"{r['tokens_seen']} | {r['seconds']:.1f} | {r['tokens_per_second']:.0f} | {r['peak_memory_gb']:.2f} |")
    lines += ["", f"generate (full FT, hf:): {summary['generate_full_ft']}",
              f"generate (LoRA merged, hf:): {summary['generate_lora_merged']}"]
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    ok = all(summary[k]["episode"] and summary[k]["episode"]["status"] == "done" for k in ("generate_full_ft", "generate_lora_merged"))
    return 0 if ok and ft["steps"] == args.steps else 1


if __name__ == "__main__":
    sys.exit(main())
