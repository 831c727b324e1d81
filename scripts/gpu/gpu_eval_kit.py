#!/usr/bin/env python3
"""Writes the GPU evaluation check's inputs: 20 KernelBench-like L1/L2 problems (our own), 36 CUDA/Triton candidates in
KernelBench's runs layout (correct, slow, wrong, failing), and a scripted model for a one-shot run over the 20 tasks.

All CUDA candidates share ONE extension source (they differ only in the function forward calls), so the verifier
builds it once; the two compile failures are the only other nvcc builds.

    python3 scripts/gpu/gpu_eval_kit.py WORK   # run by scripts/gpu/gpu-eval-check
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OPS = {  # name: (level, torch expression of x, CUDA expression of v, a wrong CUDA expression)
    "ReLU": (1, "torch.relu(x)", "fmaxf(v, 0.f)", "fabsf(v)"),
    "Sigmoid": (1, "torch.sigmoid(x)", "1.f / (1.f + expf(-v))", "1.f / (1.f + expf(v))"),
    "Tanh": (1, "torch.tanh(x)", "tanhf(v)", "v"),
    "Abs": (1, "torch.abs(x)", "fabsf(v)", "v"),
    "Square": (1, "x * x", "v * v", "v * fabsf(v)"),
    "Negate": (1, "-x", "-v", "v"),
    "Scale": (1, "x * 3.0", "v * 3.f", "v * 3.01f"),
    "LeakyReLU": (1, "torch.nn.functional.leaky_relu(x, 0.1)", "v > 0.f ? v : 0.1f * v", "v > 0.f ? v : 0.f"),
    "HardTanh": (1, "torch.clamp(x, -1.0, 1.0)", "fminf(fmaxf(v, -1.f), 1.f)", "fminf(v, 1.f)"),
    "Softplus": (1, "torch.nn.functional.softplus(x)", "v > 20.f ? v : log1pf(expf(v))", "logf(1.f + expf(v))"),
    "Exp": (1, "torch.exp(x * 0.5)", "expf(v * 0.5f)", "expf(v * 0.5f) + 1e-3f"),
    "SiLU": (1, "x * torch.sigmoid(x)", "v / (1.f + expf(-v))", "v / (1.f + expf(v))"),
    "ReLU_Scale": (2, "torch.relu(x) * 2.0", "fmaxf(v, 0.f) * 2.f", "fmaxf(v, 0.f)"),
    "Tanh_ReLU": (2, "torch.relu(torch.tanh(x))", "fmaxf(tanhf(v), 0.f)", "tanhf(v)"),
    "Scale_Add_ReLU": (2, "torch.relu(x * 2.0 + 1.0)", "fmaxf(v * 2.f + 1.f, 0.f)", "fmaxf(v * 2.f, 0.f)"),
    "Sigmoid_Scale": (2, "torch.sigmoid(x) * 4.0", "4.f / (1.f + expf(-v))", "4.f / (1.f + expf(-2.f * v))"),
    "Abs_Sqrt": (2, "torch.sqrt(torch.abs(x) + 1.0)", "sqrtf(fabsf(v) + 1.f)", "sqrtf(fabsf(v))"),
    "Square_Tanh": (2, "torch.tanh(x * x)", "tanhf(v * v)", "tanhf(v)"),
    "Clamp_Scale": (2, "torch.clamp(x, 0.0, 2.0) * 0.5", "fminf(fmaxf(v, 0.f), 2.f) * 0.5f", "fminf(v, 2.f) * 0.5f"),
    "GELU_Tanh": (2, "torch.nn.functional.gelu(x, approximate='tanh')",
                  "0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))", "0.5f * v * (1.f + tanhf(v))"),
}

PROBLEM = '''import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    """{name}: elementwise over a (batch_size, dim) tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {expr}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def cuda_source() -> str:
    parts = ["#include <torch/extension.h>\n"]
    for name, (_, _, good, wrong) in OPS.items():
        for kind, expr in (("good", good), ("wrong", wrong)):
            parts.append(f"__global__ void k_{kind}_{name}(const float* __restrict__ x, float* __restrict__ y, long n) {{\n"
                         f"  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) "
                         f"{{ float v = x[i]; y[i] = {expr}; }}\n}}\n")
        parts.append(f"torch::Tensor {name.lower()}_good(torch::Tensor x) {{ auto y = torch::empty_like(x); long n = x.numel();\n"
                     f"  k_good_{name}<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
                     "  return y; }\n")
        parts.append(f"torch::Tensor {name.lower()}_slow(torch::Tensor x) {{ auto y = torch::empty_like(x); long n = x.numel();\n"
                     f"  k_good_{name}<<<4, 32, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
                     "  return y; }\n")
        parts.append(f"torch::Tensor {name.lower()}_wrong(torch::Tensor x) {{ auto y = torch::empty_like(x); long n = x.numel();\n"
                     f"  k_wrong_{name}<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
                     "  return y; }\n")
        parts.append(f"torch::Tensor {name.lower()}_badlaunch(torch::Tensor x) {{ auto y = torch::empty_like(x); long n = x.numel();\n"
                     f"  k_good_{name}<<<(n + 2047) / 2048, 2048, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
                     "  C10_CUDA_KERNEL_LAUNCH_CHECK(); return y; }\n")
    return "".join(parts).replace("#include <torch/extension.h>\n", "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
                                  "#include <c10/cuda/CUDAException.h>\n", 1)


