"""Runs every static rule over one candidate and turns raw hits into policy-weighted Findings."""

from __future__ import annotations

import logging
import re

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify.static.cuda import check_extension
from kernelmosaic.verify.static.fastform import check_cupy, find_raw_sources
from kernelmosaic.verify.static.forward import check_forward
from kernelmosaic.verify.static.model_index import find_kernels
from kernelmosaic.verify.static.module_rules import check_module
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.precision import check_precision
from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.sources import find_extensions

__all__ = ["analyze_candidate"]

log = logging.getLogger(__name__)
# `-lcublas`, `-l:libcublas.so.12`, `/usr/lib/libcudnn.so`: any spelling that links a vendor library.
_VENDOR_LIBS = re.compile(r"cublas|cudnn|cufft|cusparse|cusolver|nvblas", re.IGNORECASE)


def analyze_candidate(source: str, filename: str = "candidate.py", policy: StaticPolicy | None = None) -> list[Finding]:
    """Static findings for one candidate module, most severe first; an empty list means nothing was seen."""
    policy = policy or StaticPolicy()
    try:
        idx = ModuleIndex.build(source, filename)
    except (SyntaxError, ValueError) as e:
        line = getattr(e, "lineno", 0) or 0
        return _findings([Hit("syntax-error", line, f"not valid Python: {getattr(e, 'msg', e)}",
                              (getattr(e, "text", "") or "").strip())], filename, policy)
    except (RecursionError, MemoryError) as e:
        return _findings([Hit("unanalyzable", 0, f"parsing gave up: {type(e).__name__}")], filename, policy)
    try:
        hits = _analyze(idx, policy)
    except (RecursionError, MemoryError) as e:
        hits = [Hit("unanalyzable", 0, f"the analysis gave up ({type(e).__name__}): nesting too deep")]
    except Exception as e:  # a bug here must not let a candidate through unexamined
        log.exception("static analysis of %s failed", filename)
        hits = [Hit("unanalyzable", 0, f"internal error in static analysis: {type(e).__name__}: {e}")]
    return _findings(hits, filename, policy)


def _analyze(idx: ModuleIndex, policy: StaticPolicy) -> list[Hit]:
    hits = check_module(idx, policy) + check_cupy(idx, policy.allow_streams)
    exts = find_extensions(idx) + find_raw_sources(idx)
    for ext in exts:
        line = ext.call.lineno
        for why in ext.opaque:
            hits.append(idx.hit("opaque-source", line, f"extension source not analyzable: {why}"))
        for flag in ext.flags:
            if _VENDOR_LIBS.search(flag):
                hits.append(idx.hit("vendor-library", line, f"links `{flag}`"))
        hits.extend(check_extension(ext, idx.filename, policy))
    hits.extend(check_forward(idx, find_kernels(idx, exts), len(exts), policy))
    hits.extend(check_precision(idx, exts))
    log.debug("static analysis of %s: %d raw hits", idx.filename, len(hits))
    return hits


def _findings(hits: list[Hit], filename: str, policy: StaticPolicy) -> list[Finding]:
    seen: set[tuple[str, int]] = set()
    out: list[Finding] = []
    for h in sorted(hits, key=lambda h: (h.line, h.rule)):
        action = policy.action(h.rule)
        if action == "allow" or (h.rule, h.line) in seen:
            continue
        seen.add((h.rule, h.line))
        out.append(Finding(rule=h.rule, severity=action, message=h.message,
                           evidence=f"{filename}:{h.line}: {h.snippet}"))
    return sorted(out, key=lambda f: f.severity != "reject")
