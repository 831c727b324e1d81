"""What a `torch.compile` baseline build costs the host with Inductor's compile pool and with one compile thread.

Each run is a fresh process with empty Inductor and Triton caches that compiles a small problem's model (add, relu,
sum over rows) and runs it once: wall seconds of the first call, CPU seconds of the process and every child it
started, and the most processes it had at once (sampled every 50 ms). The verifier's workers run with
`TORCHINDUCTOR_COMPILE_THREADS=1` (verify/slot.py `worker_limits`); this is the measurement behind that choice.
Usage: python scripts/bench/bench_inductor_pool.py [--device cuda] [--repeats 2] [--out out/inductor_pool.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

CHILD = """
import resource, sys, time, torch
device = sys.argv[1]
model = lambda a, b: torch.relu(a + b).sum(dim=1) * 2.0
a, b = (torch.randn(512, 1024, device=device) for _ in range(2))
t = time.perf_counter()
torch.compile(model)(a, b)
if device == "cuda":
    torch.cuda.synchronize()
print(time.perf_counter() - t)
"""


def _descendants(pid: int) -> int:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout.split()
    children: dict[int, list[int]] = {}
    for child, parent in zip(out[0::2], out[1::2], strict=True):
        children.setdefault(int(parent), []).append(int(child))
    seen, stack = 0, [pid]
    while stack:
        for kid in children.get(stack.pop(), []):
            seen += 1
            stack.append(kid)
    return seen


def _one(device: str, threads: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="km-inductor-") as tmp:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": f"{tmp}/inductor", "TRITON_CACHE_DIR": f"{tmp}/triton"}
        env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
        if threads is not None:
            env["TORCHINDUCTOR_COMPILE_THREADS"] = threads
        before = os.times()
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, device], env=env, stdout=subprocess.PIPE, text=True)
        most = 0
        while proc.poll() is None:
            most = max(most, _descendants(proc.pid))
            time.sleep(0.05)
        out = proc.stdout.read()
        after = os.times()
        if proc.returncode != 0:
            raise SystemExit(f"the compile child failed ({proc.returncode})")
        return {"compile_s": round(float(out.split()[-1]), 2), "wall_s": round(time.perf_counter() - started, 2),
                "cpu_s": round((after.children_user - before.children_user) +
                               (after.children_system - before.children_system), 2),
                "most_children": most}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("out/inductor_pool.json"))
    args = parser.parse_args()
    result = {"date": date.today().isoformat(), "device": args.device, "cores": os.cpu_count(), "runs": {}}
    for label, threads in (("default pool", None), ("one thread", "1")):
        rows = [_one(args.device, threads) for _ in range(args.repeats)]  # interleaving would share no cache anyway
        result["runs"][label] = {k: statistics.median(r[k] for r in rows) for k in rows[0]} | {"all": rows}
        print(label, result["runs"][label], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print("| Inductor compile | first call s | process wall s | CPU s (with children) | most processes |")
    print("|---|---|---|---|---|")
    for label, r in result["runs"].items():
        print(f"| {label} | {r['compile_s']} | {r['wall_s']} | {r['cpu_s']} | {r['most_children']} |")


if __name__ == "__main__":
    main()
