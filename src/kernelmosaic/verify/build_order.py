"""Which compiles of a batch go first: the build that most candidates wait on.

Candidates often share a build: an agent's candidates that change only their Python, samples of one model that came
out the same, a benchmark's variants of one kernel. The first of them builds and the others wait on its lock, so that
one build is the batch's critical path. On the H200 the shared build of 8 of 32 candidates took 62-74 s of
`load_inline` on a host saturated by the other builds, the judgements and the workers' start, against ~30 s alone,
and every verdict after it waited on it. So `run_lookahead` starts the candidates of the most shared build first, and
every other compile runs at a higher niceness (`compile_nice`): the critical build gets the cores it can use, the
others the rest. Niceness only moves CPU time between runnable processes; an idle core still runs whatever is there.

Only the first candidate of a shared build compiles at once; the others follow it (`Start.after`): they take no
compile place and start no worker of their own at normal priority while it builds, and compile (a cache hit in the
build folder) when it is done. A follower's worker started at normal priority would compete with the build: on the
H200, with every candidate of the shared build starting one, ~30 processes importing torch side by side held the
build's own worker ~10 s before `load_inline` began.

The share is read statically, from the `load_inline` calls' names, sources and flags (`static.sources`): a build
that cannot be read (an opaque source, a file-based `load`) counts as its own. A follower whose build turns out to
differ after all (its Python changes the build's environment) builds it itself once its leader is done: the order
changes, never the result.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["Start", "build_signature", "compile_plan"]


class Start(NamedTuple):
    """One candidate's place in the batch's compile order."""

    index: int
    """The candidate's index in the batch."""
    nice: int
    """CPU niceness of its compile workers."""
    after: int | None = None
    """The candidate whose compile builds this one's extensions (the batch's first with the same build), which this
    one waits for; None: it compiles at once."""


def build_signature(source: str | None) -> str | None:
    """A hash of the candidate's `load_inline` calls (name, sources, functions, flags) as read statically; "" when it
    has none (nothing to build), None when any part cannot be read or the module does not parse."""
    if source is None:
        return None
    if "load_inline" not in source and "cpp_extension" not in source:
        return ""
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


def compile_plan(sources: Sequence[str | None], nice: int) -> list[Start]:
    """Every source's `Start`, in the order to start them: the candidates of the builds most of them share first,
    then every other candidate, each group in the batch's order. The first candidate of each most shared build
    compiles at niceness 0, every other at `nice`; each later candidate of a shared build follows its first. When no
    build is shared (or `nice` is 0): all at 0, in the batch's order (shared builds are still followed)."""
    keys = [build_signature(s) for s in sources]
    counts = Counter(k for k in keys if k)
    top = max(counts.values(), default=0)
    leading = {k for k, n in counts.items() if n == top} if top >= 2 and nice > 0 else set()
    order = [i for i, k in enumerate(keys) if k in leading] + [i for i, k in enumerate(keys) if k not in leading]
    first: dict[str, int] = {}
    plan = []
    for i in order:
        key = keys[i]
        lead = first.setdefault(key, i) if key and counts[key] >= 2 else i
        critical = key in leading and lead == i
        plan.append(Start(i, 0 if critical or not leading else nice, None if lead == i else lead))
    return plan
