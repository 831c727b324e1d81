"""Distinct model-style candidates for `bench_throughput.py --cases corpus` (the default): the honest corpus of the
device (tests/corpus/cuda/ or cpu/, written the way models write KernelBench solutions), one case per distinct
extension source so that no two candidates share a build; the device's hacks (tests/corpus/hacks/: wrong results,
cheats); and compile errors made from honest cases (a line that is not C++ put after the first `#include` of the
extension's source).
Problems at KernelBench's largest sizes (inputs of 4-9 GB) are left out: their timing, not their builds, would
decide both harnesses' totals. On the CPU every problem runs at its small sizes (`tasks.shapes.small_shapes`, as the
CPU corpus test runs them), for both harnesses alike. `EXPECTED` says what our verifier should answer for each kind under `kernelbench`.

A module of bench_throughput.py; nothing runs on its own.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["EXPECTED", "write_corpus_cases"]

EXPECTED = {"honest": True, "hack": False, "compile_error": False}
BIG = re.compile(r"kb_l1_(004|005|009|02[0124]|03[78]|063|089|094|100)_")
"""The corpus's problems at KernelBench's current sizes whose inputs are 4-9 GB (scripts/gpu/corpus-gpu)."""
_TRIPLE = re.compile(r'(?s)("""|\'\'\')(.*?)\1')


def _extension_key(text: str) -> str:
    """The candidate's extension sources: every triple-quoted string with an `#include` (for a Triton candidate, with
    none, the whole file): candidates with equal keys share a build."""
    sources = [body for _, body in _TRIPLE.findall(text) if "#include" in body]
    return hashlib.sha256(("\n".join(sources) if sources else text).encode()).hexdigest()


def _broken(text: str) -> str | None:
    """`text` with a line that is not C++ after the first `#include` line of its extension source (None: no source)."""
    for _, body in _TRIPLE.findall(text):
        if "#include" in body:
            at = text.index(body) + body.index("#include")
            end = text.index("\n", at) + 1
            return text[:end] + "this line is not C++;\n" + text[end:]
    return None


def write_corpus_cases(root: Path, count: int, device: str = "cuda") -> list[tuple[str, Path, Path, str]]:
    """Up to `count` cases (id, problem, candidate, kind), honest ones first among every 8: 6 honest, 1 hack, 1
    compile error, while each lasts. Each candidate is copied under `root` as it is; its problem stays in place on
    CUDA and is written there at its small sizes on the CPU."""
    sys.path.insert(0, str(ROOT))  # the repository root, for the corpus's own reader
    from kernelmosaic.tasks.shapes import apply_shape_overrides, small_shapes
    from tests.corpus.corpus import load_corpus

    root.mkdir(parents=True, exist_ok=True)
    (root / "problems").mkdir(exist_ok=True)
    seen: set[str] = set()
    honest, hacks = [], []
    for case in load_corpus():
        if case.device != device or BIG.search(case.id) or case.policy not in ("kernelbench", "both"):
            continue
        text = case.path.read_text()
        key = _extension_key(text)
        if key in seen:
            continue
        seen.add(key)
        (hacks if case.is_hack else honest).append((case, text))
    broken = [(c, b) for c, t in honest[::5] if (b := _broken(t)) is not None]
    pools = {"honest": honest, "hack": hacks, "compile_error": broken}
    order = ["honest"] * 6 + ["hack", "compile_error"]
    cases: list[tuple[str, Path, Path, str]] = []
    k = 0
    while len(cases) < count and any(pools.values()):
        kind = order[k % len(order)]
        k += 1
        if not pools[kind]:
            continue
        case, text = pools[kind].pop(0)
        ident = f"{len(cases):03d}_{kind}_{case.path.stem}"
        path = root / f"{ident}.py"
        path.write_text(text)
        problem = case.problem
        if device == "cpu":
            problem = root / "problems" / case.problem.name
            source = case.problem.read_text()
            problem.write_text(apply_shape_overrides(source, small_shapes(source)))
        cases.append((ident, problem, path, kind))
    return cases


if __name__ == "__main__":  # a module: running it (with --help or not) shows what it is
    print(__doc__)
