"""Write a trivially honest CUDA candidate for every bundled task, at the task's own (full) sizes, as manifests.

Each candidate is the task's reference module with its `Model` renamed, and a `ModelNew` that runs it and passes its
first tensor output through a custom CUDA kernel (an elementwise copy, `load_inline`, one build shared by all):
under `--policy kernelbench` PyTorch may compute the rest, and the custom kernel's output is the result. Every
verdict other than `accepted` is then a fact about the verifier (or the task), not about the candidate: the GPU
check that no task at its real size ends as `bad_problem`.

    python3 scripts/gpu/honest_all_tasks.py OUT_DIR   # writes OUT_DIR/<dtype>.jsonl manifests and the pairs
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "src" / "kernelmosaic" / "tasks" / "builtin"

EXTENSION = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor passthrough(torch::Tensor x);"
_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <typename T>
__global__ void copy_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

torch::Tensor passthrough(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "passthrough: a CUDA tensor");
    auto src = x.contiguous();
    auto out = torch::empty_like(src);
    const int64_t n = src.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    AT_DISPATCH_ALL_TYPES_AND3(at::ScalarType::Half, at::ScalarType::BFloat16, at::ScalarType::Bool,
                               src.scalar_type(), "passthrough", [&] {
        copy_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            src.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="km_honest_passthrough", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["passthrough"],
                   extra_cuda_cflags=["-O3"])


class ModelNew(_KmReference):
    def forward(self, *args):
        out = super().forward(*args)
        if isinstance(out, torch.Tensor):
            return _ext.passthrough(out)
        items = list(out)
        for i, item in enumerate(items):
            if isinstance(item, torch.Tensor):
                items[i] = _ext.passthrough(item)
                break
        return type(out)(items)
'''


def candidate(reference: str) -> str:
    renamed = re.sub(r"\bModel\b", "_KmReference", reference)
    return renamed.rstrip() + "\n\n" + EXTENSION


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    manifests: dict[str, list[dict]] = {}
    for task_toml in sorted(TASKS.glob("L*/*/task.toml")):
        meta = tomllib.loads(task_toml.read_text())
        folder = task_toml.parent
        pair = out / "pairs" / meta["id"]
        pair.mkdir(parents=True, exist_ok=True)
        reference = (folder / "reference.py").read_text()
        (pair / "problem.py").write_text(reference)
        (pair / "candidate.py").write_text(candidate(reference))
        manifests.setdefault(meta.get("dtype", "fp32"), []).append(
            {"id": meta["id"], "problem": f"pairs/{meta['id']}/problem.py",
             "candidate": f"pairs/{meta['id']}/candidate.py"})
    for dtype, rows in manifests.items():
        (out / f"{dtype}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"{dtype}: {len(rows)} pairs")
    return 0


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):  # the docstring is the usage
        print(__doc__)
        sys.exit(0)
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
