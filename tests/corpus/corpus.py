"""The honest-kernel corpus (tests/corpus/README.md): every candidate file under cpu/, cuda/ and hacks/ with the
header that says which problem it solves, on which device, and the verdict it must get.

A candidate starts with these comment lines (the fourth is optional):

    # corpus: problem=<problem-stem> device=<cpu|cuda> expect=<accepted|rejected> policy=<kernelbench|strict|both>
    # style: <the model-style patterns it exercises>
    # class: <comma list of issue-35 classes 1..8, or hack:<kind>>
    # status: <expected verdict status>

`load_corpus()` reads them all and raises `CorpusError` naming the file when a header is malformed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["CORPUS", "PROBLEMS", "CorpusCase", "CorpusError", "load_corpus", "parse_case", "policies"]

CORPUS = Path(__file__).resolve().parent
PROBLEMS = CORPUS / "problems"
CASE_FOLDERS = ("cpu", "cuda", "hacks")

Device = Literal["cpu", "cuda"]
Expect = Literal["accepted", "rejected"]
CasePolicy = Literal["kernelbench", "strict", "both"]

_HEADER = re.compile(
    r"# corpus: problem=(?P<problem>[A-Za-z0-9_]+) device=(?P<device>cpu|cuda) "
    r"expect=(?P<expect>accepted|rejected) policy=(?P<policy>kernelbench|strict|both)\s*$")
_STYLE = re.compile(r"# style: (?P<style>\S.*?)\s*$")
_CLASS = re.compile(r"# class: (?P<classes>\S.*?)\s*$")
_STATUS = re.compile(r"# status: (?P<status>[a-z_]+)\s*$")
_CLASS_ITEM = re.compile(r"[1-8]|hack:[a-z0-9_]+")


class CorpusError(ValueError):
    """A corpus file whose header or layout is malformed; the message names the file."""


@dataclass(frozen=True)
class CorpusCase:
    path: Path
    """The candidate file."""
    problem: Path
    """tests/corpus/problems/<problem-stem>.py (checked to exist)."""
    device: Device
    expect: Expect
    policy: CasePolicy
    style: str
    classes: tuple[str, ...]
    """Issue-35 classes ("1".."8") or one "hack:<kind>"."""
    status: str | None
    """The expected verdict status, where the header gives one (hacks)."""

    @property
    def id(self) -> str:
        """`<folder>/<stem>`: unique across the corpus, readable as a pytest id."""
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def is_hack(self) -> bool:
        return self.path.parent.name == "hacks"


def policies(case: CorpusCase) -> tuple[Literal["kernelbench", "strict"], ...]:
    """The verifier policies a case is judged under: both of them for `policy=both`."""
    return ("strict", "kernelbench") if case.policy == "both" else (case.policy,)


def parse_case(path: Path, problems: Path = PROBLEMS) -> CorpusCase:
    """The case that `path`'s header describes; `CorpusError` (naming `path`) when the header is malformed."""
    lines = path.read_text().splitlines()[:4]
    where = f"{path}: corpus header"
    if len(lines) < 3:
        raise CorpusError(f"{where}: the file has fewer than the 3 header lines")
    head, style, classes = (_HEADER.match(lines[0]), _STYLE.match(lines[1]), _CLASS.match(lines[2]))
    if head is None:
        raise CorpusError(f"{where}: line 1 must be '# corpus: problem=<stem> device=<cpu|cuda> "
                          f"expect=<accepted|rejected> policy=<kernelbench|strict|both>', got {lines[0]!r}")
    if style is None:
        raise CorpusError(f"{where}: line 2 must be '# style: <patterns>', got {lines[1]!r}")
    if classes is None:
        raise CorpusError(f"{where}: line 3 must be '# class: <1..8 list or hack:<kind>>', got {lines[2]!r}")
    items = tuple(c.strip() for c in classes["classes"].split(","))
    bad = [c for c in items if not _CLASS_ITEM.fullmatch(c)]
    if bad:
        raise CorpusError(f"{where}: line 3 has unknown classes {bad} (use 1..8 or hack:<kind>)")
    status = None
    if len(lines) > 3 and lines[3].startswith("# status:"):
        match = _STATUS.match(lines[3])
        if match is None:
            raise CorpusError(f"{where}: line 4 must be '# status: <verdict status>', got {lines[3]!r}")
        status = match["status"]
    folder = path.parent.name
    device, expect = head["device"], head["expect"]
    if folder in ("cpu", "cuda") and (device != folder or expect != "accepted"):
        raise CorpusError(f"{where}: a case in {folder}/ must say device={folder} expect=accepted")
    if folder == "hacks" and (expect != "rejected" or not all(c.startswith("hack:") for c in items)):
        raise CorpusError(f"{where}: a case in hacks/ must say expect=rejected and class: hack:<kind>")
    if folder != "hacks" and any(c.startswith("hack:") for c in items):
        raise CorpusError(f"{where}: hack:<kind> classes belong in hacks/")
    problem = problems / f"{head['problem']}.py"
    if not problem.is_file():
        raise CorpusError(f"{where}: problem {head['problem']!r} has no file {problem}")
    if not path.stem.startswith(head["problem"] + "__"):
        raise CorpusError(f"{where}: the file name must be <problem-stem>__<style>.py for problem {head['problem']!r}")
    return CorpusCase(path=path, problem=problem, device=device, expect=expect, policy=head["policy"],
                      style=style["style"], classes=items, status=status)


def load_corpus(root: Path = CORPUS) -> list[CorpusCase]:
    """Every case under root's cpu/, cuda/ and hacks/, in path order."""
    problems = root / "problems"
    return [parse_case(path, problems) for folder in CASE_FOLDERS
            for path in sorted((root / folder).glob("*.py")) if path.name != "__init__.py"]
