"""Python source parsed in this process: `ast.parse` and `symtable.symtable`, one call at a time.

CPython 3.11 (before 3.11.8) keeps the AST converter's recursion depth in state shared by every thread; a garbage
collection during one thread's conversion can run another thread's, and the first then fails with
`SystemError: AST constructor recursion depth mismatch`. `evaluate --concurrency`, `verify-batch` and the service
judge in threads of one process, each parsing problems and candidates: in CI, 8 threads deriving one problem's
sizes at once failed this way (tests/verify/test_size_check.py). Every parse of the trusted process goes through
here; a lock costs nothing next to a judgement.
"""

from __future__ import annotations

import ast
import symtable
import threading

__all__ = ["parse", "symbols"]

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename=filename)


def symbols(source: str, filename: str = "<unknown>") -> symtable.SymbolTable:
    with _LOCK:
        return symtable.symtable(source, filename, "exec")
