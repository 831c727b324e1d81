"""Branches chosen by what the inputs look like, not by their values: `if x.dim() != 4: return F.instance_norm(x)`.

Models guard their kernels with a PyTorch fallback for inputs the kernel does not handle (another rank, dtype, device
or a non-contiguous layout), and the problem's inputs never take it. Which branch runs is a run-time fact: PyTorch
compute in such a branch is left to the run-time operator probe (under `strict` it sees every operator forward runs
outside the candidate's kernels, at the problem's sizes and the alternative ones), and the static view records a
flag (`torch-compute-guarded`). A test that reads a tensor's values (`x.sum() > 0`, `.item()`), the clock, or state
that forward's own calls change (a counter kept on `self`) is no such guard: compute under it stays `torch-compute`.
"""

from __future__ import annotations

import ast

from kernelmosaic.verify.static.pyscope import ModuleIndex

__all__ = ["guarded_by_metadata"]

_META_ATTRS = {"shape", "ndim", "dtype", "device", "is_cuda", "is_cpu", "layout", "requires_grad", "type",
               "index", "is_sparse", "is_quantized", "is_meta", "training", "itemsize"}
_META_METHODS = {"dim", "size", "numel", "stride", "is_contiguous", "get_device", "element_size", "nelement",
                 "ndimension", "is_floating_point", "is_complex", "is_cuda"}
"""Not `storage_offset` or `data_ptr`: inputs of one shape differ there between calls (the burst's windows), so a
branch on them could run PyTorch in some calls only."""
_META_CALLS = {"len", "isinstance", "all", "any", "tuple", "list", "int", "bool", "min", "max", "str",
               "torch.cuda.is_available", "torch.is_grad_enabled", "torch.is_floating_point",
               "torch.jit.is_scripting", "torch.compiler.is_compiling", "torch.is_tensor"}


def guarded_by_metadata(idx: ModuleIndex, fn: ast.AST, node: ast.AST) -> bool:
    """True when `node` sits in a branch (either side) of an `if` or conditional expression inside `fn` whose test
    reads only the inputs' metadata, constants and configuration `self` keeps from `__init__`."""
    child, parent = node, idx.parent(node)
    while parent is not None and child is not fn:
        if isinstance(parent, ast.If | ast.IfExp) and child is not parent.test and _metadata_test(idx, parent.test):
            return True
        child, parent = parent, idx.parent(parent)
    return False


def _metadata_test(idx: ModuleIndex, test: ast.expr) -> bool:
    mutable = _state_attrs(idx)
    for n in ast.walk(test):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in _META_METHODS:
                continue
            if (idx.resolve(f) or "").removeprefix("builtins.") in _META_CALLS:
                continue
            return False
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name) and n.value.id == "self":
                if n.attr in mutable:
                    return False
                continue
            parent = idx.parent(n)
            if isinstance(parent, ast.Call) and parent.func is n:
                continue  # judged as a call above
            if n.attr not in _META_ATTRS and not (idx.resolve(n) or "").startswith("torch."):  # torch.float32
                return False
        elif isinstance(n, ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr | ast.Lambda):
            return False
    return True


def _state_attrs(idx: ModuleIndex) -> frozenset[str]:
    """Attributes of `self` some method other than `__init__` assigns: state forward's calls may change."""
    out = set()
    for fn in ast.walk(idx.tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name != "__init__":
            for n in ast.walk(fn):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                    n, ast.AugAssign | ast.AnnAssign) else []
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        out.add(t.attr)
    return frozenset(out)
