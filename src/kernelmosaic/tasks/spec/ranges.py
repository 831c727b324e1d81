"""Index ranges: every use of an index variable in a statement must span the same size, checked against
the size values (so `sum(k, A[i, k] * B[n, k])` with A: [M, K] and B: [N, J], K != J, is an error at `B`)."""

from __future__ import annotations

from kernelmosaic.tasks.spec.lexer import SpecError
from kernelmosaic.tasks.spec.nodes import Access, BinOp, Call, Expr, Program, Reduce, Unary

__all__ = ["check_ranges"]


def _accesses(node: Expr) -> list[Access]:
    if isinstance(node, Access):
        return [node]
    if isinstance(node, Unary):
        return _accesses(node.operand)
    if isinstance(node, BinOp):
        return _accesses(node.left) + _accesses(node.right)
    if isinstance(node, Call):
        return [a for arg in node.args for a in _accesses(arg)]
    if isinstance(node, Reduce):
        return _accesses(node.body)
    return []


def check_ranges(program: Program, sizes: dict[str, int], file: str = "spec.km", source: str = "") -> None:
    """Raise `SpecError` at the first access whose index spans a different size than earlier uses."""
    shapes: dict[str, tuple[int, ...]] = {}
    for decl in program.inputs:
        shapes[decl.name] = tuple(sizes[d] if isinstance(d, str) else d for d in decl.dims)
    for stmt in program.statements:
        seen: dict[str, tuple[int, str]] = {}  # index -> (size, where it was first seen)
        for access in _accesses(stmt.expr):
            dims = shapes[access.name]
            for pos, var in enumerate(access.indices):
                if not isinstance(var, str):
                    continue
                first = seen.setdefault(var, (dims[pos], f"{access.name} (dimension {pos})"))
                if first[0] != dims[pos]:
                    raise SpecError(f"index '{var}' spans {dims[pos]} in {access.name} (dimension {pos}) but "
                                    f"{first[0]} in {first[1]}", access.line, access.col, file, source)
        shapes[stmt.name] = tuple(seen[var][0] for var in stmt.indices)
