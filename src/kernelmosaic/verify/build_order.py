"""Which compiles of a batch go first: the build that most candidates wait on.

Candidates often share a build: an agent's candidates that change only their Python, samples of one model that came
out the same, a benchmark's variants of one kernel. The first of them builds and the others wait on its lock, so that
one build is the batch's critical path. On the H200 the shared build of 8 of 32 candidates took 62-74 s of
`load_inline` on a host saturated by the other builds, the judgements and the workers' start, against ~30 s alone,
and every verdict after it waited on it. So `run_lookahead` starts the candidates of the most shared build first, and
every other compile runs at a higher niceness (`compile_nice`): the critical build gets the cores it can use, the
others the rest. Niceness only moves CPU time between runnable processes; an idle core still runs whatever is there.

The share is read statically, from the `load_inline` calls' names, sources and flags (`static.sources`): a build
that cannot be read (an opaque source, a file-based `load`) counts as its own.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

__all__ = ["build_signature", "compile_plan"]


def build_signature(source: str | None) -> str | None:
    """A hash of the candidate's `load_inline` calls (name, sources, functions, flags) as read statically; "" when it
    has none (nothing to build), None when any part cannot be read or the module does not parse."""
    if source is None or "load_inline" not in source and "cpp_extension" not in source:
        return None if source is None else ""
    from kernelmosaic.verify.static.pyscope import ModuleIndex
    from kernelmosaic.verify.static.sources import find_extensions

    try:
        exts = find_extensions(ModuleIndex.build(source, "candidate.py"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if any(e.opaque or not e.name for e in exts):
        return None
    if not exts:
        return ""
    parts = sorted(json.dumps([e.name, e.cpp.text, e.cuda.text, e.functions, e.flags]) for e in exts)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def compile_plan(sources: Sequence[str | None], nice: int) -> list[tuple[int, int]]:
    """(index, compile niceness) for every source, in the order to start them: the candidates of the builds most of
    them share first, at niceness 0, then every other candidate at `nice`, each group in the batch's order. When no
    build is shared (or `nice` is 0): all at 0, in the batch's order."""
    keys = [build_signature(s) for s in sources]
    counts = Counter(k for k in keys if k)
    top = max(counts.values(), default=0)
    if top < 2 or nice <= 0:
        return [(i, 0) for i in range(len(sources))]
    first = [i for i, k in enumerate(keys) if k and counts[k] == top]
    return [(i, 0) for i in first] + [(i, nice) for i, k in enumerate(keys) if not (k and counts[k] == top)]
