"""The two translation units of every distinct CUDA extension in the honest corpus, compiled in each form the verifier
knows, side by side: no torch extension is built or loaded, so it runs wherever nvcc and torch's headers are (a CPU
machine too, given the CUDA library headers torch's CUDA headers include).

- the CUDA unit (`cuda.cu` as `load_inline` writes it) through the verifier's nvcc (`kmworker/nvcc_split.py`) with
  torch's own nvcc flags and the case's: `units` (as two, `kmworker/unit_split.py`), `lean` (`kmworker/lean_unit.py`)
  and `as_written`;
- the binding unit (`main.cpp`: `#include <torch/extension.h>`, the C++ sources, the pybind11 module) through the
  verifier's C++ compiler (`kmworker/cxx_lean.py`): `lean` and `as_written`, neither with a precompiled header.

Each mode compiles every unit with `--jobs` in flight, the modes one after another in this call. For each compile:
wall seconds, the form that was built (a later form is built after an earlier one failed) and its exit status.

Usage: python scripts/bench/bench_unit_forms.py [--jobs 2] [--limit N] [--arch 90] [--out bench_unit_forms.json]
Environment: KM_BENCH_INCLUDES, extra include folders (`:`-separated) for a host whose toolkit lacks the headers of
cuBLAS, cuSPARSE and cuSOLVER that `ATen/cuda/CUDAContext.h` includes (a CPU machine: the pip `nvidia-*` wheels').
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cuda_units import units  # noqa: E402

from kernelmosaic.verify.sandbox.kmworker import build_steps, cxx_lean, lean_unit, nvcc_split, unit_split  # noqa: E402

HEAD = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline puts first
CUDA_MODES = {"units": ("1", "1"), "lean": ("0", "1"), "as_written": ("0", "0")}
"""Mode: (unit_split switch, lean_unit switch)."""
BINDING_MODES = {"lean": "1", "as_written": "0"}


def _includes() -> list[str]:
    from torch.utils.cpp_extension import include_paths

    folders = [*include_paths(), sysconfig.get_paths()["include"]]
    folders += [f for f in os.environ.get("KM_BENCH_INCLUDES", "").split(":") if f]
    return [w for f in folders for w in ("-isystem", f)]


def _nvcc_flags(arch: str, extra: list[str]) -> list[str]:
    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS

    return [*_includes(), "-DTORCH_EXTENSION_NAME=km_bench", "-DTORCH_API_INCLUDE_EXTENSION_H", *COMMON_NVCC_FLAGS,
            f"-gencode=arch=compute_{arch},code=sm_{arch}", "--compiler-options", "-fPIC", "-std=c++17", *extra]


def _binding(spec: dict) -> str:
    cpp = spec["cpp_sources"]
    text = "\n".join([cpp] if isinstance(cpp, str) else cpp)
    defs = "".join(f'm.def("{f}", torch::wrap_pybind_function({f}), "{f}");\n' for f in spec["functions"] or [])
    return f"#include <torch/extension.h>\n{text}\n\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n{defs}}}\n"


def cuda_unit(spec: dict, root: Path, mode: str, arch: str, nvcc: str) -> dict:
    folder = root / "cuda" / mode / spec["name"]
    folder.mkdir(parents=True)
    sources = spec["cuda_sources"]
    (folder / "cuda.cu").write_text(HEAD + "\n".join([sources] if isinstance(sources, str) else sources))
    split, lean = CUDA_MODES[mode]
    env = {**os.environ, nvcc_split.REAL_NVCC: nvcc, unit_split.SWITCH: split, lean_unit.SWITCH: lean}
    args = ["-c", str(folder / "cuda.cu"), "-o", str(folder / "cuda.cuda.o"),
            *_nvcc_flags(arch, list(spec["extra_cuda_cflags"] or [])), *build_steps.nvcc_time_flags(folder)]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", nvcc_split.__file__, *args], cwd=folder, capture_output=True,
                          text=True, env=env, timeout=900)
    wall = time.perf_counter() - start
    steps = build_steps.steps(folder)
    form = "units" if any(k.startswith("nvcc:units ") for k in steps) else "?"
    if any(k.startswith("nvcc:lean ") for k in steps):
        form = "lean"
    if any(k.startswith("nvcc:") and not k.startswith(("nvcc:lean ", "nvcc:units ")) for k in steps):
        form = "as_written"
    if done.returncode == 0 and form == "units" and any(k.startswith("nvcc:units host full") for k in steps):
        form = "units (host as written)"
    return {"name": spec["name"], "mode": mode, "wall_s": round(wall, 2), "ok": done.returncode == 0,
            "built_as": form, "error": done.stderr[-300:] if done.returncode else ""}


def binding_unit(spec: dict, root: Path, mode: str, cxx: str) -> dict:
    folder = root / "binding" / mode / spec["name"]
    folder.mkdir(parents=True)
    (folder / "main.cpp").write_text(_binding(spec))
    env = {**os.environ, cxx_lean.REAL_CXX: cxx, cxx_lean.SWITCH: BINDING_MODES[mode], "KM_CXX_PYTHON": sys.executable}
    args = ["-DTORCH_EXTENSION_NAME=km_bench", "-DTORCH_API_INCLUDE_EXTENSION_H", *_includes(), "-fPIC",
            "-std=c++17", *(spec["extra_cflags"] or []), "-c", str(folder / "main.cpp"), "-o", str(folder / "main.o")]
    start = time.perf_counter()
    done = subprocess.run([str(cxx_lean.WRAPPER), *args], cwd=folder, capture_output=True, text=True, env=env,
                          timeout=900)
    wall = time.perf_counter() - start
    tried = (folder / ("main" + cxx_lean.LEAN_SUFFIX)).is_file()
    fell = (folder / "main.km-lean.log").is_file()
    return {"name": spec["name"], "mode": mode, "wall_s": round(wall, 2), "ok": done.returncode == 0,
            "built_as": "lean" if tried and not fell else "as_written", "error": done.stderr[-300:] if done.returncode else ""}


def summary(rows: list[dict], total: float) -> dict:
    ok = [r["wall_s"] for r in rows if r["ok"]]
    forms: dict[str, int] = {}
    for r in rows:
        forms[r["built_as"]] = forms.get(r["built_as"], 0) + 1
    return {"total_s": round(total, 1), "built": len(ok), "failed": len(rows) - len(ok),
            "median_s": round(statistics.median(ok), 2) if ok else None, "built_as": forms, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="compiles in flight")
    parser.add_argument("--limit", type=int, default=None, help="the first N extensions only")
    parser.add_argument("--arch", default="90", help="the SM architecture compiled for (90: Hopper)")
    parser.add_argument("--out", type=Path, default=Path("bench_unit_forms.json"))
    args = parser.parse_args()
    import torch

    nvcc = shutil.which("nvcc") or "nvcc"
    cxx = os.environ.get("CXX", "c++")
    specs = units(args.limit)
    result: dict = {"date": date.today().isoformat(), "host": platform.node(), "cores": os.cpu_count(),
                    "torch": torch.__version__, "jobs": args.jobs, "extensions": len(specs), "cuda": {}, "binding": {}}
    with tempfile.TemporaryDirectory(prefix="km-bench-forms-") as tmp:
        for mode in CUDA_MODES:
            start = time.perf_counter()
            with cf.ThreadPoolExecutor(args.jobs) as pool:
                rows = list(pool.map(lambda s, m=mode: cuda_unit(s, Path(tmp), m, args.arch, nvcc), specs))
            result["cuda"][mode] = summary(rows, time.perf_counter() - start)
            s = result["cuda"][mode]
            print(f"CUDA unit {mode:>10}: {s['built']}/{len(rows)} in {s['total_s']} s, median {s['median_s']} s, "
                  f"built as {s['built_as']}", flush=True)
        for mode in BINDING_MODES:
            start = time.perf_counter()
            with cf.ThreadPoolExecutor(args.jobs) as pool:
                rows = list(pool.map(lambda s, m=mode: binding_unit(s, Path(tmp), m, cxx), specs))
            result["binding"][mode] = summary(rows, time.perf_counter() - start)
            s = result["binding"][mode]
            print(f"binding   {mode:>10}: {s['built']}/{len(rows)} in {s['total_s']} s, median {s['median_s']} s, "
                  f"built as {s['built_as']}", flush=True)
    for kind in ("cuda", "binding"):
        for mode, s in result[kind].items():
            for r in s["rows"]:
                if not r["ok"]:
                    print(f"  FAILED {kind} {mode} {r['name']}: {r['error'][-200:]}")
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
