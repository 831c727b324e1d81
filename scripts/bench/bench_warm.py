#!/usr/bin/env python3
"""The warm CLI path (issue 15, item 6): `kernelmosaic verify` of a built candidate while `verify-serve` runs.

Starts the service on a private build cache, judges one correct `load_inline` candidate of `throughput_cases.py` once
(the cold verdict: build, reference set-up, baselines), then times repeated CLI invocations against the same service,
each a fresh `python -m kernelmosaic.cli verify ... --json` process as a user's shell would start it, for each mode
(the `quick` timing profile, `--no-timing`, the `full` profile), then as an agent's iterations (`iteration`: a new
candidate for the same problem each time, its extension built anew). Reports wall seconds per invocation (median, min, max),
the service's own seconds (the verdict's `seconds`) and the client's share (the rest). Writes --out (JSON) and prints
a table.

    python scripts/bench/bench_warm.py --device cuda --repeats 6 --out out/warm.json
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

from kernelmosaic.paths import socket_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput_cases import write_cases  # noqa: E402 - the sibling module, put on the path above

MODES = {"quick": ["--set", "verify.timing_profile=quick"], "quick-paced": ["--set", "verify.timing_profile=quick"],
         "no-timing": ["--no-timing"], "full": ["--set", "verify.timing_profile=full"],
         "iteration": ["--set", "verify.timing_profile=quick"]}
"""In the order they run: `quick` first (the built candidate judged again), `full` after the other repeats of the
built candidate, `iteration` last: every request a new candidate for the problem already set up (its source changed,
so its extension is built anew), as an agent's next attempt is. Each mode sends its requests back to back, as a
batch script would, except `quick-paced` and `iteration`, which wait `--pause` seconds after each answer, as a user
at a shell or an agent waiting on its model does: the service then has the idle time it uses to bring the next
candidate worker up (`Verifier.ready_spares`); back to back, a request can find the spares still loading torch."""

PACED = ("quick-paced", "iteration")


def iteration(candidate: Path, k: int) -> Path:
    """Attempt `k` of an agent at the same problem: the candidate with one more line in its extension source (a new
    build, the rest as it was), written beside it."""
    text = candidate.read_text()
    anchor = "#include <torch/extension.h>\n"
    if anchor not in text:
        raise SystemExit(f"{candidate}: no `{anchor.strip()}` line to change for an iteration")
    out = candidate.with_name(f"{candidate.stem}_iteration{k}.py")
    out.write_text(text.replace(anchor, anchor + f"static const int km_iteration_{k} = {k};  // attempt {k}\n", 1))
    return out


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kernelmosaic", *args]  # the `kernelmosaic` command (launch.py)


def _verify(env: dict, problem: Path, candidate: Path, device: str, extra: list[str]) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run(_cli("verify", str(problem), str(candidate), "--device", device, "--json", *extra),
                          env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: a verdict that rejects; anything else is a failure of the run itself
        raise SystemExit(f"verify exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, json.loads(done.stdout)


def _client_parts(env: dict, repeats: int = 5) -> dict:
    """Medians of what a client process costs before it talks to the service, on this machine: starting the
    interpreter; starting it and importing the entry point (`launch.py`: all a handed-over `verify --json` imports);
    starting it and importing the full CLI's `verify` (what a verify that is not handed over pays before parsing,
    settings, the exchange and printing)."""
    def median_s(code: str) -> float:
        walls = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
            walls.append(time.perf_counter() - t0)
        return round(statistics.median(walls), 3)
    return {"interpreter": median_s("pass"), "interpreter_and_entry_point": median_s("import kernelmosaic.launch"),
            "interpreter_and_imports": median_s("import kernelmosaic.cli, kernelmosaic.verify.cli, "
                                                "kernelmosaic.verify.service")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--out", type=Path, default=Path("out/warm.json"))
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated, in the order given (default: all, {','.join(MODES)})")
    parser.add_argument("--pause", type=float, default=5.0,
                        help="seconds between the answer and the next request in the `quick-paced` mode")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if unknown := [m for m in modes if m not in MODES]:
        parser.error(f"--modes: unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}")
    with tempfile.TemporaryDirectory(prefix="km-bench-warm-") as tmp:
        cases = [c for c in write_cases(Path(tmp) / "cases", args.device, 8) if c[3] == "correct" and
                 "load_inline" in c[2].read_text()]
        _, problem, candidate, _ = cases[0]
        env = {**os.environ, "KERNELMOSAIC_CACHE": str(Path(tmp) / "cache" / "build"), "PYTHONUNBUFFERED": "1"}
        service = subprocess.Popen(_cli("verify-serve", "--device", args.device), env=env,
                                   stdout=subprocess.DEVNULL, stderr=open(Path(tmp) / "service.log", "w"))  # noqa: SIM115
        try:
            sock = socket_path(Path(env["KERNELMOSAIC_CACHE"]))
            for _ in range(600):
                if sock.exists():
                    break
                time.sleep(0.1)
            else:
                raise SystemExit("the verifier service did not open its socket in 60 s")
            result_client = _client_parts(env)
            cold_wall, cold = _verify(env, problem, candidate, args.device, MODES["quick"])
            print(f"cold (build, set-up, baselines): {cold_wall:.1f} s wall, status {cold['status']}", flush=True)
            result = {"date": date.today().isoformat(), "device": args.device, "repeats": args.repeats,
                      "pause_s": args.pause,
                      "cold_wall_s": round(cold_wall, 2), "cold_status": cold["status"], "client_parts_s": result_client,
                      "modes": {}}
            for mode in modes:
                extra = MODES[mode]
                rows = []
                for k in range(args.repeats + 1):  # the first request of a mode is a warm-up, not counted
                    subject = iteration(candidate, k) if mode == "iteration" else candidate
                    rows.append(_verify(env, problem, subject, args.device, extra))
                    if mode in PACED:
                        time.sleep(args.pause)
                rows = rows[1:]
                walls = [w for w, _ in rows]
                service_s = [v["seconds"] for _, v in rows]
                client = [w - s for w, s in zip(walls, service_s, strict=True)]
                result["modes"][mode] = {
                    "requests": [{"wall_s": round(w, 3), "service_s": v["seconds"],
                                  "compile_s": (v.get("compile") or {}).get("seconds"),
                                  "compile_cache_hit": (v.get("compile") or {}).get("cache_hit"),
                                  "worker_start_s": v["phase_seconds"].get("worker_start"),
                                  "prestarted": (v.get("workers") or {}).get("candidate_prestarted"),
                                  "ready_ahead": (v.get("workers") or {}).get("candidate_ready_ahead")}
                                 for w, v in rows],
                    "status": sorted({v["status"] for _, v in rows}),
                    "wall_median_s": round(statistics.median(walls), 3), "wall_min_s": round(min(walls), 3),
                    "wall_max_s": round(max(walls), 3), "service_median_s": round(statistics.median(service_s), 3),
                    "client_median_s": round(statistics.median(client), 3),
                    "phases_median_s": {k: round(statistics.median(v["phase_seconds"].get(k, 0.0) for _, v in rows), 3)
                                        for k in rows[0][1]["phase_seconds"]}}
                print(f"{mode}: {result['modes'][mode]}", flush=True)
        finally:
            service.terminate()
            service.wait(timeout=60)
            log = (Path(tmp) / "service.log").read_text()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"client process parts (medians): {result['client_parts_s']}")
    print("| mode | wall median s | min | max | service s | client s |\n|---|---|---|---|---|---|")
    for mode, m in result["modes"].items():
        print(f"| {mode} | {m['wall_median_s']} | {m['wall_min_s']} | {m['wall_max_s']} | {m['service_median_s']} | "
              f"{m['client_median_s']} |")
    if "Traceback" in log:
        print("service log:\n" + log[-3000:])


if __name__ == "__main__":
    main()
