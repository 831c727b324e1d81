"""Turn verifier results into the short text a model can act on (the full verdict is recorded separately)."""

from __future__ import annotations

import re

from kernelmosaic.contracts.verdict import KernelStat, Stat, Status, Verdict

__all__ = ["trim_compile_log", "test_feedback", "timing_feedback", "profile_feedback", "clip_lines", "short_paths"]

# gcc/clang `file:line:col: error:` and nvcc `file(line): error:`, plus linker and loader failures.
_ERROR = re.compile(
    r"(?P<loc>[^\s:()]+(?::\d+(?::\d+)?|\(\d+\))):\s*(?:fatal )?error\b|undefined (?:reference|symbol)|\bError\b.*:|ImportError|ninja: build stopped"
)
_NOISE = re.compile(r"^\s*(\[\d+/\d+\]|FAILED:|In file included from|\s*from /|ninja: |Emitting ninja|Building extension|Loading extension|Detected CUDA|Allowing ninja)")
_COMMAND = re.compile(r"^\s*(/\S*/)?(c\+\+|g\+\+|gcc|clang\+\+|nvcc|ld)\s")


def short_paths(line: str) -> str:
    # Build directories are long hashed paths; the model only needs the file name.
    return re.sub(r"(?:/[^\s/:()]+)+/([^\s/:()]+\.(?:cpp|cu|cuh|h|hpp|py|so|o))", r"\1", line)


def clip_lines(text: str, max_lines: int) -> str:
    lines = text.strip("\n").splitlines()
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join(lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"])


def trim_compile_log(log: str, max_errors: int = 5, max_lines: int = 30, shown: str = "") -> str:
    """The first compiler errors with `file:line`, each with the source line and caret that follow it.

    Lines already in `shown` (the verdict's message, usually quoting the first error) are not repeated.
    """
    shown = short_paths(shown)
    lines = [ln for ln in log.splitlines() if ln.strip() and not _NOISE.match(ln) and not _COMMAND.match(ln)]
    picked: list[str] = []
    errors = 0
    i = 0
    while i < len(lines) and errors < max_errors:
        if _ERROR.search(lines[i]):
            errors += 1
            line = short_paths(lines[i].strip())
            if line not in shown:
                picked.append(line)
            # gcc prints the offending line and a caret right after the error; keep those, not the notes.
            for follow in lines[i + 1 : i + 3]:
                if _ERROR.search(follow) or "note:" in follow or "warning:" in follow:
                    break
                picked.append(short_paths(follow.rstrip()))
            i += 1
            continue
        i += 1
    if not picked:
        picked = [short_paths(ln) for ln in lines[-max_lines:]]
    return clip_lines("\n".join(picked), max_lines)


def _num(x: float) -> str:
    return f"{float(x):.3g}"


def test_feedback(v: Verdict, max_lines: int = 30) -> str:
    """Status, message, trials, errors, first mismatch and findings of a correctness verdict."""
    out = [f"{'PASSED' if v.accepted else 'FAILED'} ({v.status.value}): {short_paths(v.message)}"]
    c = v.correctness
    if c.trials:
        out.append(
            f"correctness: {c.passed}/{c.trials} trials passed; max abs error {_num(c.max_abs_error)}, "
            f"max rel error {_num(c.max_rel_error)} (atol {_num(c.atol)}, rtol {_num(c.rtol)})"
        )
    if c.detail:
        out.append(f"first mismatch: {c.detail}")
    for f in v.findings:
        evidence = f" [{f.evidence}]" if f.evidence else ""
        out.append(f"finding {f.severity} {f.rule}: {f.message}{evidence}")
    if v.status == Status.compile_error:
        out.append(trim_compile_log(v.compile.log, max_lines=max_lines, shown=out[0]))
    elif not v.accepted and v.candidate_output_tail:
        out.append("candidate output (last lines):\n" + "\n".join(v.candidate_output_tail.strip().splitlines()[-8:]))
    return clip_lines("\n".join(out), max_lines)


def _stat(s: Stat) -> str:
    return f"{s.median_ms:.4g} ms (q1 {s.q1_ms:.4g}, q3 {s.q3_ms:.4g}, n={s.samples})"


def timing_feedback(v: Verdict, roofline: str = "") -> str:
    """Medians and speedups of a timed verdict, plus how close the kernel runs to the device's peaks."""
    t = v.timing
    if t is None:
        return "no timing was measured"
    out = [f"candidate: {_stat(t.candidate)}", f"eager:     {_stat(t.eager)}"]
    if t.compile is not None:
        out.append(f"compile:   {_stat(t.compile)}")
    elif t.compile_baseline_error:
        out.append(f"torch.compile baseline unavailable: {t.compile_baseline_error[:200]}")
    speed = f"speedup vs eager {t.speedup_vs_eager:.3g}x"
    if t.speedup_vs_compile is not None:
        speed += f", vs torch.compile {t.speedup_vs_compile:.3g}x"
    out.append(speed + f" (device time; timer: {t.timer})")
    if t.candidate_host is not None and t.speedup_vs_eager_host is not None:
        host = f"host-inclusive call time: {_stat(t.candidate_host)}; speedup vs eager {t.speedup_vs_eager_host:.3g}x"
        if t.speedup_vs_compile_host is not None:
            host += f", vs torch.compile {t.speedup_vs_compile_host:.3g}x"
        out.append(host)
    if t.speedup_vs_eager_wall is not None:
        out.append(f"by the verifier's own clock (back-to-back calls): speedup vs eager {t.speedup_vs_eager_wall:.3g}x")
    if roofline:
        out.append(roofline)
    return "\n".join(out)


def profile_feedback(kernels: list[KernelStat], ncu: dict[str, dict[str, float]], message: str, top: int = 10) -> str:
    """Kernel table (custom kernels marked) and a digest of Nsight Compute metrics where available."""
    out = [message] if message else []
    if kernels:
        total = sum(k.total_ms for k in kernels) or 1.0
        out.append("kernels by total time (* = yours):")
        for k in sorted(kernels, key=lambda k: -k.total_ms)[:top]:
            mark = "*" if k.custom else " "
            out.append(f" {mark} {k.total_ms:9.4f} ms {100 * k.total_ms / total:5.1f}% x{k.calls:<5d} {k.name[:90]}")
        if not any(k.custom for k in kernels):
            out.append("no custom kernel ran: the forward pass must launch your own kernels")
    for name, metrics in list(ncu.items())[:3]:
        digest = ", ".join(f"{m}={val:.3g}" for m, val in list(metrics.items())[:8])
        out.append(f"ncu {name[:60]}: {digest}")
    if not ncu:
        out.append("(no Nsight Compute metrics on this machine)")
    return "\n".join(out)
