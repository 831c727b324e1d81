"""Verifier throughput against KernelBench's method, cold caches, side by side in one run.

Usage:
  python scripts/bench/bench_throughput.py --device cuda [--count 32] [--profiles quick,full] [--out FILE.json]
  python scripts/bench/bench_throughput.py --device cpu --cases synthetic --distinct

Both harnesses judge the same candidates from empty build caches (and empty Triton and Inductor caches of their
own). `--cases corpus` (the default): distinct model-style candidates from the project's honest corpus, its hacks
and compile errors made from it (`corpus_cases.py`; every candidate its own extension source, as every model sample
is), judged under `kernelbench`. `--cases synthetic`: the project's small synthetic set (`throughput_cases.py`:
correct, slow, wrong, failing to compile), which shares extension sources between candidates unless `--distinct`.

The naive harness is KernelBench's method in its fastest local mode (`--naive-mode parallel`, the default): every
candidate built first, `--naive-jobs` at a time (default: the cores), each in a process and a build folder of its
own (as KernelBench's `build_compile_cache` does, `<build dir>/<run>/<problem>/<sample>`), then each candidate
evaluated in a fresh process of its own (import, the cached build loaded, 5 correctness trials with
`allclose(atol=rtol=1e-2)`, 100 timed calls), one after another on the one GPU. `--naive-mode serial` runs the older
one-process form (build, trials and timing per candidate in turn). Ours is `Verifier.verify_many` with the
default settings (compiles ahead of judgement, isolated workers, every check), once per timing profile of
`--profiles` (default `full`; `quick,full` runs both, each from a cold cache). `--variant NAME:KEY=VALUE,...` also runs ours with other verify settings (each cold, beside the
same naive run), so settings can be compared side by side. Before either runs, one process imports torch and
preprocesses `torch/extension.h` (`warm_os_cache`): the OS page cache is warm for both alike (build caches stay
cold), so neither harness's time depends on the order they run in. Reports candidates per minute for each, where
accept/reject disagree, each verdict's phase start times, and the longest build's steps (`compile.steps`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus_cases  # noqa: E402 - the sibling modules, put on the path above
import throughput_cases  # noqa: E402


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def naive_one(problem: Path, candidate: Path, device: str, k: int) -> dict:
    """KernelBench's method: import, construct both models with one seed, 5 trials, 100 timed calls."""
    import torch

    os.environ["TORCH_EXTENSIONS_DIR"] = str(Path(os.environ["KM_NAIVE_BUILD_ROOT"]) / f"sample_{k}")  # per sample
    try:
        new_cls = _load(candidate, f"naive_cand_{k}").ModelNew
    except Exception as exc:  # noqa: BLE001 - a candidate that fails to import or build is a compile failure
        return {"accepted": False, "status": "compile_error", "detail": str(exc)[:200]}
    ref_mod = _load(problem, f"naive_prob_{k}")
    try:
        torch.manual_seed(42)
        model = ref_mod.Model(*ref_mod.get_init_inputs()).to(device)
        torch.manual_seed(42)
        new = new_cls(*ref_mod.get_init_inputs()).to(device)
        with torch.no_grad():
            for trial in range(5):
                torch.manual_seed(1000 + trial)
                inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref_mod.get_inputs()]
                want, got = model(*inputs), new(*inputs)
                if got.shape != want.shape or not torch.allclose(got, want, atol=1e-2, rtol=1e-2):
                    return {"accepted": False, "status": "output_mismatch"}
            times = []
            for i in range(103):
                start = time.perf_counter()
                if device == "cuda":
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    new(*inputs)
                    e.record()
                    torch.cuda.synchronize()
                    ms = s.elapsed_time(e)
                else:
                    new(*inputs)
                    ms = (time.perf_counter() - start) * 1e3
                if i >= 3:
                    times.append(ms)
    except Exception as exc:  # noqa: BLE001 - KernelBench records a runtime error and moves on
        return {"accepted": False, "status": "runtime_error", "detail": str(exc)[:200]}
    return {"accepted": True, "status": "accepted", "mean_ms": sum(times) / len(times)}


