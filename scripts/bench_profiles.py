#!/usr/bin/env python3
"""Quick against full timing on the same kernels (issue 15, item 4): every accepted candidate of the throughput set is
judged twice with one seed, under the `quick` profile (agent iterations) and the `full` one (final solutions,
evaluation), in alternating order; prints how far the two medians differ per kernel and the seconds each verdict
took (the judge phase: a kernel's first verdict also pays its build). Writes `profiles.json` and `profiles.md` to --out.

    python scripts/bench_profiles.py --device cuda --count 40 --out out/profiles
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput_cases import EXPECTED, write_cases  # noqa: E402

from kernelmosaic.verify import Verifier, VerifyConfig  # noqa: E402
from kernelmosaic.verify.verdict import Verdict  # noqa: E402

PROFILES = ("quick", "full")


def _row(verdict: Verdict, seconds: float) -> dict:
    t = verdict.timing
    return {"status": verdict.status.value, "seconds": round(seconds, 2),
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
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--count", type=int, default=40, help="Candidates written (the accepted kinds are judged).")
    parser.add_argument("--out", type=Path, default=Path("out/profiles"))
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cases = [c for c in write_cases(args.out / "cases", args.device, args.count) if EXPECTED.get(c[3])]
    rows: list[dict] = []
    with Verifier(VerifyConfig(device=args.device, seed=args.seed, use_service=False)) as verifier:
        for k, (cid, problem, candidate, kind) in enumerate(cases):
            row: dict = {"id": cid, "kind": kind}
            for profile in (PROFILES if k % 2 == 0 else PROFILES[::-1]):  # neither profile always runs first
                started = time.perf_counter()
                verdict = verifier.verify(problem, candidate, timing_profile=profile)
                row[profile] = _row(verdict, time.perf_counter() - started)
            rows.append(row)
            q, f = row["quick"], row["full"]
            print(f"{cid:40s} quick {q['status']:16s} {q['median_ms']} ms in {q['seconds']} s | "
                  f"full {f['status']:16s} {f['median_ms']} ms in {f['seconds']} s", flush=True)
    summary = _summary(rows)
    (args.out / "profiles.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    lines = [f"# quick vs full timing, {args.device}, {len(rows)} accepted-kind candidates", "",
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
