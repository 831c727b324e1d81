"""Time from Ctrl-C (SIGINT) or SIGTERM to exit for every long command, and what each leaves behind: the figures
behind "stops within 3 s" (docs/cli.md). Each command is started on the CPU in a fresh folder, signalled once its
verifier has workers (compiling or judging), and timed from the signal to its exit; then its leftovers are counted:
live `kmworker` processes and `km-*` scratch folders.

    python scripts/bench/bench_stop.py [--runs 3] [--only generate,evaluate,...] [--out stop.json]

Needs pytest (`pip install -e '.[dev]'`) beside the package: it drives the commands with the stopping test's own
helpers (tests/verify/test_stopping_cpu.py), which import it.

Commands: `generate` (bundled replay, SIGINT), `evaluate --generations` (SIGINT), `verify-batch` (SIGINT and
SIGTERM), `verify` (SIGINT), `verify-serve` (SIGTERM, with a client's request in flight). Prints a markdown row per
command (date, machine load, exit codes, seconds per run, leftovers).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
try:  # one copy of the stopping test's helpers; without pytest only --help works
    from tests.verify.kit import PROBLEM_ADD_RELU, candidate, write
    from tests.verify.test_stopping_cpu import _cli, _workers
    from tests.verify.test_stopping_cpu import _pairs as stop_kit_pairs
    NO_PYTEST = False
except ModuleNotFoundError as exc:
    if exc.name != "pytest":
        raise
    NO_PYTEST = True


def _env(tmp: Path) -> dict[str, str]:
    (tmp / "tmp").mkdir(exist_ok=True)
    runtime = Path(tempfile.mkdtemp(prefix="kmr-"))  # short: a unix socket's path is limited to 107 bytes
    (tmp / "run").symlink_to(runtime)
    return {**os.environ, "TMPDIR": str(tmp / "tmp"), "KERNELMOSAIC_CACHE": str(tmp / "cache"),
            "XDG_RUNTIME_DIR": str(runtime), "COLUMNS": "200", "PYTHONPATH": str(ROOT / "src")}


def _pairs(tmp: Path, n: int) -> Path:
    return stop_kit_pairs(tmp, n, salt=f" {time.time_ns()}")


def _command(name: str, tmp: Path) -> tuple[list[str], int]:
    if name == "generate":
        return _cli("generate", "--tasks", "builtin", "--model", "replay:bundled", "--device", "cpu", "--no-live",
                    "--db", f"sqlite:///{tmp / 'km.db'}"), signal.SIGINT
    if name == "evaluate":
        return _cli("evaluate", "--generations", str(_pairs(tmp, 2)), "--device", "cpu", "--db",
                    f"sqlite:///{tmp / 'km.db'}"), signal.SIGINT
    if name.startswith("verify-batch"):
        sig = signal.SIGTERM if name.endswith("sigterm") else signal.SIGINT
        return _cli("verify-batch", str(_pairs(tmp, 3)), "--device", "cpu", "--out", str(tmp / "v.jsonl")), sig
    if name == "verify":
        problem = write(tmp, "problem.py", PROBLEM_ADD_RELU)
        cand = write(tmp, "candidate.py", candidate(f"return ext.add_relu(a, b)  # {time.time_ns()}"))
        return _cli("verify", str(problem), str(cand), "--device", "cpu"), signal.SIGINT
    if name == "verify-serve":
        return _cli("verify-serve", "--device", "cpu"), signal.SIGTERM
    raise SystemExit(f"unknown command {name}")


def one(name: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="km-stop-bench-"))
    env = _env(tmp)
    argv, sig = _command(name, tmp)
    proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = None
    try:
        if name == "verify-serve":  # a client's request in flight when the service is told to stop
            sockets = tmp / "run" / "kernelmosaic"
            _wait(lambda: sockets.is_dir() and any(sockets.glob("verify-*.sock")), 90)
            problem = write(tmp, "problem.py", PROBLEM_ADD_RELU)
            cand = write(tmp, "candidate.py", candidate(f"return ext.add_relu(a, b)  # {time.time_ns()}"))
            client = subprocess.Popen(_cli("verify", str(problem), str(cand), "--device", "cpu"), cwd=tmp, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait(lambda: len(_workers(tmp)) >= 1, 180)
        time.sleep(1.0)  # into the compile or the judgement, not its first instant
        started = time.monotonic()
        proc.send_signal(sig)
        proc.communicate(timeout=120)
        took = time.monotonic() - started
    finally:
        for p in (proc, client):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    time.sleep(0.3)  # a killed process is reaped by its new parent asynchronously
    left = _workers(tmp)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    scratch = len(list((tmp / "tmp").glob("km-*")))
    shutil.rmtree(tmp / "run", ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"command": name, "signal": signal.Signals(sig).name, "exit": proc.returncode, "seconds": round(took, 2),
            "workers_left": len(left), "scratch_left": scratch}


def _wait(predicate, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the command to start its workers")
        time.sleep(0.1)


def main() -> None:
    names = ["generate", "evaluate", "verify-batch", "verify-batch-sigterm", "verify", "verify-serve"]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default=",".join(names))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if NO_PYTEST:
        sys.exit("bench_stop.py needs pytest (pip install -e '.[dev]'): it runs tests/verify/test_stopping_cpu.py's "
                 "helpers")
    rows = []
    for run in range(args.runs):  # commands interleaved run by run: the machine's load spreads over all of them
        for name in args.only.split(","):
            rows.append({**one(name), "run": run, "load": os.getloadavg()[0]})
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    today = datetime.date.today().isoformat()
    print("\n| command | signal | date | load | exit | seconds from signal to exit | kmworker left | km-* left |\n"
          "|---|---|---|---|---|---|---|---|")
    for name in args.only.split(","):
        mine = [r for r in rows if r["command"] == name]
        seconds = ", ".join(f"{r['seconds']:.1f}" for r in mine)
        print(f"| `{name}` | {mine[0]['signal']} | {today} | {min(r['load'] for r in mine):.1f}-"
              f"{max(r['load'] for r in mine):.1f} | {', '.join(str(r['exit']) for r in mine)} | "
              f"{seconds} | {sum(r['workers_left'] for r in mine)} | "
              f"{sum(r['scratch_left'] for r in mine)} |")


if __name__ == "__main__":
    main()
