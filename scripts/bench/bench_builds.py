"""Side-by-side C++ `load_inline` build times: plain, and with the verifier's precompiled torch header.

Usage: python scripts/bench/bench_builds.py [--pairs 2] [--out bench_builds.json]

Every build is a distinct source in a fresh build directory (no build cache), run one after another in this
process. `pch` builds use the header exactly as the verifier does: precompiled once by `verify/pch_store.py`, from
the flags of the first plain build, and its cost is reported apart. Writes one JSON object and prints a table.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from kernelmosaic.verify.pch_store import precompile  # noqa: E402 - the source tree is put on the path above
from kernelmosaic.verify.sandbox.kmworker import pch  # noqa: E402

SOURCE = """
torch::Tensor scale_{k}(torch::Tensor a) {{
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) po[i] = pa[i] * {k}.0f;
    return out;
}}
"""


def build(root: Path, k: int, extra_cflags: list[str]) -> float:
    from torch.utils.cpp_extension import load_inline

    name = f"km_bench_build_{k}"
    folder = root / name
    folder.mkdir()
    t0 = time.perf_counter()
    module = load_inline(name, SOURCE.format(k=k), functions=[f"scale_{k}"], extra_cflags=extra_cflags,
                         build_directory=str(folder))
    seconds = time.perf_counter() - t0
    import torch

    assert torch.equal(getattr(module, f"scale_{k}")(torch.ones(4)), torch.full((4,), float(k)))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=2, help="plain/pch build pairs after the first plain build")
    parser.add_argument("--out", type=Path, default=Path("bench_builds.json"))
    args = parser.parse_args()
    import torch

    with tempfile.TemporaryDirectory(prefix="km-bench-builds-") as tmp:
        root = Path(tmp)
        first = build(root, 1, ["-O2"])
        t0 = time.perf_counter()
        header = precompile(root / "pch", "0" * 24, root / "km_bench_build_1" / "build.ninja")
        pch_seconds = time.perf_counter() - t0
        plain, with_pch = [], []
        for i in range(args.pairs):  # alternate, so load on the shared machine falls on both
            plain.append(build(root, 10 + i, ["-O2"]))
            with_pch.append(build(root, 100 + i, ["-O2", *pch.flags(header)]))
    result = {"date": date.today().isoformat(), "machine": f"{platform.node()} {platform.processor() or platform.machine()}",
              "torch": torch.__version__, "first_plain_s": round(first, 2), "pch_build_s": round(pch_seconds, 2),
              "plain_s": [round(s, 2) for s in plain], "pch_s": [round(s, 2) for s in with_pch],
              "plain_median_s": round(statistics.median(plain), 2), "pch_median_s": round(statistics.median(with_pch), 2)}
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
