"""Workers forked from the fork server (verify/forkserver.py) against workers started as fresh interpreters
(`KERNELMOSAIC_FORK_SERVER=off`), side by side: one `Verifier` per mode, in a fresh process, judges the same
`--candidates` distinct honest C++ candidates one after another (distinct sources, as an agent's iterations or a
batch are; their builds are made once beforehand, so what is compared is what a judgement costs besides the build:
starting its compile, candidate and reference workers, and judging). Modes alternate run by run so that the
machine's load falls on both.

    python scripts/bench/bench_worker_start.py [--runs 3] [--candidates 6] [--out FILE.json]

Prints per mode the median seconds per verdict and per run, and how many verdicts were accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ONE = r'''
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])  # the repository root
from tests.verify.kit import PROBLEM_ADD_RELU, candidate, write
from kernelmosaic.verify import Verifier, VerifyConfig
tmp = Path(tempfile.mkdtemp())
config = VerifyConfig(device="cpu", trials=3, cache_dir=Path(sys.argv[2]), timing_budget_ms=20, timing_rounds=2,
                      compile_baseline=False, memory_limit_gb=8)
problem = write(tmp, "p.py", PROBLEM_ADD_RELU)
walls, accepted = [], 0
started = time.perf_counter()
with Verifier(config) as v:
    for k in range(int(sys.argv[3])):
        source = candidate(f"return ext.add_relu(a, b)  # iteration {k}")
        t = time.perf_counter()
        verdict = v.verify(problem, write(tmp, f"c{k}.py", source))
        walls.append(time.perf_counter() - t)
        accepted += verdict.accepted
print(json.dumps({"walls": walls, "total_s": time.perf_counter() - started, "accepted": accepted}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=6)
    parser.add_argument("--out", type=Path, help="also write the rows and medians here (JSON)")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="km-bench-start-"))
    results: dict[str, list[dict]] = {"fork server": [], "fresh interpreters": []}
    for i in range(args.runs + 1):  # the first round builds every candidate and is not counted
        for mode in results:
            env = {**os.environ, "KERNELMOSAIC_FORK_SERVER": "cpu" if mode == "fork server" else "off"}
            out = subprocess.run([sys.executable, "-c", ONE, str(ROOT), str(cache), str(args.candidates)], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            row = json.loads(out)
            print(f"run {i} {mode}: {row['total_s']:.1f} s for {len(row['walls'])} verdicts, accepted "
                  f"{row['accepted']}{' (builds; not counted)' if not i else ''}", file=sys.stderr, flush=True)
            if i:
                results[mode].append(row)
    medians = {}
    for mode, rows in results.items():
        per = [w for r in rows for w in r["walls"]]
        medians[mode] = statistics.median(per)
        totals = ", ".join(f"{r['total_s']:.1f}" for r in rows)
        print(f"{mode}: median {medians[mode]:.2f} s per verdict; runs {totals} s; accepted "
              f"{sum(r['accepted'] for r in rows)}/{sum(len(r['walls']) for r in rows)}")
    fresh, forked = medians["fresh interpreters"], medians["fork server"]
    print(f"ratio (fresh / forked, per verdict): {fresh / forked:.2f}x")
    if args.out:
        args.out.write_text(json.dumps({"rows": results, "median_s": medians}, indent=1))


if __name__ == "__main__":
    main()
