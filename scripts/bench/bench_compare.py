#!/usr/bin/env python3
"""Seconds per `compare_outputs` call on one large fp32 output (default 4096×4096 = 16M elements), the chunked
implementation side by side with the whole-tensor one it replaced (tests/verify/compare_reference.py), on this
CPU. Checks that both return the same Comparison in every case before timing it.

Usage: python scripts/bench/bench_compare.py [--side 4096] [--reps 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from verify.compare_reference import reference_compare_outputs  # noqa: E402

from kernelmosaic.verify.compare import compare_outputs  # noqa: E402
from kernelmosaic.verify.sandbox.kmworker.common import package_outputs  # noqa: E402

ATOL = RTOL = 1e-4


def cases(side: int) -> dict[str, tuple[dict, dict, dict | None]]:
    """name: (reference, candidate, oracle) packages, like a matmul-sized output of a verdict's trials."""
    gen = torch.Generator().manual_seed(0)
    x64 = torch.randn(side, side, generator=gen, dtype=torch.float64) * 3
    ref = x64.float()
    honest = (x64 * (1 + 1e-7 * torch.randn(side, side, generator=gen, dtype=torch.float64))).float()
    broken = honest.clone()
    broken.view(-1)[side * side // 2::997] += 1.0
    holes = ref.clone()
    holes.view(-1)[::4093] = float("nan")
    oracle = {"outputs64": package_outputs(x64), "terms": package_outputs(x64.abs() * 64)}
    ref_p, honest_p = package_outputs(ref), package_outputs(honest)
    return {"oracle, accepted": (ref_p, honest_p, oracle),
            "oracle, rejected (1 in 997 of the 2nd half off)": (ref_p, package_outputs(broken), oracle),
            "oracle, NaN at the same places in both": (package_outputs(holes), package_outputs(holes), oracle),
            "no oracle, accepted": (ref_p, honest_p, None)}


def seconds(fn: Callable[[], object], reps: int) -> float:
    fn()  # warm-up: allocator, first-touch pages
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.side ** 2:,} elements, "
          f"median of {args.reps}, load average {os.getloadavg()[0]:.1f} at the start")
    print("| case | old s/call | new s/call | speedup |\n|---|---|---|---|")
    for name, (ref, got, oracle) in cases(args.side).items():
        assert compare_outputs(ref, got, ATOL, RTOL, oracle) == reference_compare_outputs(ref, got, ATOL, RTOL, oracle)
        old = seconds(lambda: reference_compare_outputs(ref, got, ATOL, RTOL, oracle), args.reps)  # noqa: B023
        new = seconds(lambda: compare_outputs(ref, got, ATOL, RTOL, oracle), args.reps)  # noqa: B023
        print(f"| {name} | {old:.3f} | {new:.3f} | {old / new:.1f}× |", flush=True)


if __name__ == "__main__":
    main()
