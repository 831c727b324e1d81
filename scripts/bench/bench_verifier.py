#!/usr/bin/env python3
"""GPU benchmarks of the verifier itself: device ceilings, timing repeatability across separate runs, the
side-stream false speedup a naive harness reports (side by side with ours), and verdict latency.

Writes JSON (--out) and a markdown table beside it (bench.md). Run by scripts/gpu/gpu-check.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from verify import gpu_kit as gk  # noqa: E402

from kernelmosaic.verify import Verifier, VerifyConfig  # noqa: E402
from kernelmosaic.verify.slot import nvidia_smi  # noqa: E402


def naive_event_ms(problem: Path, candidate: Path, reps: int = 50) -> float:
    """How a naive harness times: events on the default stream, the same inputs every call, no device-wide sync."""
    def load(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    prob, cand = load(problem, "naive_problem"), load(candidate, "naive_candidate")
    inputs = [x.cuda() for x in prob.get_inputs()]
    model = cand.ModelNew().cuda()
    for _ in range(5):
        model(*inputs)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        model(*inputs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    torch.cuda.synchronize()
    return sorted(times)[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/bench.json")
    ap.add_argument("--runs", type=int, default=3, help="separate verifier runs per kernel (repeatability)")
    args = ap.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="km-bench-"))
    cache = Path(os.environ.get("KERNELMOSAIC_CACHE", work / "cache"))
    files = {"add.py": gk.PROBLEM_ADD_RELU, "mm.py": gk.PROBLEM_MATMUL,
             "add_ok.py": gk.cuda_candidate("ext.add_relu(a, b)"), "mm_ok.py": gk.matmul_candidate("ext.matmul(a, b)"),
             "mm_side.py": gk.matmul_candidate("ext.matmul_side_stream(a, b)")}
    for name, text in files.items():
        (work / name).write_text(text)
    config = VerifyConfig(device="cuda", trials=3, cache_dir=cache)  # the timing a user gets by default
    result: dict = {"device": torch.cuda.get_device_name(0), "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__}

    # The peaks are measured by a verifier of their own, so their seconds of full-power matmuls do not run right
    # before the first timed run, where they could widen its spread.
    with Verifier(config) as v:
        result["peaks"] = v.device_peaks().model_dump()
    # Side by side in every run: the default window (a spin kernel ahead of each timed call hides the host's launch
    # latency, VerifyConfig.timing_lead_us) and the same without it; the order alternates between runs.
    variants = {"lead": config, "no lead": config.model_copy(update={"timing_lead_us": 0.0})}
    repeat = {}
    for run in range(1, args.runs + 1):  # separate verifier runs: fresh worker processes each time
        order = list(variants) if run % 2 else list(variants)[::-1]
        for variant in order:
            with Verifier(variants[variant]) as v:
                for key, prob, cand in (("add_relu_16M", "add.py", "add_ok.py"), ("tiled_matmul_2048", "mm.py", "mm_ok.py")):
                    clocks_before = nvidia_smi("clocks.sm") or "?"
                    t0 = time.perf_counter()
                    verdict = v.verify(work / prob, work / cand)
                    assert verdict.accepted, verdict.message
                    timing = verdict.timing
                    repeat.setdefault(f"{key} {variant}", []).append({
                        "run": run, "candidate_ms": timing.candidate.median_ms, "eager_ms": timing.eager.median_ms,
                        "compile_ms": timing.compile.median_ms if timing.compile else None,
                        "iqr_ms": timing.candidate.q3_ms - timing.candidate.q1_ms, "samples": timing.candidate.samples,
                        "escaped_ms": timing.escaped_ms, "lead_us": timing.lead_us,
                        "sm_mhz_before": clocks_before, "sm_mhz_after": (nvidia_smi("clocks.sm") or "?"),
                        "verdict_s": time.perf_counter() - t0})
    result["repeatability"] = repeat
    result["spread"] = {key: max(r["candidate_ms"] for r in rows) / min(r["candidate_ms"] for r in rows) - 1
                        for key, rows in repeat.items()}

    with Verifier(config.model_copy(update={"static_checks": False, "compile_baseline": False})) as v:
        ours = v.verify(work / "mm.py", work / "mm_side.py")
        honest = v.verify(work / "mm.py", work / "mm_ok.py")
    naive_ms = naive_event_ms(work / "mm.py", work / "mm_side.py")
    eager_ms = honest.timing.eager.median_ms
    result["side_stream"] = {
        "naive_harness_ms": naive_ms, "naive_speedup_vs_eager": eager_ms / naive_ms,
        "kernelmosaic_status": ours.status.value,
        "kernelmosaic_ms": ours.timing.candidate.median_ms if ours.timing else None,
        "kernelmosaic_speedup_vs_eager": ours.timing.speedup_vs_eager if ours.timing else None,
        "same_kernel_default_stream_ms": honest.timing.candidate.median_ms, "eager_ms": eager_ms,
    }
    out.write_text(json.dumps(result, indent=2))

    p = result["peaks"]
    lines = [f"device {result['device']}, torch {result['torch']}, {result['date']}", "",
             f"measured ceilings: copy {p['bandwidth_gbps']:.0f} GB/s, fp32 {p['fp32_tflops']:.1f} TFLOP/s, "
             f"bf16 {p['bf16_tflops']:.0f} TFLOP/s", "",
             "| kernel | run | ms | IQR ms | eager ms | compile ms | escaped ms | lead µs | SM MHz before/after | samples | verdict s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, rows in repeat.items():
        for r in rows:
            lines.append(f"| {key} | {r['run']} | {r['candidate_ms']:.4f} | {r['iqr_ms']:.4f} | {r['eager_ms']:.4f} | "
                         f"{r['compile_ms'] or float('nan'):.4f} | {r['escaped_ms']:.4f} | {r['lead_us']:.0f} | "
                         f"{r['sm_mhz_before']}/{r['sm_mhz_after']} | {r['samples']} | {r['verdict_s']:.1f} |")
        lines.append(f"| {key} | max/min − 1 | {result['spread'][key]:.1%} | | | | | | | | |")
    s = result["side_stream"]
    lines += ["", "| side-stream tiled matmul 2048 | ms | speedup vs eager |", "|---|---|---|",
              f"| naive harness (default-stream events) | {s['naive_harness_ms']:.4f} | {s['naive_speedup_vs_eager']:.1f}x |",
              f"| KernelMosaic ({s['kernelmosaic_status']}) | {s['kernelmosaic_ms'] or float('nan'):.4f} | "
              f"{s['kernelmosaic_speedup_vs_eager'] or float('nan'):.2f}x |",
              f"| same kernel on the default stream | {s['same_kernel_default_stream_ms']:.4f} | "
              f"{eager_ms / s['same_kernel_default_stream_ms']:.2f}x |"]
    (out.parent / "bench.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
