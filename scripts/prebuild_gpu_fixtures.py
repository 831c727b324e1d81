#!/usr/bin/env python3
"""Build every CUDA extension the GPU tests and the verifier benchmark use, in parallel, into the shared cache
($KERNELMOSAIC_CACHE), so that scripts/gpu-check spends its minutes judging rather than compiling one by one."""

from __future__ import annotations

import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from verify import gpu_kit as gk  # noqa: E402

from kernelmosaic.verify import Verifier, VerifyConfig  # noqa: E402


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="km-prebuild-"))
    sources = {
        "add.py": gk.cuda_candidate("ext.add_relu(a, b)"),
        "dead.py": gk.dead_kernel_candidate(),
        "mm.py": gk.matmul_candidate("ext.matmul(a, b)"),
        "side.py": gk.matmul_candidate("ext.matmul_side_stream(a, b)"),
        "l2.py": gk.matmul_candidate("ext.matmul_pinned_l2(a, b)"),
    }
    for name, text in sources.items():
        (work / name).write_text(text)
    with Verifier(VerifyConfig(device="cuda")) as verifier, ThreadPoolExecutor(len(sources)) as pool:
        for name, result in zip(sources, pool.map(lambda n: verifier.compile(work / n), sources), strict=True):
            print(f"{name}: {result.status.value} in {result.info.seconds:.1f}s {result.message[:120]}")


if __name__ == "__main__":
    main()
