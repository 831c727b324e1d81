"""The static rule registry: every rule id the static analysis can emit, its default severity and why.

`verify --explain RULE` prints the rationale; the threat model (docs/threat-model-static.md) expands it.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.verdict import Severity

__all__ = ["Rule", "RULES", "reject_message"]


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    id: str
    """Stable rule id, as it appears in `Finding.rule`."""
    severity: Severity
    """Default severity; `StaticPolicy` may lower it or switch the rule off."""
    rationale: str
    """One line: what the rule catches and why it matters for an honest speedup."""
    instead: str = ""
    """For a rule that rejects: what would be accepted instead, said in the rejection (`reject_message`)."""


def _rules(*rows: tuple[str, Severity, str]) -> dict[str, Rule]:
    return {rid: Rule(id=rid, severity=sev, rationale=why, instead=INSTEAD.get(rid, "")) for rid, sev, why in rows}


INSTEAD = {
    "torch-compute":
        "compute it in a kernel of your own, or judge under `--policy kernelbench`, which lets PyTorch compute the rest",
    "no-custom-kernel-defined":
        "define the kernel with torch.utils.cpp_extension.load_inline, a Triton @triton.jit function or a CuPy RawKernel",
    "no-kernel-launched":
        "call the extension's function (directly, through an alias, a helper or a submodule) from forward",
    "kernel-output-unused": "return what the kernel computes (or a view, copy or epilogue of it) from forward",
    "missing-modelnew": "define `class ModelNew(nn.Module)` at the top level of the file",
    "try-fallback": "let a failing kernel raise; no PyTorch result in an exception handler",
    "reference-access":
        "compute from forward's inputs and the module's own parameters only; no frames, files, gc or sys.modules",
    "import-not-allowed": "import only torch, triton, math, numpy and the standard modules the policy lists",
    "dynamic-code":
        "write the code out: no exec/eval/ctypes/importlib, no computed attribute names, no Python API from C++",
    "opaque-source": "pass the source as string literals (or names bound to them) to load_inline",
    "concurrency":
        "do the work inside forward, in the calling thread (OpenMP, at::parallel_for and C++ threads are fine)",
    "problem-globals-write": "keep sizes in the module's own attributes; never assign the problem's globals",
    "monkeypatch": "leave other modules' attributes alone (torch, time, builtins)",
    "numerics-switch": "leave global numerics settings as they are; choose precision inside your kernel",
    "streams-python": "launch on the current stream; no new streams, events, device switches or allocator settings",
    "env-tamper": "leave os.environ alone (build knobs such as TORCH_CUDA_ARCH_LIST excepted)",
    "rng-control": "do not seed or read the random state; the kernel must work for any input",
    "cupy-compute": "write the work as a cupy.RawKernel/RawModule kernel, or judge under `--policy kernelbench`",
    "fastform-api": "use only cupy.RawKernel/RawModule and their launch API",
    "triton-not-allowed": "write the kernel in CUDA or C++ with load_inline for this task",
    "syntax-error": "fix the Python syntax error",
    "unanalyzable": "simplify the code (shallower nesting, no generated code)",
    "aten-compute-in-extension": "write that step as a kernel of your own, or judge under `--policy kernelbench`",
    "vendor-library":
        "write the GEMM/conv as a kernel of your own, or judge under `--policy kernelbench` (library compute)",
    "streams-cuda": "launch on at::cuda::getCurrentCUDAStream() (or the default stream) from the calling thread",
    "kernel-defined-not-launched": "launch the kernel from the bound host function",
}
"""What each rejecting rule would accept instead."""


def reject_message(rule: str, message: str, evidence: str) -> str:
    """A static rejection as the verdict says it: the rule, the candidate's line, what was found, and what would be
    accepted instead (unless the finding's own message already says it)."""
    found = re.search(r":(\d+): ", evidence)
    where = f" (line {found.group(1)})" if found and f"line {found.group(1)}" not in message else ""
    instead = RULES[rule].instead if rule in RULES else ""
    way_out = f"; instead: {instead}" if instead and "instead" not in message and "--policy" not in message else ""
    return f"static check `{rule}`{where}: {message}{way_out}"


RULES: dict[str, Rule] = _rules(
    # Python side: does forward really run the candidate's own kernels?
    ("torch-compute", "reject",
     "forward (or code it reaches) computes with PyTorch ops, so the speedup would belong to PyTorch, not the kernel."),
    ("torch-compute-guarded", "flag",
     "PyTorch compute in a branch chosen by the inputs' shape, dtype or device (a fallback): the run decides."),
    ("torch-aux-op", "flag",
     "forward builds index tensors with PyTorch (arange, linspace); small, but work the kernel did not do."),
    ("no-custom-kernel-defined", "reject",
     "the candidate defines no load_inline extension, Triton kernel or CuPy RawKernel/RawModule: no kernel to judge."),
    ("no-kernel-launched", "reject",
     "a custom kernel is defined but nothing forward reaches calls into it (aliases, helpers, submodules followed)."),
    ("kernel-launch-unresolved", "flag",
     "forward calls something the static view cannot resolve and no visible kernel: the run-time census decides."),
    ("kernel-output-unused", "reject",
     "custom kernels are launched, but nothing they produce flows into what forward returns: the result comes "
     "from elsewhere (a decoy kernel)."),
    ("missing-modelnew", "reject",
     "no `class ModelNew` is defined statically, so the analysis cannot see what the verifier will run."),
    ("try-fallback", "reject",
     "an exception handler in forward computes a result, typically a PyTorch fallback when the kernel fails."),
    ("reference-access", "reject",
     "the candidate reaches for the reference (Model, the problem module, frames, gc, sys.modules, files)."),
    ("import-not-allowed", "reject",
     "the candidate imports a module outside the allow-list; unknown modules can reach the problem or the verifier."),
    ("dynamic-code", "reject",
     "exec/eval/compile/importlib/ctypes or a computed attribute name hides code from static analysis."),
    ("opaque-source", "reject",
     "a load_inline source could not be resolved to literal text, so the C++/CUDA code cannot be analyzed."),
    ("concurrency", "reject",
     "threads, processes, signals or async work can run outside the timed region or race the checker."),
    ("problem-globals-write", "reject",
     "a `global` write to a size constant or from ModelNew can change what the problem means between calls."),
    ("monkeypatch", "reject",
     "the candidate assigns attributes of other modules (torch, time, builtins), which can fake timing or checks."),
    ("reduced-precision-dot", "flag",
     "a TF32 matrix product (tl.dot's default, TF32 WMMA/mma): 10 mantissa bits, past an fp32 problem's error budget."),
    ("numerics-switch", "reject",
     "global numerics switches (TF32, reduced-precision reductions, default dtype) change the reference's precision too."),
    ("streams-python", "reject",
     "new CUDA streams/events, device switches or allocator controls escape the timer or the output checks."),
    ("cuda-graph", "flag",
     "CUDA graphs replay recorded work; legitimate for launch overhead, but they can replay stale results."),
    ("env-tamper", "reject",
     "writing os.environ (CUDA_LAUNCH_BLOCKING, build dirs) changes how the verifier itself runs or builds."),
    ("rng-control", "reject",
     "seeding or reading RNG state lets a candidate predict (and precompute for) the verifier's random inputs."),
    ("timing-probe", "flag",
     "the candidate reads the clock; code that knows when it is timed can behave differently when timed."),
    ("caching", "flag",
     "results keyed on data_ptr/id/hash, memoized tensor functions, or state stored on self in forward can replay old outputs."),
    ("cupy-compute", "reject",
     "CuPy's array library (ufuncs, reductions, cuBLAS, ElementwiseKernel) is library compute like PyTorch's; only "
     "RawKernel/RawModule kernels are the candidate's."),
    ("fastform-api", "reject",
     "CuPy beyond the fast form's launch API (its runtime, driver, memory pools, private modules) can fake work, swap "
     "allocators or escape the timer."),
    ("triton-not-allowed", "reject",
     "the policy forbids Triton kernels for this task."),
    ("syntax-error", "reject",
     "the candidate is not valid Python, so nothing about it can be checked."),
    ("unanalyzable", "reject",
     "the analysis could not finish (nesting too deep, internal error); refusing is safer than guessing."),
    # C++/CUDA side.
    ("aten-compute-in-extension", "reject",
     "extension host code calls ATen compute (at::matmul, x.sum(), a + b on tensors); policy torch_compute."),
    ("vendor-library", "reject",
     "cuBLAS/cuDNN/cuFFT/cuSOLVER/cuSPARSE do the work: library compute, like ATen's (policy torch_compute)."),
    ("vendor-template", "flag",
     "CUTLASS/CuTe/Thrust/CUB are header templates compiled into the candidate: legitimate, but recorded."),
    ("streams-cuda", "reject",
     "new streams/events, graph capture, host threads beside CUDA code, L2 persistence or device resets escape or "
     "distort the timer."),
    ("host-threads", "flag",
     "a CPU extension starts host threads (std::thread, pthread_create): parallelism like OpenMP's, timed by the run "
     "clock; beside CUDA code, streams-cuda."),
    ("cuda-device-config", "flag",
     "device-wide cache configuration or managed memory changes conditions for the reference and other subjects."),
    ("kernel-defined-not-launched", "reject",
     "a __global__ kernel is defined but never launched while the extension has no other kernel doing the work."),
    ("printf-in-kernel", "flag",
     "device printf slows kernels and floods logs; it is never part of a fast kernel."),
    ("cuda-parse-incomplete", "flag",
     "tree-sitter could not parse part of an extension source, so that part was analyzed only partly."),
)
