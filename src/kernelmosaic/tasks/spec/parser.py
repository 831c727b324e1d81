"""Parser and checker of the math-spec language: text -> `Program`, or a `SpecError` at line and column.

Names are resolved while parsing (declarations come first), so every semantic error can point at a token.
"""

from __future__ import annotations

import keyword

from kernelmosaic.tasks.spec.lexer import SpecError, Token, tokenize
from kernelmosaic.tasks.spec.nodes import (
    DTYPES,
    Access,
    Assign,
    BinOp,
    Call,
    DimDecl,
    Expr,
    InputDecl,
    Num,
    Param,
    ParamDecl,
    Program,
    Reduce,
    Unary,
)

__all__ = ["parse_spec", "FUNCTIONS", "REDUCTIONS"]

# Function name -> number of arguments.
FUNCTIONS = {"exp": 1, "log": 1, "tanh": 1, "sigmoid": 1, "relu": 1, "abs": 1, "sqrt": 1, "rsqrt": 1, "sin": 1,
             "cos": 1, "erf": 1, "gelu": 1, "softplus": 1, "max": 2, "min": 2, "where": 3, "pow": 2, "clamp": 3}
REDUCTIONS = ("sum", "max", "min", "mean")
_RESERVED = {"self", "torch", "nn", "F", "Model", "get_inputs", "get_init_inputs",
             *FUNCTIONS, *REDUCTIONS}
_COMPARE = ("<", "<=", ">", ">=", "==", "!=")


