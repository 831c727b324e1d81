#!/usr/bin/env python3
"""The GPU evaluation check's runs, in one process: the generations folder judged, a scripted one-shot model over the
20 tasks, both reported (each alone and compared); prints the wall time per candidate (each verdict's own seconds).

    python3 scripts/gpu/gpu_eval_run.py WORK OUT [gens|model|all]   # run by scripts/gpu/gpu-eval-check
"""

from __future__ import annotations

import collections
import json
import os
import re
import sys
import time
from pathlib import Path

import typer

from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.contracts.trajectory import ToolResultEvent
from kernelmosaic.evaluate.cli import evaluate_command
from kernelmosaic.evaluate.report.cli import report_command
from kernelmosaic.models.scripted import register_script
from kernelmosaic.store import open_store

app = typer.Typer(pretty_exceptions_enable=False)  # the two commands as src/kernelmosaic/cli.py registers them
app.command("evaluate")(evaluate_command)
app.command("report")(report_command)


def kernelmosaic(*args: str) -> None:
    """Run one command in this process (the scripted model is registered here), its output going straight to the
    log as it is printed, so a device call cut short still shows how far it got."""
    started = time.time()
    try:
        returned = app(list(args), standalone_mode=False)  # click returns an Exit's code here instead of raising
        code = returned if isinstance(returned, int) else 0
    except SystemExit as stop:
        code = stop.code or 0
    print(f"[{time.time() - started:.0f} s] kernelmosaic {' '.join(args[:3])} -> exit {code}", flush=True)
    if code != 0:
        raise SystemExit(f"failed: kernelmosaic {' '.join(args[:3])} exited {code}")


def latest_run(db: str) -> int:
    with open_store(db) as store:
        return max(r.id for r in store.list_runs())


def main(root: Path, out: Path, part: str) -> None:
    db = f"sqlite:///{root / 'km.db'}"
    answers = json.loads((root / "answers.json").read_text())

    def reply(messages: list[Message]) -> Message:
        task_id = re.search(r"# Task (\S+):", messages[1].content).group(1)
        args = {"source": answers[task_id]}
        return Message(role="assistant", content="", tool_calls=[ToolCall(id=f"w_{task_id}", name="write_candidate",
                                                                           arguments=args, raw_arguments=json.dumps(args))])

    register_script("gpu-eval-kit", lambda: [reply])
    common = ["--tasks", f"kernelbench:{root / 'kb'}", "--device", "cuda", "--db", db, "--out", str(root / "runs"),
              "--concurrency", "8"]
    if executor := os.environ.get("KM_EVAL_EXECUTOR"):  # `ray`: judged on the cluster's per-GPU judges
        common += ["--executor", executor]
    for item in os.environ.get("KM_EVAL_SET", "").split():  # e.g. verify.judges_per_gpu=6 (a new run only)
        common += ["--set", item]

    def report(rid: int) -> None:
        kernelmosaic("report", str(rid), "--db", db, "--out", str(out / f"report-run-{rid}"))
        print(f"# wall time per candidate, run {rid}")
        per_gpu: collections.Counter = collections.Counter()
        with open_store(db) as store:
            for info in store.list_episodes(rid):
                verdicts = [e.verdict for e in store.load_trajectory(info.id).events
                            if isinstance(e, ToolResultEvent) and e.verdict is not None]
                for v in verdicts:
                    per_gpu[v.env.gpu_uuid or "(judged on no GPU)"] += 1
                    print(f"{info.task_id:40s} {v.status.value:20s} {v.seconds:7.1f} s  compile {v.compile.seconds:6.1f} s "
                          f"phases {v.phase_seconds}")
        print(f"# verdicts per GPU, run {rid}: {dict(per_gpu)}", flush=True)

    def evaluate(source: list[str], model: str) -> int:
        """Evaluate, or resume the unfinished run of the same model: the work folder persists while the machine stays
        warm, so a part cut short by one device call is finished by the next (`KM_EVAL_PART` again)."""
        with open_store(db) as store:
            open_runs = [r.id for r in store.list_runs() if r.model == model and r.finished is None]
        if open_runs:
            print(f"resuming evaluation run {max(open_runs)} ({model})", flush=True)
            kernelmosaic("evaluate", "--resume", str(max(open_runs)), "--db", db, "--out", str(root / "runs"))
            return max(open_runs)
        kernelmosaic("evaluate", *source, *common)
        return latest_run(db)

    runs = []  # each run is reported as soon as it ends, so a device call cut short keeps what finished
    if part in ("gens", "all"):
        runs.append(evaluate(["--generations", str(root / "gens")], f"generations:{root / 'gens'}"))
        report(runs[-1])
    if part in ("model", "all"):
        runs.append(evaluate(["--model", "scripted:gpu-eval-kit"], "scripted:gpu-eval-kit"))
        report(runs[-1])
    if not runs:
        with open_store(db) as store:
            runs = [r.id for r in store.list_runs()][::-1]
        for rid in runs:
            report(rid)
    if len(runs) > 1:
        kernelmosaic("report", str(runs[0]), *[x for r in runs[1:] for x in ("--compare", str(r))], "--db", db,
                     "--out", str(out / "report-compare"))


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):  # the docstring is the usage
        print(__doc__)
        sys.exit(0)
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "all")
