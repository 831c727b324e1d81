"""Distinct model-style CUDA `load_inline` builds, side by side: each unit compiled as two (device code without
torch's headers, host code lean: `kmworker/unit_split.py`), against the torch declarations it names (the lean unit,
`kmworker/lean_unit.py`), and as written.

Usage: python scripts/bench/bench_cuda_units.py [--jobs 16] [--limit N] [--modes units,lean,as_written]
                                                [--out bench_cuda_units.json]

The builds are the honest-kernel corpus's CUDA extensions (tests/corpus/cuda and hacks: distinct sources written the
way models write them), each built by `torch.utils.cpp_extension.load_inline` in its own process and a fresh build
directory, with the verifier's nvcc (`nvcc_split`, front ends side by side) and `--jobs` builds in flight. The two
modes run one after the other in this call, on the same units. For each build: wall seconds, ninja's per-output
times (`main.o` the binding unit, `cuda.cuda.o` the CUDA unit), which form was built (`built_as`: units, lean or
as_written; a later form is built after the earlier failed), and the extension's exported functions (the same in both modes, or the row says
not). Needs a GPU machine's torch (CUDA headers); writes one JSON object and prints a table.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from kernelmosaic.verify.sandbox.kmworker import build_steps, lean_unit, nvcc_split, unit_split  # noqa: E402

_CAPTURE = r"""
import json, runpy, sys
import torch.utils.cpp_extension as ext
found = []
class Stop(Exception):
    pass
def grab(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, extra_cuda_cflags=None, **kw):
    found.append({"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources, "functions": functions,
                  "extra_cflags": extra_cflags, "extra_cuda_cflags": extra_cuda_cflags,
                  "with_cuda": kw.get("with_cuda")})
    raise Stop
ext.load_inline = grab
try:
    runpy.run_path(sys.argv[1], run_name="km_bench_capture")
except BaseException:
    pass
print(json.dumps(found))
"""

_BUILD = r"""
import json, sys, time
import torch.utils.cpp_extension as ext
spec = json.loads(sys.stdin.read())
t0 = time.perf_counter()
try:
    module = ext.load_inline(spec["name"], spec["cpp_sources"], cuda_sources=spec["cuda_sources"],
                             functions=spec["functions"], extra_cflags=spec["extra_cflags"],
                             extra_cuda_cflags=spec["extra_cuda_cflags"], build_directory=spec["dir"],
                             with_cuda=spec["with_cuda"])
    names = sorted(n for n in dir(module) if not n.startswith("_"))
    ok = True
except Exception as exc:
    names, ok = [str(exc)[-300:]], False
