"""Content hashes that ignore formatting: a reformatted reference keeps its hash, an edited one does not."""

from __future__ import annotations

import hashlib
import io
import re
import tokenize

__all__ = ["source_hash", "text_hash", "strip_python"]

_WS = re.compile(r"\s+")


def strip_python(source: str) -> str:
    """Python source without comments and without any whitespace (falls back to a plain strip if it doesn't tokenize)."""
    try:
        tokens = [
            tok.string
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        ]
        return _WS.sub("", "".join(tokens))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _WS.sub("", source)


def source_hash(source: str, comment: str = "python") -> str:
    """sha256 of `source` with comments and whitespace removed; `comment="#"` strips `#` line comments textually."""
    if comment == "python":
        body = strip_python(source)
    else:
        body = _WS.sub("", "\n".join(line.split(comment, 1)[0] for line in source.splitlines()))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    """sha256 of prose with runs of whitespace collapsed."""
    return hashlib.sha256(_WS.sub(" ", text).strip().encode("utf-8")).hexdigest()
