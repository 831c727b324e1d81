#!/usr/bin/env python3
"""Quick against full timing on the same kernels (issue 15, item 4): 20 distinct CUDA kernels (the elementwise
operations of `gpu_eval_kit.py`, our own, at sizes from 0.5 to 4 M elements) plus the accepted Triton and fast-form
candidates of the throughput set, judged with one seed under the `quick` profile (agent iterations) and the `full` one
(final solutions, evaluation), each profile one `verify_many` batch (device slots side by side; timing holds the
device alone). Prints how far the two medians differ per kernel and the seconds each verdict took (the judge phase;
a kernel's first verdict also pays its build). Writes `profiles.json` and `profiles.md` to --out. On a CPU
(`--device cpu`) the throughput set's C++ candidates stand in for the CUDA kernels.

    python scripts/bench/bench_profiles.py --device cuda --out out/profiles
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # throughput_cases, beside this file
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))  # gpu_eval_kit
import gpu_eval_kit  # noqa: E402
from throughput_cases import EXPECTED, write_cases  # noqa: E402

from kernelmosaic.contracts.verdict import Verdict  # noqa: E402
from kernelmosaic.verify import Verifier, VerifyConfig  # noqa: E402

PROFILES = ("quick", "full")


def _row(verdict: Verdict) -> dict:
    t = verdict.timing
    return {"status": verdict.status.value, "seconds": round(verdict.seconds, 2),
            "judge_s": round(verdict.phase_seconds.get("judge", 0.0), 2),
            "timing_s": round(verdict.phase_seconds.get("timing", 0.0), 2),
            "timing_checks_s": round(verdict.phase_seconds.get("timing_checks", 0.0), 2),
            "timing_bursts_s": round(verdict.phase_seconds.get("timing_bursts", 0.0), 2),
            "worker_start_s": round(verdict.phase_seconds.get("worker_start", 0.0), 2),
            "median_ms": round(t.candidate.median_ms, 5) if t else None,
            "eager_ms": round(t.eager.median_ms, 5) if t else None,
            "samples": t.candidate.samples if t else None, "speedup_vs_eager": t.speedup_vs_eager if t else None}


def _summary(rows: list[dict]) -> dict:
    both = [r for r in rows if all(r[p]["median_ms"] for p in PROFILES)]
    diffs = [abs(r["quick"]["median_ms"] / r["full"]["median_ms"] - 1) for r in both]
    out = {"kernels": len(both)}
    if diffs:
        out.update(median_rel_diff=round(statistics.median(diffs), 4), max_rel_diff=round(max(diffs), 4),
                   within_5pct=sum(d <= 0.05 for d in diffs))
    for p in PROFILES:  # judging only: the first verdict of a kernel also pays its build
        secs = [r[p]["judge_s"] for r in both]
        if secs:
            out[f"{p}_judge_s_median"], out[f"{p}_judge_s_max"] = round(statistics.median(secs), 2), max(secs)
        timing = [r[p]["timing_s"] for r in both]  # the verdict's timing phase: rounds, bursts, checks
        if timing:
            out[f"{p}_timing_s_median"], out[f"{p}_timing_s_max"] = round(statistics.median(timing), 2), max(timing)
            out[f"{p}_timing_within_1s"] = sum(t <= 1.0 for t in timing)
    return out


def _eval_kit_cases(root: Path) -> list[tuple[str, Path, Path, str]]:
    """The 20 elementwise operations, each its own problem file and correct candidate (one shared extension)."""
    out = []
    for k, (name, (_, expr, _, _)) in enumerate(gpu_eval_kit.OPS.items()):
        folder = root / "ops" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        rows = 128 << (k % 4)  # 128 .. 1024 rows of 4096: 0.5 M to 4 M elements (16 M took 40 s a verdict)
        (folder / "problem.py").write_text(gpu_eval_kit.PROBLEM.format(name=name, expr=expr)
                                           .replace("batch_size = 4096", f"batch_size = {rows}"))
        (folder / "candidate.py").write_text(gpu_eval_kit.cuda_candidate(f"{name.lower()}_good"))
        out.append((f"{name.lower()} ({rows}x4096)", folder / "problem.py", folder / "candidate.py", "correct"))
    return out


def _cases(root: Path, device: str) -> list[tuple[str, Path, Path, str]]:
    """Distinct accepted kernels: of the throughput set, one candidate per distinct kernel text (its variant
    comment aside), and on CUDA the eval kit's 20 operations."""
    seen, out = set(), []
    for case in write_cases(root / "throughput", device, 32):
        text = "\n".join(line for line in case[2].read_text().splitlines() if "# variant" not in line)
        if EXPECTED.get(case[3]) and text not in seen:
            seen.add(text)
            out.append(case)
    return out + (_eval_kit_cases(root) if device == "cuda" else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--out", type=Path, default=Path("out/profiles"))
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--compile-baseline", action="store_true",
                        help="also build and time each problem's torch.compile baseline (off: the comparison is of the "
                             "candidates' medians, and 20 Inductor builds would cost the device call minutes)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cases = _cases(args.out / "cases", args.device)
    rows: list[dict] = [{"id": cid, "kind": kind} for cid, _, _, kind in cases]
    config = VerifyConfig(device=args.device, seed=args.seed, use_service=False, compile_baseline=args.compile_baseline)
    with Verifier(config) as verifier:
        for profile in PROFILES:
            started = time.perf_counter()
            for k, verdict in verifier.verify_many([(p, c) for _, p, c, _ in cases], timing_profile=profile):
                rows[k][profile] = _row(verdict)
                r = rows[k][profile]
                print(f"{profile} {rows[k]['id']:40s} {r['status']:16s} {r['median_ms']} ms, judged in {r['judge_s']} s",
                      flush=True)
            print(f"{profile}: {len(cases)} verdicts in {time.perf_counter() - started:.0f} s", flush=True)
    summary = _summary(rows)
    (args.out / "profiles.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    lines = [f"# quick vs full timing, {args.device}, {len(rows)} accepted-kind candidates, torch.compile baseline "
             f"{'on' if args.compile_baseline else 'off'}", "",
             "| kernel | quick ms | full ms | quick / full | quick judge s | full judge s |", "|---|---|---|---|---|---|"]
    for r in rows:
        q, f = r["quick"], r["full"]
        ratio = f"{q['median_ms'] / f['median_ms']:.3f}" if q["median_ms"] and f["median_ms"] else "-"
        lines.append(f"| {r['id']} | {q['median_ms']} | {f['median_ms']} | {ratio} | {q['judge_s']} | {f['judge_s']} |")
    lines += ["", f"summary: {summary}"]
    (args.out / "profiles.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
