#!/usr/bin/env python3
"""verify-batch on the GPU(s) through the local pool and through the Ray executor: the same candidates, candidates
per minute of each, agreement of their statuses, and the verdicts per GPU (one candidate makes an illegal memory
access: its GPU's judge is replaced, and the other verdicts must not change). Writes $OUT/gpu-ray.json and .md."""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # throughput_cases
from throughput_cases import _candidate, write_cases  # noqa: E402

from kernelmosaic.contracts.verdict import Verdict  # noqa: E402

ILLEGAL = "if (i < n) { po[i + (1LL << 40)] = 0.f; "


def _cases(root: Path, count: int) -> Path:
    rows = [{"id": cid, "problem": str(p.relative_to(root)), "candidate": str(c.relative_to(root))}
            for cid, p, c, _ in write_cases(root, "cuda", count)]
    bad = _candidate("add_relu", "cuda", "correct", 999).replace("if (i < n) { ", ILLEGAL, 1)
    bad = bad.replace("km_bench_add_relu_cuda", "km_ray_check_illegal_access")
    (root / "add_relu" / "candidate_illegal_access.py").write_text(bad)
    rows.append({"id": "add_relu/candidate_illegal_access", "problem": "add_relu/problem.py",
                 "candidate": "add_relu/candidate_illegal_access.py"})
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def _run(manifest: Path, out: Path, executor: str, log: Path, profile: str, env: dict[str, str] | None = None) -> dict:
    cmd = [sys.executable, "-m", "kernelmosaic.cli", "verify-batch", str(manifest), "--out", str(out), "--device",
           "cuda", "--executor", executor, "--set", "verify.use_service=false", "--set", "verify.seed=1234",
           "--set", f"verify.timing_profile={profile}"]
    started = time.perf_counter()
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}).returncode
    wall = time.perf_counter() - started
    rows = [(r["id"], Verdict.model_validate(r["verdict"]))
            for r in map(json.loads, out.read_text().splitlines())] if out.exists() else []
    return {"executor": executor, "rc": rc, "wall_s": round(wall, 1), "verdicts": len(rows),
            "per_min": round(60 * len(rows) / wall, 2) if wall else 0.0,
            "statuses": {pid: v.status.value for pid, v in rows}, "rows": rows}


def _per_gpu(rows: list[tuple[str, Verdict]]) -> dict[str, dict[str, int]]:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for _, v in rows:
        gpu = v.env.gpu_uuid or "no device (decided before judging)"
        served = v.workers.served_by if v.workers is not None else "in-process"
        counts[f"{gpu} {v.env.gpu_name} [{served}]".strip()][v.status.value] += 1
    return {k: dict(v) for k, v in sorted(counts.items())}


def _visible_gpus() -> list[str]:
    """The GPUs this machine shows (their indices as CUDA_VISIBLE_DEVICES takes them), from nvidia-smi."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    indices = [line.strip() for line in out.splitlines() if line.strip()]
    return [i for i in indices if visible is None or i in visible.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help="Timing profile of every pass (quick: the executors are compared, not the kernels; the H200 "
                             "run of 2026-12-01 spent 16-20 s judging each accepted candidate under full).")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = _cases(args.out / "cases", args.count)
    # The first pass fills the build cache; the two timed passes then judge the same candidates on a warm cache.
    cold = _run(manifest, args.out / "cold-local.jsonl", "local", args.out / "cold-local.log", args.profile)
    local = _run(manifest, args.out / "local.jsonl", "local", args.out / "local.log", args.profile)
    ray = _run(manifest, args.out / "ray.jsonl", "ray", args.out / "ray.log", args.profile)
    gpus = _visible_gpus()
    # With several GPUs, the local pool once more on the first GPU alone: the speedup over one GPU and the same
    # accept/reject (issue 18).
    one = _run(manifest, args.out / "one-gpu.jsonl", "local", args.out / "one-gpu.log", args.profile,
               {"CUDA_VISIBLE_DEVICES": gpus[0]}) if len(gpus) > 1 else None
    differ = {k: (v, ray["statuses"].get(k)) for k, v in local["statuses"].items() if ray["statuses"].get(k) != v}
    report = {"candidates": args.count + 1, "cold_local": {k: v for k, v in cold.items() if k not in ("rows", "statuses")},
              "local": {k: v for k, v in local.items() if k not in ("rows", "statuses")},
              "ray": {k: v for k, v in ray.items() if k not in ("rows", "statuses")}, "status_differences": differ,
              "illegal_access": {"local": local["statuses"].get("add_relu/candidate_illegal_access"),
                                 "ray": ray["statuses"].get("add_relu/candidate_illegal_access")},
              "per_gpu_local": _per_gpu(local["rows"]), "per_gpu_ray": _per_gpu(ray["rows"]), "gpus": gpus}
    if one is not None:
        report["one_gpu"] = {k: v for k, v in one.items() if k not in ("rows", "statuses")}
        report["one_gpu_differences"] = {k: (v, one["statuses"].get(k)) for k, v in local["statuses"].items()
                                         if one["statuses"].get(k) != v}
        report["speedup_over_one_gpu"] = round(one["wall_s"] / local["wall_s"], 2) if local["wall_s"] else None
    (args.out / "gpu-ray.json").write_text(json.dumps(report, indent=2))
    lines = [f"# gpu-ray-check: verify-batch, {args.count + 1} CUDA candidates (warm build cache for the timed passes), "
             f"timing profile `{args.profile}`",
             "", "| pass | exit | verdicts | wall s | candidates/min |", "|---|---|---|---|---|"]
    passes = [("cold local (fills the cache)", cold), ("local pool", local), ("ray executor", ray)]
    passes += [("local pool, first GPU only", one)] if one is not None else []
    for name, r in passes:
        lines.append(f"| {name} | {r['rc']} | {r['verdicts']} | {r['wall_s']} | {r['per_min']} |")
    lines += ["", f"status differences local vs ray: {differ or 'none'}",
              f"illegal-memory-access candidate: {report['illegal_access']}"]
    if one is not None:
        lines += [f"{len(gpus)} GPUs against the first alone (local pool): {report['speedup_over_one_gpu']}x; "
                  f"status differences: {report['one_gpu_differences'] or 'none'}"]
    lines += ["", "verdicts per GPU (ray):"]
    lines += [f"- {gpu}: {counts}" for gpu, counts in report["per_gpu_ray"].items()]
    lines += ["", "verdicts per GPU (local):"] + [f"- {gpu}: {c}" for gpu, c in report["per_gpu_local"].items()]
    (args.out / "gpu-ray.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    same_on_one = one is None or not report["one_gpu_differences"]
    sys.exit(0 if local["rc"] in (0, 1) and ray["rc"] in (0, 1) and not differ and same_on_one else 1)


if __name__ == "__main__":
    main()
