"""Per-verdict cost of the OS isolation layers and the memory watch: the same honest candidate (C++ on the CPU, CUDA
with `--device cuda`) judged side by side with everything on (this host's defaults), with the layers on and the
memory watch off (`verify.memory_watch = false`: the worker's GOTs, core code and C entry points read from outside),
and with both off (`KERNELMOSAIC_ISOLATION_CPU=none` / `KERNELMOSAIC_ISOLATION_CUDA=none`), each in a fresh process
so that the layer plan and the workers are fresh, cycling through the modes to spread the machine's load over all.

    python scripts/bench/bench_isolation.py [--runs 3] [--device cpu|cuda] [--out FILE.json]

Prints one row per mode: median verdict wall time (s) and median worker start time (s), as measured by the
verdict's own phases.
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
from tests.verify.kit import write
from kernelmosaic.verify import Verifier, VerifyConfig
tmp = Path(tempfile.mkdtemp())
if sys.argv[3] == "cuda":
    from tests.verify.gpu_kit import PROBLEM_ADD_RELU, cuda_candidate
    source = cuda_candidate("ext.add_relu(a, b)")
    config = VerifyConfig(device="cuda", trials=3, cache_dir=Path(sys.argv[2]), timing_profile="quick",
                          compile_baseline=False)
else:
    from tests.verify.kit import PROBLEM_ADD_RELU, candidate
    source = candidate("return ext.add_relu(a, b)")
    config = VerifyConfig(device="cpu", trials=3, cache_dir=Path(sys.argv[2]), timing_budget_ms=20, timing_rounds=2,
                          compile_baseline=False, memory_limit_gb=8)
config = config.model_copy(update={"memory_watch": sys.argv[4] == "watch"})
with Verifier(config) as v:
    t = time.perf_counter()
    verdict = v.verify(write(tmp, "p.py", PROBLEM_ADD_RELU), write(tmp, "c.py", source))
    wall = time.perf_counter() - t
print(json.dumps({"wall_s": wall, "accepted": verdict.accepted, "isolation": verdict.env.isolation,
                  "phases": verdict.phase_seconds}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", type=Path, help="also write the rows and medians here (JSON)")
    args = parser.parse_args()
    var = "KERNELMOSAIC_ISOLATION_CUDA" if args.device == "cuda" else "KERNELMOSAIC_ISOLATION_CPU"
    cache = Path(tempfile.mkdtemp(prefix="km-bench-iso-"))
    results: dict[str, list[dict]] = {"on": [], "no-watch": [], "off": []}
    for i in range(args.runs + 1):  # the first round warms the build cache and is not counted
        for mode in results:
            env = {**os.environ}
            env.pop(var, None)
            if mode == "off":
                env[var] = "none"
            watch = "watch" if mode == "on" else "nowatch"
            out = subprocess.run([sys.executable, "-c", ONE, str(ROOT), str(cache), args.device, watch], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            row = json.loads(out)
            print(f"run {i} {mode}: {row['wall_s']:.2f} s, accepted {row['accepted']}"
                  f"{' (warm-up, not counted)' if not i else ''}", file=sys.stderr, flush=True)
            if i:
                results[mode].append(row)
    for mode, rows in results.items():
        walls = [r["wall_s"] for r in rows]
        starts = [r["phases"].get("worker_start", 0.0) for r in rows]
        print(f"{mode}: median verdict {statistics.median(walls):.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)}); "
              f"worker start {statistics.median(starts) if starts else float('nan'):.2f} s; accepted "
              f"{sum(r['accepted'] for r in rows)}/{len(rows)}; layers {rows[0]['isolation']}")
    if args.out:
        args.out.write_text(json.dumps({"device": args.device, "rows": results, "median_s": {
            mode: statistics.median(r["wall_s"] for r in rows) for mode, rows in results.items()}}, indent=1))


if __name__ == "__main__":
    main()
