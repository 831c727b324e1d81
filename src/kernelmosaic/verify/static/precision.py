"""Matrix products a candidate computes in TF32 (`reduced-precision-dot`, a flag): Triton's `tl.dot` on fp32 operands
with its default input precision, WMMA or `mma` fragments of TF32, `__float_to_tf32`, cuBLAS's TF32 math mode.

TF32 keeps 10 of fp32's 23 mantissa bits, so a product over K terms is off by about 2^-11 per term, far above the fp32
error budget (verify/compare.py): KernelBench's fp32 tolerance (1e-4) rejects it too. The flag says nothing by itself
(a TF32 product over few terms, or one whose result is squashed, can stay within the budget); when the outputs do
not match, the verdict's message names it and what to write instead (`job.finish`), so a model's `tl.dot` with its
default precision is told why, not only that its result is off.
"""

from __future__ import annotations

import ast
import re

from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.sources import Extension

__all__ = ["check_precision", "RULE"]

RULE = "reduced-precision-dot"
_TRITON_DOT = {"triton.language.dot", "triton.language.core.dot"}
_IEEE = {"ieee"}
# in CUDA/C++ source text: TF32 fragments and conversions, inline PTX on tf32 operands, cuBLAS's TF32 modes
_CUDA_TF32 = re.compile(r"precision::tf32|__float_to_tf32|cvt\.rna\.tf32|\.tf32\.tf32|CUBLAS_TF32_TENSOR_OP_MATH"
                        r"|CUBLAS_COMPUTE_32F_FAST_TF32")


def _precise(call: ast.Call) -> bool:
    """`tl.dot(...)` asked for IEEE fp32 products: input_precision="ieee" or allow_tf32=False (older Triton)."""
    for kw in call.keywords:
        value = kw.value
        if kw.arg == "input_precision" and isinstance(value, ast.Constant) and value.value in _IEEE:
            return True
        if kw.arg == "allow_tf32" and isinstance(value, ast.Constant) and value.value is False:
            return True
        if kw.arg in ("input_precision", "allow_tf32") and not isinstance(value, ast.Constant):
            return True  # chosen at run time: the static view cannot say, and says nothing
    return False


def check_precision(idx: ModuleIndex, exts: list[Extension]) -> list[Hit]:
    """One hit per TF32 matrix product seen (its line), in Python (Triton) and in extension sources."""
    hits = []
    for node in ast.walk(idx.tree):
        if (isinstance(node, ast.Call) and idx.resolve(node.func) in _TRITON_DOT and not _precise(node)):
            hits.append(idx.hit(RULE, node, (
                "`tl.dot` with Triton's default input precision rounds fp32 operands to TF32 (10 mantissa bits): "
                "an fp32 problem's products then exceed the fp32 error budget; pass input_precision=\"ieee\" "
                "(allow_tf32=False on older Triton)")))
    for ext in exts:
        for text in (ext.cpp, ext.cuda):
            body = text.text
            for m in _CUDA_TF32.finditer(body):
                line = text.line_of(m.start())
                hits.append(idx.hit(RULE, line, (
                    f"`{m.group(0)}`: a TF32 matrix product (10 mantissa bits), beyond the fp32 error budget of an "
                    "fp32 problem; multiply in fp32 (FFMA, or fp32 fragments)")))
    return hits
