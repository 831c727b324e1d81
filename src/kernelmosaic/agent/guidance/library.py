"""Load the versioned guidance items (Markdown with TOML front matter) and retrieve them by category, status or query."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import ValidationError

from kernelmosaic.contracts.guidance import GuidanceItem

__all__ = ["GuidanceLibrary", "GuidanceError", "ITEMS_DIR"]

ITEMS_DIR = Path(__file__).parent / "items"


class GuidanceError(ValueError):
    """A guidance file is malformed; the message names the file."""


def _parse(path: Path) -> GuidanceItem:
    raw = path.read_text(encoding="utf-8")
    match = re.match(r"\+\+\+\n(.*?)\n\+\+\+\n(.*)", raw, re.S)
    if not match:
        raise GuidanceError(f"{path}: expected TOML front matter between '+++' lines, then the text")
    try:
        meta = tomllib.loads(match.group(1))
        item = GuidanceItem(**meta, text=match.group(2).strip())
    except (tomllib.TOMLDecodeError, ValidationError, TypeError) as exc:
        raise GuidanceError(f"{path}: {exc}") from exc
    lines = item.text.count("\n") + 1
    if not 5 <= lines <= 24:
        raise GuidanceError(f"{path}: text has {lines} lines; guidance items are 5-20 lines of advice")
    return item


class GuidanceLibrary:
    """All guidance items of one folder, with three retrieval paths: category, failure status and query."""

    def __init__(self, items: list[GuidanceItem]) -> None:
        self.items = {item.id: item for item in items}
        if len(self.items) != len(items):
            raise GuidanceError("duplicate guidance ids")

    @classmethod
    def load(cls, folder: Path = ITEMS_DIR) -> GuidanceLibrary:
        return cls([_parse(p) for p in sorted(Path(folder).glob("*.md"))])

    def _applicable(self, device: str, exclude: set[str]) -> list[GuidanceItem]:
        return [i for i in self.items.values() if device in i.applies_when.devices and i.id not in exclude]

    def for_category(self, category: str, device: str, exclude: set[str] = frozenset(), limit: int = 2) -> list[GuidanceItem]:
        """Items written for `category` or for every category (`*`), foundations first."""
        pool = self._applicable(device, set(exclude))
        # Foundations first (rank), then items written for fewer categories, being more specific.
        hits = [i for i in pool if category in i.applies_when.categories or "*" in i.applies_when.categories]
        return sorted(hits, key=lambda i: (i.rank, len(i.applies_when.categories)))[:limit]

    def for_status(self, status: str, device: str, exclude: set[str] = frozenset(), limit: int = 1) -> list[GuidanceItem]:
        pool = self._applicable(device, set(exclude))
        # Items that list fewer statuses are more specific to this failure.
        hits = sorted((i for i in pool if status in i.applies_when.statuses), key=lambda i: len(i.applies_when.statuses))
        return hits[:limit]

    def lookup(self, query: str, device: str, limit: int = 2) -> list[GuidanceItem]:
        """An exact id, or the items whose id, topic and keywords share the most words with `query`."""
        q = query.strip().lower()
        if q in self.items:
            return [self.items[q]]
        words = set(re.findall(r"[a-z0-9_+.]+", q))
        scored = []
        for item in self._applicable(device, set()) or list(self.items.values()):
            hay = " ".join([item.id.replace("-", " "), item.topic.lower(), " ".join(item.keywords).lower()])
            score = sum(2 if k.lower() in q else 0 for k in item.keywords) + sum(1 for w in words if w in hay)
            if score:
                scored.append((score, item.id, item))
        return [item for _, _, item in sorted(scored, key=lambda t: (-t[0], t[1]))[:limit]]

    def topics(self) -> str:
        return "\n".join(f"- {i.id}: {i.topic}" for i in sorted(self.items.values(), key=lambda i: i.id))
