"""A verification's input files as content, so a job can run on any node: each side writes them into its own build
cache under their content hash (the same bytes, the same path, on every node) and judges those copies."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kernelmosaic.verify.requests import Alternative, read_input

__all__ = ["Sources", "read_sources"]


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    text: str

    def place(self, root: Path) -> Path:
        """The file under `root/<sha>/<name>`, written once (atomically: two jobs may place it at once)."""
        digest = hashlib.sha256(self.text.encode()).hexdigest()[:20]
        path = Path(root) / digest / self.name
        if not path.is_file() or path.read_text(encoding="utf-8") != self.text:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{self.name}.{os.getpid()}.{secrets.token_hex(4)}")
            tmp.write_text(self.text, encoding="utf-8")
            tmp.replace(path)
        return path


class Sources(BaseModel):
    """One job's problem, candidate and alternative problems (label -> source)."""

    model_config = ConfigDict(extra="forbid")
    problem: Source
    candidate: Source
    alternatives: list[tuple[str, Source]] = []

    def place(self, cache_dir: Path) -> tuple[Path, Path, list[Alternative]]:
        root = Path(cache_dir) / "ray-inputs"
        return (self.problem.place(root), self.candidate.place(root),
                [Alternative(label=label, problem=src.place(root)) for label, src in self.alternatives])


def _read(path: Path, what: str) -> Source:
    return Source(name=Path(path).name, text=read_input(path, what))


def read_sources(problem: Path, candidate: Path, alternatives: list[Alternative] = ()) -> Sources:
    """Read the files where the caller sees them (an unreadable one is an `InputError`, as in the local verifier)."""
    return Sources(problem=_read(problem, "problem"), candidate=_read(candidate, "candidate"),
                   alternatives=[(a.label, _read(a.problem, f"alternative {a.label!r}")) for a in alternatives])