FUNCTIONS = [f"{n.lower()}_{k}" for n in OPS for k in ("good", "slow", "wrong", "badlaunch")]
CPP_DECL = "".join(f"torch::Tensor {f}(torch::Tensor x);\n" for f in FUNCTIONS)


def cuda_candidate(function: str, cuda: str | None = None) -> str:
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""{cuda if cuda is not None else cuda_source()}"""
CPP = r"""{CPP_DECL}"""
ext = load_inline(name="km_gpu_eval_kit", cpp_sources=CPP, cuda_sources=CUDA, functions={FUNCTIONS!r},
                  extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.{function}(x.contiguous())
'''


def triton_candidate(expr: str, name: str) -> str:
    return f'''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _{name.lower()}_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, {expr}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _{name.lower()}_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
'''


def main(root: Path) -> None:
    bench = root / "kb" / "KernelBench"
    gens = root / "gens"
    plan: list[tuple[int, int, int, str, str]] = []  # level, problem id, sample, kind, source
    ids = {1: 0, 2: 0}
    answers: dict[str, str] = {}  # task id -> what the scripted model of the one-shot run writes (the correct one)
    for name, (level, expr, _, _) in OPS.items():
        ids[level] += 1
        (bench / f"level{level}").mkdir(parents=True, exist_ok=True)
        (bench / f"level{level}" / f"{ids[level]}_{name}.py").write_text(PROBLEM.format(name=name, expr=expr))
        pid, low = ids[level], name.lower()
        plan.append((level, pid, 0, "correct", cuda_candidate(f"{low}_good")))
        answers[f"kb_l{level}_{pid}_{low}"] = plan[-1][4]
        if pid % 2 == 0:
            plan.append((level, pid, 1, "slow", cuda_candidate(f"{low}_slow")))
        if pid % 3 == 0:
            plan.append((level, pid, 2, "wrong", cuda_candidate(f"{low}_wrong")))
    plan.append((1, 1, 3, "failing: compile error", cuda_candidate("relu_good", cuda_source().replace("fmaxf(v, 0.f)", "fmaxf(v, 0.f", 1))))
    plan.append((2, 1, 3, "failing: compile error", cuda_candidate("relu_scale_good", cuda_source() + "\nnot c++;\n")))
    plan.append((1, 2, 3, "failing: invalid launch", cuda_candidate("sigmoid_badlaunch")))
    plan.append((1, 1, 4, "correct (triton)", triton_candidate("tl.maximum(v, 0.0)", "ReLU")))
    plan.append((1, 7, 4, "correct (triton)", triton_candidate("v * 3.0", "Scale")))
    plan.append((1, 5, 4, "wrong (triton)", triton_candidate("v * v + 1e-3", "Square")))
    for level, pid, sample, _, source in plan:
        path = gens / f"level_{level}" / f"problem_{pid}" / f"sample_{sample}" / "kernel.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    kinds = [{"level": lv, "problem": p, "sample": s, "kind": k} for lv, p, s, k, _ in plan]
    (root / "plan.json").write_text(json.dumps(kinds, indent=1))
    (root / "answers.json").write_text(json.dumps(answers))
    print(f"{len(OPS)} problems, {len(plan)} candidates ({sum(k['kind'].startswith('correct') for k in kinds)} correct) under {root}")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):  # the docstring is the usage
        print(__doc__)
        sys.exit(0)
    main(Path(sys.argv[1]))