def naive_main(manifest: Path, out: Path) -> None:
    rows = json.loads(manifest.read_text())
    results = {r["id"]: naive_one(Path(r["problem"]), Path(r["candidate"]), r["device"], r.get("k", k))
               for k, r in enumerate(rows)}
    out.write_text(json.dumps(results))


def naive_build(candidate: Path, k: int, build_root: Path) -> dict:
    """KernelBench's `build_compile_cache` for one sample: import the candidate in a process of its own, its
    `load_inline` building into the sample's own folder. Returns whether it built and the seconds it took."""
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(build_root / f"sample_{k}")}
    code = ("import importlib.util, sys\nspec = importlib.util.spec_from_file_location('cand', sys.argv[1])\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(candidate)], env=env, capture_output=True, text=True,
                          check=False)
    return {"built": done.returncode == 0, "seconds": round(time.perf_counter() - t0, 2),
            "detail": done.stderr[-200:] if done.returncode else ""}


def run_naive_parallel(cases: list, device: str, tmp: Path, jobs: int) -> tuple[float, dict]:
    """KernelBench's fastest local mode: build every candidate, `jobs` at a time, then evaluate each in a fresh
    process on its cached build (a candidate that did not build is a compile error and is not evaluated)."""
    from concurrent.futures import ThreadPoolExecutor

    root = tmp / "naive-extensions"
    env = {**os.environ, "KM_NAIVE_BUILD_ROOT": str(root), **_jit_caches(tmp / "naive-jit")}
    saved = dict(os.environ)
    os.environ.update(_jit_caches(tmp / "naive-jit"))
    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(jobs) as pool:  # each thread waits on its build's own process
            builds = list(pool.map(lambda c: naive_build(c[1][2], c[0], root), enumerate(cases)))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    build_s = time.perf_counter() - t0
    results = {}
    for k, ((ident, problem, candidate, _), build) in enumerate(zip(cases, builds, strict=True)):
        if not build["built"]:
            results[ident] = {"accepted": False, "status": "compile_error", "detail": build["detail"],
                              "build_s": build["seconds"]}
            continue
        manifest, out = tmp / f"naive_one_{k}.json", tmp / f"naive_one_{k}.out.json"
        manifest.write_text(json.dumps([{"id": ident, "problem": str(problem), "candidate": str(candidate),
                                         "device": device, "k": k}]))
        subprocess.run([sys.executable, __file__, "--naive-run", str(manifest), str(out)], check=True, env=env)
        results[ident] = {**json.loads(out.read_text())[ident], "build_s": build["seconds"]}
    print(f"naive (parallel builds, {jobs} at a time): builds {build_s:.0f} s, evaluation "
          f"{time.perf_counter() - t0 - build_s:.0f} s", flush=True)
    return time.perf_counter() - t0, results


def run_naive(cases: list, device: str, tmp: Path) -> tuple[float, dict]:
    manifest, out = tmp / "naive_manifest.json", tmp / "naive_results.json"
    manifest.write_text(json.dumps([{"id": i, "problem": str(p), "candidate": str(c), "device": device}
                                    for i, p, c, _ in cases]))
    env = {**os.environ, "KM_NAIVE_BUILD_ROOT": str(tmp / "naive-extensions"),  # cold, private, a folder per sample
           **_jit_caches(tmp / "naive-jit")}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--naive-run", str(manifest), str(out)], check=True, env=env)
    return time.perf_counter() - t0, json.loads(out.read_text())