class _Parser:
    def __init__(self, source: str, file: str) -> None:
        self.source, self.file = source, file
        self.tokens = tokenize(source, file)
        self.pos = 0
        self.program = Program()
        self.sizes: set[str] = set()
        self.params: dict[str, ParamDecl] = {}
        self.tensors: dict[str, int] = {}  # name -> rank, for inputs, lets and outputs
        self.bound: list[str] = []  # index variables in scope (left side, then enclosing reductions)
        self.used: set[str] = set()

    # -- token helpers -------------------------------------------------------------------------
    def error(self, message: str, tok: Token | None = None) -> SpecError:
        tok = tok or self.peek()
        return SpecError(message, tok.line, tok.col, self.file, self.source)

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind in ("op", "name") and tok.text == text

    def expect(self, text: str, what: str = "") -> Token:
        if not self.at(text):
            tok = self.peek()
            found = tok.text or tok.kind
            raise self.error(f"expected '{text}'{what}, found '{found}'")
        return self.next()

    def name(self, what: str) -> Token:
        tok = self.peek()
        if tok.kind != "name":
            raise self.error(f"expected {what}, found '{tok.text or tok.kind}'")
        return self.next()

    def new_name(self, what: str) -> Token:
        tok = self.name(what)
        if keyword.iskeyword(tok.text) or tok.text in _RESERVED:
            raise self.error(f"'{tok.text}' is reserved and cannot name a {what}", tok)
        if tok.text in self.sizes or tok.text in self.params or tok.text in self.tensors:
            raise self.error(f"'{tok.text}' is already declared", tok)
        return tok

    def end_of_statement(self) -> None:
        if self.peek().kind not in ("newline", "eof"):
            raise self.error(f"unexpected '{self.peek().text}' after the end of the statement")
        if self.peek().kind == "newline":
            self.next()

    # -- statements ----------------------------------------------------------------------------
    def parse(self) -> Program:
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.kind != "name" or tok.text not in ("dim", "input", "param", "let", "output"):
                raise self.error(f"a statement starts with dim, input, param, let or output, not '{tok.text}'")
            getattr(self, f"stmt_{tok.text}")(self.next())
            self.end_of_statement()
        if not self.program.outputs:
            raise self.error("the spec declares no output")
        return self.program

    def stmt_dim(self, kw: Token) -> None:
        while True:
            tok = self.new_name("size")
            value = None
            if self.at("="):
                self.next()
                num = self.next()
                if num.kind != "number" or not num.text.isdigit():
                    raise self.error("a size value must be a non-negative integer", num)
                value = int(num.text)
            self.sizes.add(tok.text)
            self.program.dims.append(DimDecl(tok.text, value, tok.line))
            if not self.at(","):
                return
            self.next()

    def dtype(self) -> str:
        tok = self.name("a dtype")
        if tok.text not in DTYPES:
            raise self.error(f"unknown dtype '{tok.text}' (known: {', '.join(DTYPES)})", tok)
        return tok.text

    def stmt_input(self, kw: Token) -> None:
        tok = self.new_name("input")
        self.expect(":", " after the input name")
        dtype = self.dtype()
        dims: list[str | int] = []
        if self.at("["):
            self.next()
            while True:
                d = self.next()
                if d.kind == "number" and d.text.isdigit():
                    dims.append(int(d.text))
                elif d.kind == "name" and d.text in self.sizes:
                    dims.append(d.text)
                elif d.kind == "name":
                    raise self.error(f"size '{d.text}' is not declared (add it to a 'dim' line)", d)
                else:
                    raise self.error("a dimension is a declared size name or an integer", d)
                if self.at("]"):
                    self.next()
                    break
                self.expect(",", " or ']' in the shape")
        self.tensors[tok.text] = len(dims)
        self.program.inputs.append(InputDecl(tok.text, dtype, tuple(dims), tok.line))

    def stmt_param(self, kw: Token) -> None:
        tok = self.new_name("param")
        self.expect(":", " after the param name")
        dtype = self.dtype()
        default = None
        if self.at("="):
            self.next()
            sign = -1 if self.at("-") and self.next() else 1
            num = self.next()
            if num.kind != "number":
                raise self.error("a param default is a number", num)
            default = sign * _number(num.text)
        decl = ParamDecl(tok.text, dtype, default, tok.line)
        self.params[tok.text] = decl
        self.program.params.append(decl)

    def stmt_let(self, kw: Token) -> None:
        self.assignment(kw.text)

    stmt_output = stmt_let

    def assignment(self, kind: str) -> None:
        tok = self.new_name("tensor")
        indices: list[str] = []
        if self.at("["):
            self.next()
            while True:
                var = self.name("an index variable")
                if var.text in indices:
                    raise self.error(f"index '{var.text}' appears twice on the left side", var)
                if var.text in self.sizes or var.text in self.params or var.text in self.tensors:
                    raise self.error(f"index '{var.text}' shadows a declared name", var)
                indices.append(var.text)
                if self.at("]"):
                    self.next()
                    break
                self.expect(",", " or ']' after an index")
        self.expect("=", " in the assignment")
        self.bound, self.used = list(indices), set()
        expr = self.expression()
        for var in indices:
            if var not in self.used:
                raise self.error(f"index '{var}' on the left side does not appear on the right side, "
                                 "so its range is unknown", tok)
        self.tensors[tok.text] = len(indices)
        self.program.statements.append(Assign(kind, tok.text, tuple(indices), expr, tok.line))

    # -- expressions ---------------------------------------------------------------------------
    def expression(self) -> Expr:
        left = self.additive()
        if self.peek().kind == "op" and self.peek().text in _COMPARE:
            op = self.next()
            left = BinOp(op.text, left, self.additive(), op.line, op.col)
        return left

    def additive(self) -> Expr:
        left = self.term()
        while self.at("+") or self.at("-"):
            op = self.next()
            left = BinOp(op.text, left, self.term(), op.line, op.col)
        return left

    def term(self) -> Expr:
        left = self.unary()
        while self.at("*") or self.at("/"):
            op = self.next()
            left = BinOp(op.text, left, self.unary(), op.line, op.col)
        return left

    def unary(self) -> Expr:
        if self.at("-"):
            op = self.next()
            return Unary("-", self.unary(), op.line, op.col)
        base = self.primary()
        if self.at("**"):
            op = self.next()
            return BinOp("**", base, self.unary(), op.line, op.col)
        return base

    def primary(self) -> Expr:
        tok = self.next()
        if tok.kind == "number":
            return Num(_number(tok.text), tok.line, tok.col)
        if tok.kind == "op" and tok.text == "(":
            inner = self.expression()
            self.expect(")", " to close '('")
            return inner
        if tok.kind != "name":
            raise self.error(f"expected a value, found '{tok.text or tok.kind}'", tok)
        if self.at("("):
            return self.call(tok)
        if self.at("["):
            return self.access(tok)
        return self.bare_name(tok)

    def bare_name(self, tok: Token) -> Expr:
        if tok.text in self.params:
            return Param(tok.text, tok.line, tok.col)
        if tok.text in self.tensors:
            if self.tensors[tok.text]:
                raise self.error(f"'{tok.text}' has {self.tensors[tok.text]} dimension(s) and needs indices", tok)
            return Access(tok.text, (), tok.line, tok.col)
        if tok.text in self.bound:
            raise self.error(f"index variable '{tok.text}' cannot be used as a value", tok)
        if tok.text in self.sizes:
            raise self.error(f"size '{tok.text}' cannot be used as a value", tok)
        raise self.error(f"unknown name '{tok.text}'", tok)

    def access(self, tok: Token) -> Access:
        if tok.text not in self.tensors:
            raise self.error(f"'{tok.text}' is not a declared input or tensor", tok)
        self.expect("[")
        indices: list[str | int] = []
        while True:
            idx = self.next()
            if idx.kind == "number" and idx.text == "0":
                indices.append(0)
            elif idx.kind == "name" and idx.text in self.bound:
                if idx.text in indices:
                    raise self.error(f"index '{idx.text}' repeats within one access", idx)
                indices.append(idx.text)
                self.used.add(idx.text)
            elif idx.kind == "name":
                raise self.error(f"index '{idx.text}' is neither on the left side nor bound by an enclosing "
                                 "reduction", idx)
            else:
                raise self.error("an index is a variable or the literal 0 (no arithmetic on indices)", idx)
            if self.at("]"):
                self.next()
                break
            self.expect(",", " or ']' after an index")
        rank = self.tensors[tok.text]
        if len(indices) != rank:
            raise self.error(f"'{tok.text}' has {rank} dimension(s) but is indexed with {len(indices)}", tok)
        return Access(tok.text, tuple(indices), tok.line, tok.col)

    def call(self, tok: Token) -> Expr:
        func = tok.text
        if func in REDUCTIONS and self._is_reduction(func):
            return self.reduction(tok)
        if func not in FUNCTIONS:
            raise self.error(f"unknown function '{func}'", tok)
        self.expect("(")
        args = [self.expression()]
        while self.at(","):
            self.next()
            args.append(self.expression())
        self.expect(")", f" to close {func}(")
        if len(args) != FUNCTIONS[func]:
            raise self.error(f"{func}() takes {FUNCTIONS[func]} argument(s), got {len(args)}", tok)
        return Call(func, tuple(args), tok.line, tok.col)

    def _is_reduction(self, func: str) -> bool:
        # sum/mean always reduce; max/min reduce when their first argument is a fresh variable name.
        first, after = self.peek(1), self.peek(2)
        if func in ("sum", "mean"):
            return True
        return (first.kind == "name" and after.text == "," and first.text not in self.params
                and first.text not in self.tensors and first.text not in FUNCTIONS)

    def reduction(self, tok: Token) -> Reduce:
        self.expect("(")
        variables: list[Token] = []
        while self.peek().kind == "name" and self.peek(1).text == ",":
            var = self.peek()
            if var.text in self.bound:
                raise self.error(f"reduction index '{var.text}' is already bound", var)
            if var.text in self.sizes or var.text in self.params or var.text in self.tensors:
                raise self.error(f"reduction index '{var.text}' shadows a declared name", var)
            variables.append(self.next())
            self.next()
        if not variables:
            raise self.error(f"{tok.text}(k, expr) needs at least one index variable before the expression")
        outer_bound, outer_used = self.bound, self.used
        self.bound, self.used = outer_bound + [v.text for v in variables], set()
        body = self.expression()
        self.expect(")", f" to close {tok.text}(")
        for var in variables:
            if var.text not in self.used:
                raise self.error(f"reduction index '{var.text}' is not used in its body, so its range is unknown", var)
        self.bound, self.used = outer_bound, outer_used | (self.used - {v.text for v in variables})
        return Reduce(tok.text, tuple(v.text for v in variables), body, tok.line, tok.col)


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def parse_spec(source: str, file: str = "spec.km") -> Program:
    """Parse and check a spec; raises `SpecError` naming file, line and column."""
    return _Parser(source, file).parse()