print(json.dumps({"ok": ok, "seconds": time.perf_counter() - t0, "functions": names}))
"""


def units(limit: int | None) -> list[dict]:
    """Every distinct CUDA extension of the corpus (by name), its `load_inline` arguments as the case passes them."""
    seen: dict[str, dict] = {}
    files = sorted((ROOT / "tests" / "corpus" / "cuda").glob("*.py")) + sorted((ROOT / "tests" / "corpus" /
                                                                                "hacks").glob("*.py"))
    for path in files:
        out = subprocess.run([sys.executable, "-c", _CAPTURE, str(path)], capture_output=True, text=True,
                             cwd=path.parent, timeout=120)
        for spec in json.loads(out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "[]"):
            if spec["cuda_sources"] and spec["name"] not in seen:
                seen[spec["name"]] = {**spec, "case": path.stem}
    found = list(seen.values())
    return found[:limit] if limit else found


MODES = {"units": ("1", "1"), "lean": ("0", "1"), "as_written": ("0", "0")}
"""Mode: (unit_split switch, lean_unit switch)."""


def build(spec: dict, root: Path, mode: str) -> dict:
    folder = root / mode / spec["name"]
    folder.mkdir(parents=True)
    from torch.utils.cpp_extension import _join_cuda_home

    units, lean = MODES[mode]
    env = {**os.environ, "PYTORCH_NVCC": f"{sys.executable} -I {nvcc_split.__file__}",
           nvcc_split.REAL_NVCC: _join_cuda_home("bin", "nvcc"), unit_split.SWITCH: units, lean_unit.SWITCH: lean}
    cflags = [*(spec["extra_cuda_cflags"] or []), *build_steps.nvcc_time_flags(folder)]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _BUILD], input=json.dumps({**spec, "dir": str(folder),
                                                                            "extra_cuda_cflags": cflags}),
                          capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - start
    try:
        row = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        row = {"ok": False, "functions": [done.stderr[-300:]]}
    steps = build_steps.steps(folder)
    tried = {"units": any(k.startswith("nvcc:units ") for k in steps),
             "lean": any(k.startswith("nvcc:lean ") for k in steps),
             "as_written": any(k.startswith("nvcc:") and not k.startswith(("nvcc:lean ", "nvcc:units ")) for k in steps)}
    built_as = "as_written" if tried["as_written"] else "lean" if tried["lean"] else "units" if tried["units"] else "?"
    why = {}
    for form, suffix in (("units", ".km-units.log"), ("lean", ".km-lean.log")):
        log = folder / ("cuda" + suffix)
        if log.is_file():
            why[form] = next((ln for ln in log.read_text(errors="replace").splitlines() if "error" in ln),
                             log.read_text(errors="replace")[:200])
    return {"name": spec["name"], "case": spec["case"], "mode": mode, "wall_s": round(wall, 2), **row,
            "built_as": built_as, "why_not": why, "main_o_s": steps.get("main.o"), "cuda_o_s": steps.get("cuda.cuda.o"),
            "steps": steps}


def run_mode(specs: list[dict], root: Path, mode: str, jobs: int) -> tuple[list[dict], float]:
    start = time.perf_counter()
    with cf.ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(lambda s: build(s, root, mode), specs))
    return rows, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=16, help="builds in flight")
    parser.add_argument("--limit", type=int, default=None, help="the first N units only")
    parser.add_argument("--modes", default="units,lean,as_written", help="forms to build, one after another")
    parser.add_argument("--out", type=Path, default=Path("bench_cuda_units.json"))
    args = parser.parse_args()
    import torch

    specs = units(args.limit)
    result: dict = {"date": date.today().isoformat(), "host": platform.node(), "cores": os.cpu_count(),
                    "torch": torch.__version__, "jobs": args.jobs, "units": len(specs), "modes": {}}
    modes = [m for m in args.modes.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="km-bench-cu-") as tmp:
        for mode in modes:
            rows, total = run_mode(specs, Path(tmp), mode, args.jobs)
            walls = [r["wall_s"] for r in rows if r["ok"]]
            cuda = [r["cuda_o_s"] for r in rows if r["ok"] and r["cuda_o_s"] is not None]
            main_o = [r["main_o_s"] for r in rows if r["ok"] and r["main_o_s"] is not None]
            forms = {f: sum(r["built_as"] == f for r in rows) for f in MODES}
            result["modes"][mode] = {
                "total_s": round(total, 1), "built": len(walls), "failed": len(rows) - len(walls),
                "median_wall_s": round(statistics.median(walls), 2) if walls else None,
                "median_cuda_unit_s": round(statistics.median(cuda), 2) if cuda else None,
                "median_main_o_s": round(statistics.median(main_o), 2) if main_o else None,
                "built_as": forms, "rows": rows}
            print(f"{mode:>10}: {len(walls)}/{len(rows)} built in {total:.1f} s; median build "
                  f"{result['modes'][mode]['median_wall_s']} s, CUDA unit {result['modes'][mode]['median_cuda_unit_s']}"
                  f" s, main.o {result['modes'][mode]['median_main_o_s']} s; built as {forms}", flush=True)
    first = result["modes"][modes[0]]["rows"] if modes else []
    differ = sorted({r["name"] for m in modes[1:] for r, f in zip(result["modes"][m]["rows"], first, strict=True)
                     if r["ok"] != f["ok"] or r["ok"] and r["functions"] != f["functions"]})
    result["differ"] = differ
    print(f"units whose outcome or exported functions differ between the modes: {differ or 'none'}")
    for m in modes:
        for r in result["modes"][m]["rows"]:
            if r["why_not"]:
                print(f"  {m}: {r['name']} ({r['case']}) built as {r['built_as']}: {r['why_not']}")
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