def _jit_caches(root: Path) -> dict[str, str]:
    """Empty Triton and Inductor caches of a harness's own: neither run starts from kernels the other built."""
    return {"TRITON_CACHE_DIR": str(root / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor")}


def run_ours(cases: list, device: str, tmp: Path, profile: str, sets: list[str] = (), run: str = "",
             policy: str = "strict") -> tuple[float, dict]:
    """`sets`: `verify.<key>=<value>` settings of a variant (`--variant`), read as `--set` reads them; `run`: the
    run's label, which names its caches (default the profile)."""
    from kernelmosaic.config import read_config
    from kernelmosaic.verify import Verifier
    from kernelmosaic.verify.settings import verify_settings

    run = run or profile
    # a cold build cache of its own per run: each run pays every compile, as the naive harness does
    config = verify_settings(read_config(None, list(sets)), {"device": device, "policy": policy}).model_copy(
        update={"cache_dir": tmp / f"km-cache-{run}", "use_service": False, "timing_profile": profile})
    saved = dict(os.environ)
    os.environ.update(_jit_caches(tmp / f"km-jit-{run}"))  # the workers inherit it
    try:
        t0, wall0 = time.perf_counter(), time.time()
        with Verifier(config) as verifier:
            got = dict(verifier.verify_many([(p, c) for _, p, c, _ in cases]))
        seconds = time.perf_counter() - t0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return seconds, {cases[i][0]: {"accepted": v.accepted, "status": v.status.value, "seconds": v.seconds,
                                   "message": v.message[:2000],
                                   "findings": [f"{f.rule} ({f.severity}): {f.message[:300]}" for f in v.findings],
                                   "compile_s": v.compile.seconds, "compile_steps": v.compile.steps,
                                   "phases": _phases(v.phase_seconds),
                                   "started": {k: round(t - wall0, 2) for k, t in v.phase_started.items()}}
                     for i, v in got.items()}


def _phases(seconds: dict[str, float]) -> dict[str, float]:
    """The verdict's phases, plus its timing less the problem's `torch.compile` baseline (built or read once per
    problem, `baseline_run.py`): what timing costs a verdict once its problem is set up."""
    out = {k: round(x, 2) for k, x in seconds.items()}
    if "timing" in seconds:
        out["timing_less_baseline"] = round(seconds["timing"] - seconds.get("compile_baseline", 0.0), 2)
    return out


def _phase_medians(verdicts) -> dict[str, float]:
    """Median seconds of each phase over the verdicts that have it (compile, judge, timing, ...)."""
    names = sorted({k for v in verdicts for k in v["phases"]})
    return {k: round(statistics.median(v["phases"][k] for v in verdicts if k in v["phases"]), 2) for k in names}


def warm_os_cache(device: str, tmp: Path) -> float:
    """Read what both harnesses read from disk once before either runs, so neither pays for it and neither gets it
    from the other: a fresh machine's first torch import reads its libraries from disk (H200, 2026-12-03: our run's
    first 10 s had a dozen workers importing torch on an idle host), and the first build reads the torch headers
    and the compilers. Whichever harness ran first paid for both. Returns the seconds it took (counted for neither)."""
    import sysconfig

    from torch.utils.cpp_extension import include_paths

    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch, torch._dynamo, torch.profiler, torch.utils.cpp_extension\n"
                    "import importlib.util\nif importlib.util.find_spec('triton'): import triton"], check=True)
    unit = tmp / "warm_os_cache.cpp"
    unit.write_text("#include <torch/extension.h>\n")
    includes = [f"-I{p}" for p in [*include_paths("cuda" if device == "cuda" else "cpu"), sysconfig.get_paths()["include"]]]
    compilers = [["c++", "-std=c++17", "-E"]] + ([["nvcc", "-std=c++17", "-E", "-x", "cu"]] if device == "cuda" else [])
    for compiler in compilers:  # preprocessing reads every header; a failure only leaves the cache cold
        subprocess.run([*compiler, *includes, str(unit), "-o", os.devnull], capture_output=True, check=False)
    return time.perf_counter() - t0


