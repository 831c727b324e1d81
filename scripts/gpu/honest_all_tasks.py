"""Write a trivially honest CUDA candidate for every task of a source, at the task's own (full) sizes, as manifests.

Each candidate is the task's reference module with its `Model` renamed, and a `ModelNew` that runs it and passes its
first tensor output through a custom CUDA kernel (an elementwise copy, `load_inline`, one build shared by all):
under `--policy kernelbench` PyTorch may compute the rest, and the custom kernel's output is the result. Every
verdict other than `accepted` is then a fact about the verifier (or the task), not about the candidate: the GPU
check that no task at its real size ends as `bad_problem`.

    python3 scripts/gpu/honest_all_tasks.py OUT_DIR [SOURCE [LEVELS]]   # OUT_DIR/<dtype>.jsonl manifests, the pairs

SOURCE is any task source (`builtin`, the default; `kernelbench:PATH` for a KernelBench checkout's levels 1-3, read
in place; a folder; a .parquet); LEVELS keeps the tasks of those levels (e.g. `1,2,3`: KernelBench's level 4 needs
model weights from the network). A source that does not load exits 2 with its error.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.sources import load_tasks

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


def main(out: Path, source: str = "builtin", levels: str = "") -> int:
    try:
        tasks = load_tasks(source)
        keep = {int(n) for n in levels.split(",") if n.strip()}
    except (TaskFormatError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tasks = [t for t in tasks if not keep or t.level in keep]
    out.mkdir(parents=True, exist_ok=True)
    manifests: dict[str, list[dict]] = {}
    for task in tasks:
        pair = out / "pairs" / task.id
        pair.mkdir(parents=True, exist_ok=True)
        (pair / "problem.py").write_text(task.forms.reference)
        (pair / "candidate.py").write_text(candidate(task.forms.reference))
        manifests.setdefault(task.dtype, []).append(
            {"id": task.id, "problem": f"pairs/{task.id}/problem.py", "candidate": f"pairs/{task.id}/candidate.py"})
    for dtype, rows in manifests.items():
        (out / f"{dtype}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"{dtype}: {len(rows)} pairs")
    return 0


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):  # the docstring is the usage
        print(__doc__)
        sys.exit(0)
    if len(sys.argv) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), *sys.argv[2:]))
