"""Loads the static-analysis fixture candidates and the expectations written in their header comments.

Each fixture starts with `# expect: rule severity[, rule severity...]` (or `# expect: nothing`) and may
carry `# policy: {json}` for a non-default StaticPolicy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "static"


@dataclass(frozen=True)
class Fixture:
    path: Path
    expected: frozenset[tuple[str, str]]
    policy: dict

    @property
    def source(self) -> str:
        return self.path.read_text()


def load(path: Path) -> Fixture:
    text = path.read_text()
    m = re.search(r"^# expect: (.+)$", text, re.M)
    if not m:
        raise ValueError(f"{path.name}: missing '# expect:' header")
    expected = set()
    if m.group(1).strip() != "nothing":
        for part in m.group(1).split(","):
            rule, severity = part.split()
            expected.add((rule, severity))
    p = re.search(r"^# policy: (.+)$", text, re.M)
    return Fixture(path, frozenset(expected), json.loads(p.group(1)) if p else {})


__all__ = ["FIXTURES", "Fixture", "load", "all_fixtures"]


def all_fixtures() -> list[Fixture]:
    return [load(p) for p in sorted(FIXTURES.glob("*.py"))]
