"""Syntax tree of a math spec; each node keeps the position it came from."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Num", "Param", "Access", "Unary", "BinOp", "Call", "Reduce", "Expr",
    "DimDecl", "InputDecl", "ParamDecl", "Assign", "Program", "DTYPES",
]

# Spec dtype name -> torch dtype attribute.
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
          "i32": "int32", "i64": "int64", "bool": "bool"}


@dataclass(frozen=True)
class Num:
    value: int | float
    line: int
    col: int


@dataclass(frozen=True)
class Param:
    """A scalar parameter used as a value."""

    name: str
    line: int
    col: int


@dataclass(frozen=True)
class Access:
    """`name[i, 0, k]`: index variables (str) or the literal 0 (int); no indices for a rank-0 tensor."""

    name: str
    indices: tuple[str | int, ...]
    line: int
    col: int


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Expr
    line: int
    col: int


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr
    line: int
    col: int


@dataclass(frozen=True)
class Call:
    """An elementwise function such as `exp(e)`, `max(a, b)`, `where(c, a, b)`."""

    func: str
    args: tuple[Expr, ...]
    line: int
    col: int


@dataclass(frozen=True)
class Reduce:
    """`sum(k, l, body)`: reduce `body` over the index variables `k, l`."""

    op: str
    variables: tuple[str, ...]
    body: Expr
    line: int
    col: int


Expr = Num | Param | Access | Unary | BinOp | Call | Reduce


@dataclass(frozen=True)
class DimDecl:
    name: str
    value: int | None
    line: int


@dataclass(frozen=True)
class InputDecl:
    name: str
    dtype: str
    dims: tuple[str | int, ...]
    line: int


@dataclass(frozen=True)
class ParamDecl:
    name: str
    dtype: str
    default: int | float | None
    line: int


@dataclass(frozen=True)
class Assign:
    """`let` or `output` statement: `name[indices] = expr`."""

    kind: str
    name: str
    indices: tuple[str, ...]
    expr: Expr
    line: int


@dataclass
class Program:
    dims: list[DimDecl] = field(default_factory=list)
    inputs: list[InputDecl] = field(default_factory=list)
    params: list[ParamDecl] = field(default_factory=list)
    statements: list[Assign] = field(default_factory=list)

    @property
    def outputs(self) -> list[Assign]:
        return [s for s in self.statements if s.kind == "output"]
