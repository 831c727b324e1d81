"""The SFT check's evaluation stage (issue 14): `kernelmosaic evaluate` runs the starting model and each checkpoint
as hf:PATH on the same tasks (one sample each, generation bounded by `model.max_new_tokens`, the real verifier on the
device), then `kernelmosaic report FIRST --compare ...` writes report.html, summary.json and summary.md. Each
episode's wall time is listed, with its verdict's own seconds when the model wrote a candidate that was judged.

A module of scripts/gpu/gpu_sft_check.py (its `evaluate` stage); run that. Nothing runs on its own.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import time
from pathlib import Path

from kernelmosaic.contracts.trajectory import ToolResultEvent
from kernelmosaic.store import open_store

__all__ = ["cli", "evaluate_models", "evaluation_lines"]

log = logging.getLogger("gpu-sft-check")


def cli(*args: str) -> subprocess.CompletedProcess:
    """`kernelmosaic ARGS` as a child process (as a person runs it); its output's tail goes to the log."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kernelmosaic.cli", *args], capture_output=True, text=True)
    log.info("kernelmosaic %s: exit %d in %.0f s\n%s", " ".join(args[:2]), done.returncode, time.monotonic() - started,
             (done.stdout + done.stderr)[-3000:])
    return done


def _episodes(db: str, run_id: int) -> list[dict]:
    rows = []
    with open_store(db) as store:
        for info in store.list_episodes(run_id):
            events = store.load_trajectory(info.id).events
            replies = [e for e in events if e.type == "message" and e.message.role == "assistant"]
            verdicts = [e.verdict for e in events if isinstance(e, ToolResultEvent) and e.verdict is not None]
            rows.append({"task": info.task_id, "status": info.status, "exit_reason": info.exit_reason,
                         "wall_s": round(info.totals.wall_seconds, 1),
                         "completion_tokens": sum(e.usage.completion_tokens for e in replies),
                         "verdicts": [{"status": v.status.value, "seconds": round(v.seconds, 1)} for v in verdicts]})
    return rows


def evaluate_models(models: dict[str, Path], work: Path, out: Path, *, tasks: str, limit: int, mode: str,
                    max_new_tokens: int, device: str) -> dict:
    """Evaluate each model (name -> folder) in one store, then report the first beside the others into OUT/eval-compare."""
    db = f"sqlite:///{work / 'eval.db'}"
    summary: dict = {"tasks": tasks, "limit": limit, "mode": mode, "max_new_tokens": max_new_tokens, "runs": {}}
    for name, path in models.items():
        started = time.monotonic()
        done = cli("evaluate", "--model", f"hf:{path}", "--tasks", tasks, "--limit", str(limit), "--mode", mode,
                   "--samples", "1", "--max-turns", "3", "--device", device, "--db", db, "--out", str(work / "eval-runs"),
                   "--set", f"model.max_new_tokens={max_new_tokens}",
                   "--set", f"model.device={'cuda:0' if device == 'cuda' else 'cpu'}")
        found = re.search(r"evaluation run (\d+)", done.stdout)
        run_id = int(found.group(1)) if found else 0
        summary["runs"][name] = {"model": f"hf:{path}", "exit_code": done.returncode, "run_id": run_id,
                                 "seconds": round(time.monotonic() - started, 1),
                                 "episodes": _episodes(db, run_id) if run_id else []}
    ids = [r["run_id"] for r in summary["runs"].values() if r["run_id"]]
    if ids:
        compare = [x for rid in ids[1:] for x in ("--compare", str(rid))]
        summary["report_exit_code"] = cli("report", str(ids[0]), *compare, "--db", db,
                                          "--out", str(out / "eval-compare")).returncode
    summary["ok"] = bool(ids) and len(ids) == len(models) and summary.get("report_exit_code") == 0 \
        and all(r["exit_code"] == 0 for r in summary["runs"].values())
    return summary


def evaluation_lines(summary: dict) -> list[str]:
    """The stage's part of summary.md: one line per run, then each episode's wall time and verdicts."""
    lines = [f"## evaluate ({summary['mode']}, {summary['tasks']} limit {summary['limit']}, 1 sample, "
             f"max_new_tokens {summary['max_new_tokens']}); compared in eval-compare/ (report.html, summary.md, "
             f"summary.json)", ""]
    for name, run in summary["runs"].items():
        n = len(run["episodes"])
        lines.append(f"- {name} ({run['model']}): run {run['run_id']}, exit {run['exit_code']}, {run['seconds']} s for "
                     f"{n} episode(s)" + (f", {run['seconds'] / n:.1f} s per episode" if n else ""))
    lines += ["", "| model | task | exit | tokens | episode wall s | verdicts (status, s) |", "|---|---|---|---|---|---|"]
    for name, run in summary["runs"].items():
        for e in run["episodes"]:
            judged = ", ".join(f"{v['status']} {v['seconds']}" for v in e["verdicts"]) or "none (no candidate judged)"
            lines.append(f"| {name} | {e['task']} | {e['exit_reason']} | {e['completion_tokens']} | {e['wall_s']} | "
                         f"{judged} |")
    return lines + [f"\nreport --compare exit {summary.get('report_exit_code', 'not run')}"]


if __name__ == "__main__":  # a module: running it (with --help or not) shows what it is
    print(__doc__)
