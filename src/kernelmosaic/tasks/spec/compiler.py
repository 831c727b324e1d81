"""Compile a checked spec into the Python source of a KernelBench-format module (`Model`, `get_inputs`, ...).

Every intermediate value is a tensor whose dimensions carry index-variable labels; operands are aligned by
label (permute + None-insertion), so broadcasting follows the index names, never the positions. A sum over a
product becomes one `torch.einsum`, so `sum(k, A[i,k] * B[k,j])` never materializes an i*k*j tensor.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

from kernelmosaic.tasks.spec.lexer import SpecError
from kernelmosaic.tasks.spec.nodes import (
    DTYPES,
    Access,
    Assign,
    BinOp,
    Call,
    Expr,
    Num,
    Param,
    Program,
    Reduce,
    Unary,
)
from kernelmosaic.tasks.spec.parser import parse_spec
from kernelmosaic.tasks.spec.ranges import check_ranges

__all__ = ["compile_spec", "compile_program", "forward_source", "load_spec_module"]

_UNARY = {"exp": "torch.exp", "log": "torch.log", "tanh": "torch.tanh", "sigmoid": "torch.sigmoid",
          "relu": "torch.relu", "abs": "torch.abs", "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt",
          "sin": "torch.sin", "cos": "torch.cos", "erf": "torch.erf",
          "gelu": "torch.nn.functional.gelu", "softplus": "torch.nn.functional.softplus"}
_REDUCE = {"sum": "torch.sum", "mean": "torch.mean", "max": "torch.amax", "min": "torch.amin"}


@dataclass(frozen=True)
class _Val:
    code: str
    labels: tuple[str, ...] = ()
    scalar: bool = False
    """A Python number (literal or param), not a tensor."""


def _align(val: _Val, target: tuple[str, ...]) -> str:
    """Code for `val` laid out along `target` labels (missing labels become size-1 dims)."""
    if val.scalar or not val.labels:
        return val.code
    present = [lab for lab in target if lab in val.labels]
    code = val.code
    if tuple(present) != val.labels:
        code = f"{code}.permute({', '.join(str(val.labels.index(lab)) for lab in present)})"
    if len(present) != len(target):
        code = f"{code}[{', '.join(':' if lab in val.labels else 'None' for lab in target)}]"
    return code


def _union(*vals: _Val) -> tuple[str, ...]:
    out: list[str] = []
    for val in vals:
        out += [lab for lab in val.labels if lab not in out]
    return tuple(out)


def _tensor(val: _Val) -> _Val:
    return _Val(f"torch.as_tensor({val.code})", ()) if val.scalar else val


class _Emitter:
    def __init__(self, program: Program) -> None:
        self.program = program
        # Tensors known to be floating point: einsum refuses bool and mixed-dtype operands.
        self.floats = {i.name for i in program.inputs if i.dtype in ("f32", "f16", "bf16", "f64")}
        self.floats |= {s.name for s in program.statements
                        if not (isinstance(s.expr, BinOp) and s.expr.op in ("<", "<=", ">", ">=", "==", "!="))}

    def expr(self, node: Expr) -> _Val:
        if isinstance(node, Num):
            return _Val(repr(node.value), scalar=True)
        if isinstance(node, Param):
            return _Val(f"self.{node.name}", scalar=True)
        if isinstance(node, Access):
            return self.access(node)
        if isinstance(node, Unary):
            inner = self.expr(node.operand)
            return _Val(f"(-{inner.code})", inner.labels, inner.scalar)
        if isinstance(node, BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, Call):
            return self.call(node)
        return self.reduce(node)

    def access(self, node: Access) -> _Val:
        if 0 not in node.indices:
            return _Val(node.name, tuple(node.indices))
        picks = ", ".join(":" if isinstance(i, str) else "0" for i in node.indices)
        return _Val(f"{node.name}[{picks}]", tuple(i for i in node.indices if isinstance(i, str)))

    def binop(self, op: str, left: _Val, right: _Val) -> _Val:
        labels = _union(left, right)
        scalar = left.scalar and right.scalar
        return _Val(f"({_align(left, labels)} {op} {_align(right, labels)})", labels, scalar)

    def call(self, node: Call) -> _Val:
        args = [self.expr(a) for a in node.args]
        labels = _union(*args)
        code = [_align(a, labels) for a in args]
        if node.func in _UNARY:
            return _Val(f"{_UNARY[node.func]}({_tensor(args[0]).code})", labels)
        if node.func in ("max", "min"):
            if all(a.scalar for a in args):
                return _Val(f"{node.func}({code[0]}, {code[1]})", scalar=True)
            if args[0].scalar or args[1].scalar:
                # max(x, s) clamps from below, min(x, s) from above.
                tensor, bound = (code[1], code[0]) if args[0].scalar else (code[0], code[1])
                side = "min" if node.func == "max" else "max"
                return _Val(f"torch.clamp({tensor}, {side}={bound})", labels)
            return _Val(f"torch.{'maximum' if node.func == 'max' else 'minimum'}({code[0]}, {code[1]})", labels)
        if node.func == "pow":
            return _Val(f"({code[0]} ** {code[1]})", labels, all(a.scalar for a in args))
        if node.func == "where":
            cond = _align(_tensor(args[0]), labels)
            return _Val(f"torch.where({cond}, {code[1]}, {code[2]})", labels)
        lo, hi = args[1], args[2]  # clamp: torch.clamp needs both bounds of one kind (numbers or tensors)
        if lo.scalar != hi.scalar:
            lo, hi = _tensor(lo), _tensor(hi)
        first = _align(_tensor(args[0]), labels)
        return _Val(f"torch.clamp({first}, {_align(lo, labels)}, {_align(hi, labels)})", labels)

    def reduce(self, node: Reduce) -> _Val:
        factors = _product_factors(node.body) if node.op == "sum" else []
        if len(factors) >= 2 and all(self._floating(f) for f in factors):
            return self.einsum(node, [self.expr(f) for f in factors])
        body = _tensor(self.expr(node.body))
        dims = tuple(body.labels.index(v) for v in node.variables)
        kept = tuple(lab for lab in body.labels if lab not in node.variables)
        return _Val(f"{_REDUCE[node.op]}({body.code}, dim={dims})", kept)

    def _floating(self, node: Expr) -> bool:
        """Known floating point (or a number): an access to a float tensor, or arithmetic/functions of those."""
        if isinstance(node, Num | Param):
            return True
        if isinstance(node, Access):
            return node.name in self.floats
        if isinstance(node, BinOp) and node.op in ("<", "<=", ">", ">=", "==", "!="):
            return False
        children = [node.operand] if isinstance(node, Unary) else [node.left, node.right] \
            if isinstance(node, BinOp) else list(node.args) if isinstance(node, Call) else [node.body]
        return all(self._floating(c) for c in children)

    def einsum(self, node: Reduce, vals: list[_Val]) -> _Val:
        scalars = [v for v in vals if v.scalar]
        tensors = [v for v in vals if not v.scalar] or [_tensor(scalars.pop())]
        labels = _union(*tensors)
        letters = {lab: chr(ord("a") + i) for i, lab in enumerate(labels)}
        kept = tuple(lab for lab in labels if lab not in node.variables)
        spec = ",".join("".join(letters[lab] for lab in t.labels) for t in tensors)
        spec += "->" + "".join(letters[lab] for lab in kept)
        code = f"torch.einsum({spec!r}, {', '.join(t.code for t in tensors)})"
        for s in scalars:
            code = f"({code} * {s.code})"
        return _Val(code, kept)

    def statement(self, stmt: Assign) -> str:
        val = self.expr(stmt.expr)
        if val.scalar:
            return f"{stmt.name} = torch.as_tensor({val.code})"
        return f"{stmt.name} = {_align(val, stmt.indices)}"


def _product_factors(node: Expr) -> list[Expr]:
    if isinstance(node, BinOp) and node.op == "*":
        return _product_factors(node.left) + _product_factors(node.right)
    return [node]


def forward_source(program: Program) -> list[str]:
    """The body lines of `Model.forward` for a parsed program."""
    emitter = _Emitter(program)
    lines = [emitter.statement(s) for s in program.statements]
    outs = [s.name for s in program.outputs]
    lines.append(f"return {outs[0]}" if len(outs) == 1 else f"return ({', '.join(outs)},)")
    return lines


def compile_program(program: Program, sizes: dict[str, int] | None = None, file: str = "spec.km",
                    source: str = "") -> str:
    """Python source of a KernelBench-format module for `program`; `sizes` override `dim` values."""
    values = {d.name: d.value for d in program.dims}
    values.update({k: v for k, v in (sizes or {}).items() if k in values})
    for decl in program.dims:
        if values[decl.name] is None:
            raise SpecError(f"size '{decl.name}' has no value (give `dim {decl.name} = N` or a reference constant)",
                            decl.line, 1, file, source)
    check_ranges(program, values, file, source)
    params = program.params
    sig = ", ".join(f"{p.name}={p.default!r}" if p.default is not None else p.name for p in params)
    out = ['"""Generated from a kernelmosaic math spec; edit the spec, not this file."""', "",
           "import torch", "import torch.nn as nn", ""]
    out += [f"{name} = {value!r}" for name, value in values.items()] + ["", "", "class Model(nn.Module):"]
    out += [f"    def __init__(self{', ' + sig if sig else ''}):", "        super().__init__()"]
    out += [f"        self.{p.name} = {p.name}" for p in params]
    out += ["", f"    def forward(self{''.join(', ' + i.name for i in program.inputs)}):"]
    out += ["        " + line for line in forward_source(program)] + ["", "", "def get_inputs():"]
    for decl in program.inputs:
        shape = "(" + "".join(f"{d}, " for d in decl.dims) + ")"
        dtype = DTYPES[decl.dtype]
        if dtype.startswith("float") or dtype == "bfloat16":
            out.append(f"    {decl.name} = torch.randn({shape}, dtype=torch.{dtype})")
        elif dtype == "bool":
            out.append(f"    {decl.name} = torch.rand({shape}) > 0.5")
        else:
            out.append(f"    {decl.name} = torch.randint(0, 8, {shape}, dtype=torch.{dtype})")
    out.append(f"    return [{', '.join(i.name for i in program.inputs)}]")
    missing = [p for p in params if p.default is None]
    out += ["", "", "def get_init_inputs():"]
    if missing:
        out.append(f"    raise ValueError('param {missing[0].name} has no default; pass it to Model')")
    else:
        out.append(f"    return [{', '.join(repr(p.default) for p in params)}]")
    return "\n".join(out) + "\n"


def compile_spec(source: str, sizes: dict[str, int] | None = None, file: str = "spec.km") -> str:
    """Parse, check and compile spec text into module source (raises `SpecError` with line and column)."""
    return compile_program(parse_spec(source, file), sizes, file, source)


def load_spec_module(source: str, sizes: dict[str, int] | None = None, file: str = "spec.km") -> types.ModuleType:
    """Compile a spec and import the result as a module (`.Model`, `.get_inputs`, `.get_init_inputs`).

    Safe to run in-process: the generated code only calls torch, and every name in it is a checked identifier
    from the spec (numbers are re-printed with repr), so spec text cannot inject code.
    """
    module = types.ModuleType(f"kernelmosaic_spec_{file.replace('/', '_').replace('.', '_')}")
    exec(compile(compile_spec(source, sizes, file), f"<{file}>", "exec"), module.__dict__)  # noqa: S102
    return module