def _print_timeline(run: str, got: dict) -> None:
    """Each verdict's phases as (start, end) seconds into the run, in the order they ended: which build or
    judgement the run's last seconds waited on."""
    def span(v, phase):
        start = v["started"].get(phase)
        return None if start is None else (start, round(start + v["phases"].get(phase, 0.0), 1))

    print(f"`{run}` timeline (s into the run: compile, judge, timing; status):")
    for ident, v in sorted(got.items(), key=lambda kv: max((e for _, e in filter(None, (
            span(kv[1], p) for p in ("compile", "judge", "timing")))), default=0.0)):
        parts = " ".join(f"{p} {s[0]}-{s[1]}" for p in ("compile", "judge", "timing") if (s := span(v, p)))
        print(f"  {ident}: {parts}; {v['status']}")
        if v["status"] not in ("accepted", "compile_error"):  # the reason, on screen: a step log may be all that returns
            print(f"    {v.get('message', '')[:400]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--count", type=int, default=32)
    parser.add_argument("--out", type=Path, default=Path("bench_throughput.json"))
    parser.add_argument("--cases", choices=["corpus", "synthetic"], default="corpus",
                        help="corpus: distinct model-style candidates (corpus_cases.py), judged under kernelbench; "
                             "synthetic: throughput_cases.py, judged under strict")
    parser.add_argument("--distinct", action="store_true",
                        help="synthetic cases: every candidate its own extension source (nothing is built twice)")
    parser.add_argument("--naive-mode", choices=["parallel", "serial"], default="parallel",
                        help="parallel: KernelBench's fastest local mode (builds first, N at a time, then one "
                             "process per evaluation); serial: build, check and time each candidate in one process")
    parser.add_argument("--naive-jobs", type=int, default=os.cpu_count() or 2,
                        help="builds in flight in the naive harness's parallel mode (default: the cores)")
    parser.add_argument("--profiles", default="full",
                        help="our timing profiles to run, comma-separated (quick,full): each judges every candidate "
                             "from a cold cache, side by side with the naive harness in the same run")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE]",
                        help="also judge every candidate with these verify settings (e.g. 'spare1:spare_workers=1'), "
                             "cold, in the same run; repeatable. Keys are VerifyConfig's, as `--set verify.KEY=VALUE`")
    parser.add_argument("--naive-run", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.naive_run:
        naive_main(*args.naive_run)
        return
    import torch

    profiles = [x.strip() for x in args.profiles.split(",") if x.strip()]
    if not profiles or any(x not in ("quick", "full") for x in profiles):
        parser.error(f"--profiles: expected quick and/or full, got {args.profiles!r}")
    variants = [("", [])]
    for spec in args.variant:
        name, _, pairs = spec.partition(":")
        if not name or not pairs or any("=" not in p for p in pairs.split(",")):
            parser.error(f"--variant {spec!r}: expected NAME:KEY=VALUE[,KEY=VALUE]")
        variants.append((name, [f"verify.{p.strip()}" for p in pairs.split(",")]))
    with tempfile.TemporaryDirectory(prefix="km-bench-throughput-") as tmp:
        if args.cases == "corpus":
            cases = corpus_cases.write_corpus_cases(Path(tmp) / "cases", args.count, args.device)
            expected, policy = corpus_cases.EXPECTED, "kernelbench"
        else:
            cases = throughput_cases.write_cases(Path(tmp) / "cases", args.device, args.count, args.distinct)
            expected, policy = throughput_cases.EXPECTED, "strict"
        warm_s = warm_os_cache(args.device, Path(tmp))
        print(f"OS page cache warmed for both harnesses (torch's libraries and headers): {warm_s:.1f} s", flush=True)
        ours = {}
        for profile in profiles:  # ours first: a run cut short still says where our time went
            for name, sets in variants:
                run = f"{profile}-{name}" if name else profile
                ours[run] = run_ours(cases, args.device, Path(tmp), profile, sets, run, policy)
                print(f"ours, `{run}`: {ours[run][0]:.0f} s; phase medians (s): "
                      f"{_phase_medians(ours[run][1].values())}", flush=True)
                # written at once: the naive harness takes ~9 minutes, and a device call cut before it ends
                # still brings back when each of our candidates compiled and was judged
                partial = args.out.with_name(f"{args.out.stem}.{run}.json")
                partial.write_text(json.dumps({"seconds": round(ours[run][0], 1), "verdicts": ours[run][1]}, indent=1))
                _print_timeline(run, ours[run][1])
        naive_s, naive = (run_naive_parallel(cases, args.device, Path(tmp), args.naive_jobs)
                          if args.naive_mode == "parallel" else run_naive(cases, args.device, Path(tmp)))
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else (platform.processor() or platform.machine())
    result = {"date": date.today().isoformat(), "device": args.device, "device_name": device_name,
              "cores": os.cpu_count(), "torch": torch.__version__, "candidates": len(cases),
              "cases": args.cases, "policy": policy, "naive_mode": args.naive_mode,
              "naive_jobs": args.naive_jobs, "distinct_sources": args.cases == "corpus" or args.distinct, "os_cache_warm_s": round(warm_s, 1), "naive_seconds": round(naive_s, 1),
              "naive_per_min": round(60 * len(cases) / naive_s, 2), "ours": {}}
    print("| harness | seconds | candidates/min | vs naive |\n|---|---|---|---|\n"
          f"| KernelBench's method ({args.naive_mode}) | {naive_s:.0f} | {result['naive_per_min']} | 1.00x |")
    for run, (ours_s, got) in ours.items():
        rows = [{"id": i, "kind": kind, "naive": naive[i]["status"], "ours": got[i]["status"],
                 "agree": naive[i]["accepted"] == got[i]["accepted"], "seconds": got[i]["seconds"],
                 "ours_as_expected": got[i]["accepted"] == expected[kind], "phases": got[i]["phases"],
                 "started": got[i]["started"], "compile_s": got[i]["compile_s"],
                 "compile_steps": got[i]["compile_steps"]}
                for i, _, _, kind in cases]
        result["ours"][run] = {"seconds": round(ours_s, 1), "phase_medians": _phase_medians(got.values()),
                               "per_min": round(60 * len(cases) / ours_s, 2),
                               "vs_naive": round(naive_s / ours_s, 2), "agreement": sum(r["agree"] for r in rows),
                               "as_expected": sum(r["ours_as_expected"] for r in rows), "rows": rows}
        print(f"| KernelMosaic verify_many, `{run}` timing | {ours_s:.0f} | {result['ours'][run]['per_min']} | "
              f"{naive_s / ours_s:.2f}x |")
    for run, summary in result["ours"].items():
        built = [r for r in summary["rows"] if r["compile_steps"]]
        if built:  # the critical path of a cold batch is usually its longest build: where that build's time went
            longest = max(built, key=lambda r: r["phases"].get("compile", 0.0))
            print(f"`{run}`: longest build {longest['id']} (compile stage {longest['phases'].get('compile')} s, "
                  f"started {longest['started'].get('compile')} s in; load_inline calls {longest['compile_s']} s): "
                  f"{longest['compile_steps']}")
        print(f"`{run}`: accept/reject agreement with naive {summary['agreement']}/{len(cases)}; as expected "
              f"{summary['as_expected']}/{len(cases)}")
        for r in summary["rows"]:
            if not r["ours_as_expected"]:
                print(f"  unexpected: {r['id']} ({r['kind']}): ours {r['ours']}, expected "
                      f"{'accept' if expected[r['kind']] else 'reject'}")
            if not r["agree"]:
                print(f"  disagree: {r['id']} ({r['kind']}): naive {r['naive']}, ours {r['ours']}")
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
