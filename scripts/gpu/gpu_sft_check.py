"""The SFT loop on a GPU, end to end, in stages (`--stages`, default all):

- `data`: generate (bundled replays, real CPU verifier) -> sft export -> a byte-level tokenizer and a small random-init
  Llama, saved as the starting model (WORK/base) before any training;
- `full`: full fine-tuning for a few hundred steps at >= 8k tokens per sample (WORK/full-ft/final);
- `lora`: a short LoRA run merged for serving (WORK/lora/merged);
- `generate`: each checkpoint runs one `generate` episode on the GPU as hf:PATH;
- `evaluate`: `kernelmosaic evaluate` of the starting model and each checkpoint on --eval-tasks tasks, then
  `report --compare` (gpu_sft_eval.py).

Stages left out reuse WORK from an earlier call. Writes summary.json and summary.md (tokens/s, peak memory, sample
lengths, seconds per stage, evaluation runs) into --out, and the compared evaluation report into --out/eval-compare.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path

import datasets
import torch
import transformers
from gpu_sft_eval import cli, evaluate_models, evaluation_lines  # beside this file

from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.export import export_dataset
from kernelmosaic.sft.tiny import SPECIAL_TOKENS, build_tiny_base
from kernelmosaic.sft.train import train
from kernelmosaic.sft.train_config import LoraSettings, TrainConfig
from kernelmosaic.store import open_store

STAGES = ("data", "full", "lora", "generate", "evaluate")


def _generate_on_gpu(model_path: str, work: Path, name: str, device: str) -> dict:
    db = work / f"{name}.db"
    started = time.monotonic()
    done = cli("generate", "--tasks", "builtin", "--task", "l1_relu", "--model", f"hf:{model_path}", "--max-turns", "2",
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


def _data(work: Path, args: argparse.Namespace, summary: dict) -> None:
    db = f"sqlite:///{work / 'data.db'}"
    gen = cli("generate", "--tasks", "builtin", "--model", "replay:bundled", "--device", "cpu", "--db", db,
               "--out", str(work / "runs"), "--no-live")
    summary["data_generate_exit"] = gen.returncode
    with open_store(db) as store:
        report = export_dataset(store, ExportConfig(variants=["full", "final_answer"]), work / "data")
    summary["export"] = {"rows": report.rows, "skipped": report.skipped, "totals": report.counts.totals}
    rows = datasets.load_from_disk(str(work / "data" / "full"))
    # the starting model, kept as it is for `evaluate`: the bytes and the chat markers only (~1 token a character)
    build_tiny_base(work / "data" / "full", work / "base", hidden=args.hidden, layers=args.layers,
                    vocab=256 + len(SPECIAL_TOKENS), head_dim=64)
    tokenizer = transformers.AutoTokenizer.from_pretrained(work / "base")
    lengths = [len(tokenizer.apply_chat_template(r["messages"], tools=r["tools"], tokenize=True, return_dict=True)["input_ids"])
               for r in rows]
    summary["sample_tokens"] = {"min": min(lengths), "median": statistics.median(lengths), "max": max(lengths),
                                "samples": len(lengths), "at_least_8k": sum(n >= 8192 for n in lengths)}
    params = sum(p.numel() for p in transformers.AutoModelForCausalLM.from_pretrained(work / "base").parameters())
    summary["model"] = {"hidden": args.hidden, "layers": args.layers, "parameters": params}


def _markdown(summary: dict) -> list[str]:
    lines = [f"# gpu-sft-check {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}", "",
             f"{summary['device']}, torch {summary['torch']}, transformers {summary['transformers']}",
             f"stages: {summary['stages']}; seconds per stage: {summary['stage_seconds']}",
             f"data: {summary.get('export', 'reused')}", f"sample tokens: {summary.get('sample_tokens', 'reused')}",
             f"model: {summary.get('model', 'reused')}; starting model (saved before training): {summary['base']}", "",
             "| run | steps | samples | truncated | loss | tokens | s | tokens/s | peak GiB |", "|---|---|---|---|---|---|---|---|---|"]
    for name, key in (("full fine-tuning", "full_ft"), ("LoRA (merged)", "lora")):
        if key in summary:
            r = summary[key]
            lines.append(f"| {name} | {r['steps']} | {r['samples']} | {r['truncated']} | {r['train_loss']:.4f} | "
                         f"{r['tokens_seen']} | {r['seconds']:.1f} | {r['tokens_per_second']:.0f} | {r['peak_memory_gb']:.2f} |")
    lines.append("")
    lines += [f"{key.replace('_', ' ')} (hf:): {summary[key]}" for key in summary if key.startswith("generate_")]
    return lines + (["", *evaluation_lines(summary["evaluate"])] if "evaluate" in summary else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/km-sft"))
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lora-steps", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=16384)
    parser.add_argument("--eval-tasks", default="builtin", help="task source of the evaluate stage")
    parser.add_argument("--eval-limit", type=int, default=10, help="tasks evaluated per model")
    parser.add_argument("--eval-mode", default="one-shot", choices=("one-shot", "agent"))
    parser.add_argument("--eval-max-new-tokens", type=int, default=256, help="generated tokens per reply, at most")
    args = parser.parse_args()
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    if set(stages) - set(STAGES):
        parser.error(f"--stages: unknown {sorted(set(stages) - set(STAGES))} (known: {', '.join(STAGES)})")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a dry run of this script, not the check
    summary: dict = {"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "torch": torch.__version__,
                     "transformers": transformers.__version__, "stages": stages, "stage_seconds": {},
                     "base": str(work / "base")}
    full = TrainConfig(model=str(work / "base"), dataset=str(work / "data" / "full"), output_dir=str(work / "full-ft"),
                       max_length=args.max_length, lora=LoraSettings(enabled=False), learning_rate=3e-4,
                       max_steps=args.steps, grad_accum=1, logging_steps=25, save_steps=max(1, args.steps // 2),
                       progress=False)
    lora = full.model_copy(update={"output_dir": str(work / "lora"), "lora": LoraSettings(), "max_steps": args.lora_steps,
                                   "learning_rate": 1e-3})
    checkpoints = {"full_ft": work / "full-ft" / "final", "lora_merged": work / "lora" / "merged"}
    ok = True
    for stage in stages:
        started = time.monotonic()
        if stage == "data":
            _data(work, args, summary)
        elif stage == "full":
            summary["full_ft"] = train(full).model_dump(mode="json")
            ok &= summary["full_ft"]["steps"] == args.steps
        elif stage == "lora":
            summary["lora"] = train(lora).model_dump(mode="json")
        elif stage in ("generate", "evaluate"):
            ready = {name: path for name, path in checkpoints.items() if (path / "config.json").is_file()}
            if not ready:
                raise SystemExit(f"stage {stage}: no checkpoint in {work} (run the full or lora stage first)")
            if stage == "generate":
                for name, path in ready.items():
                    summary[f"generate_{name}"] = _generate_on_gpu(str(path), work, f"gen-{name}", device)
                    episode = summary[f"generate_{name}"]["episode"]
                    ok &= bool(episode) and episode["status"] == "done"
            else:
                summary["evaluate"] = evaluate_models({"base": work / "base", **ready}, work, args.out,
                                                      tasks=args.eval_tasks, limit=args.eval_limit, mode=args.eval_mode,
                                                      max_new_tokens=args.eval_max_new_tokens, device=device)
                ok &= summary["evaluate"]["ok"]
        summary["stage_seconds"][stage] = round(time.monotonic() - started, 1)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1))  # what ran so far, if a later stage dies
    lines = _markdown(summary)
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
