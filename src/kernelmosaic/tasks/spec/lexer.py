"""Tokens of the math-spec language; every token knows its line and column for error messages."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Token", "SpecError", "tokenize"]

_OPERATORS = ("**", "<=", ">=", "==", "!=", "+", "-", "*", "/", "<", ">", "=", "(", ")", "[", "]", ",", ":")


class SpecError(ValueError):
    """A spec problem at a position; `str()` reads `file:line:col: message` followed by the line and a caret."""

    def __init__(self, message: str, line: int, col: int, file: str = "spec.km", source: str = "") -> None:
        self.message, self.line, self.col, self.file = message, line, col, file
        text = f"{file}:{line}:{col}: {message}"
        lines = source.splitlines()
        if source and 1 <= line <= len(lines):
            text += f"\n    {lines[line - 1]}\n    {' ' * (col - 1)}^"
        super().__init__(text)


@dataclass(frozen=True)
class Token:
    kind: str
    """`name`, `number`, `op`, `newline` or `eof`."""
    text: str
    line: int
    col: int


def tokenize(source: str, file: str = "spec.km") -> list[Token]:
    """Split `source` into tokens; newlines inside () or [] are ignored so long expressions may wrap."""
    tokens: list[Token] = []
    depth = 0
    for lineno, line in enumerate(source.splitlines(), start=1):
        i = 0
        while i < len(line):
            ch = line[i]
            col = i + 1
            if ch == "#":
                break
            if ch in " \t\r":
                i += 1
                continue
            if ch.isalpha() or ch == "_":
                j = i
                while j < len(line) and (line[j].isalnum() or line[j] == "_"):
                    j += 1
                tokens.append(Token("name", line[i:j], lineno, col))
                i = j
                continue
            if ch.isdigit() or (ch == "." and i + 1 < len(line) and line[i + 1].isdigit()):
                j = i
                while j < len(line) and (line[j].isdigit() or line[j] == "."):
                    j += 1
                if j < len(line) and line[j] in "eE":
                    k = j + 1
                    if k < len(line) and line[k] in "+-":
                        k += 1
                    if k < len(line) and line[k].isdigit():
                        j = k
                        while j < len(line) and line[j].isdigit():
                            j += 1
                text = line[i:j]
                if text.count(".") > 1:
                    raise SpecError(f"malformed number '{text}'", lineno, col, file, source)
                tokens.append(Token("number", text, lineno, col))
                i = j
                continue
            for op in _OPERATORS:
                if line.startswith(op, i):
                    depth += op in "([" and 1 or 0
                    depth -= op in ")]" and 1 or 0
                    depth = max(depth, 0)
                    tokens.append(Token("op", op, lineno, col))
                    i += len(op)
                    break
            else:
                raise SpecError(f"unexpected character '{ch}'", lineno, col, file, source)
        if depth == 0 and tokens and tokens[-1].kind != "newline":
            tokens.append(Token("newline", "", lineno, len(line) + 1))
    last = len(source.splitlines()) or 1
    tokens.append(Token("eof", "", last + 1 if tokens else 1, 1))
    return tokens
