#!/usr/bin/env python3
"""Build every CUDA extension the GPU tests and the verifier benchmark use, in parallel, into the shared cache
($KERNELMOSAIC_CACHE), so that scripts/gpu/gpu-check spends its minutes judging rather than compiling one by one.

    KERNELMOSAIC_CACHE=DIR python3 scripts/gpu/prebuild_gpu_fixtures.py   # run by scripts/gpu/gpu-check
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "agent"))
from verify import gpu_kit as gk  # noqa: E402

from kernelmosaic.verify import Verifier, VerifyConfig  # noqa: E402

LEGIT_CUDA = ["legit_cuda_elementwise", "legit_cuda_tiled_matmul", "legit_tricky_comments"]


def build_legit(name: str) -> str:
    """The legit fixtures load their extensions directly (no verifier): build them where their test looks."""
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(Path(os.environ["KERNELMOSAIC_CACHE"]) / "legit-ext")}
    code = (f"import importlib.util as u; s = u.spec_from_file_location('m', {str(ROOT / 'tests/fixtures/static' / (name + '.py'))!r}); "
            "s.loader.exec_module(u.module_from_spec(s))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return f"{name}: exit {proc.returncode} {proc.stderr[-200:] if proc.returncode else ''}"


def main() -> None:
    from test_agent_e2e_gpu import CUDA_RELU

    work = Path(tempfile.mkdtemp(prefix="km-prebuild-"))
    sources = {
        "add.py": gk.cuda_candidate("ext.add_relu(a, b)"),
        "dead.py": gk.dead_kernel_candidate(),
        "mm.py": gk.matmul_candidate("ext.matmul(a, b)"),
        "side.py": gk.matmul_candidate("ext.matmul_side_stream(a, b)"),
        "l2.py": gk.matmul_candidate("ext.matmul_pinned_l2(a, b)"),
        "agent_relu.py": CUDA_RELU,
    }
    for name, text in sources.items():
        (work / name).write_text(text)
    with Verifier(VerifyConfig(device="cuda")) as verifier, ThreadPoolExecutor(len(sources) + len(LEGIT_CUDA)) as pool:
        legit = pool.map(build_legit, LEGIT_CUDA) if "KERNELMOSAIC_CACHE" in os.environ else []
        for name, result in zip(sources, pool.map(lambda n: verifier.compile(work / n), sources), strict=True):
            print(f"{name}: {result.status.value} in {result.info.seconds:.1f}s {result.message[:120]}")
        for line in legit:
            print(line)


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):  # the docstring is the usage
        print(__doc__)
        sys.exit(0)
    main()
