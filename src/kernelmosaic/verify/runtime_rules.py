"""Ids and one-line rationales of the findings the verifier's runtime checks produce (static rules live in
`verify.static.RULES`); `verify --explain` shows them."""

from __future__ import annotations

__all__ = ["RUNTIME_RULES"]

RUNTIME_RULES: dict[str, str] = {
    "runtime-integrity": "the candidate replaced a timer, sync, checker or RNG function, or flipped a numerics flag",
    "input-mutation": "writing into the inputs can make a later comparison or timed call see different data",
    "background-threads": "threads alive after forward do work the timer never sees",
    "no-custom-kernel": "every kernel that ran came from ATen/cuBLAS/cuDNN: the candidate wrapped the library",
    "library-kernels": "library kernels ran beside the custom ones; part of the speed is the library's",
    "timing-escaped-work": "the device kept working after the candidate's stream finished: side-stream work escapes the time",
    "timed-output-check": "a timed call returned a wrong result: cached, stale or unfinished work",
    "speed-of-light": "timed faster than the device's measured bandwidth and FLOP rate allow",
    "precision-downgrade": "further from a float64 reference than fp32 arithmetic allows: computed in lower precision",
    "sanitizer-memcheck": "compute-sanitizer found out-of-bounds or misaligned memory accesses",
    "sanitizer-racecheck": "compute-sanitizer found a shared-memory data race",
    "sanitizer-initcheck": "compute-sanitizer found reads of uninitialised device memory",
    "task-stochastic-reference": "the task's reference disagrees with itself: no candidate can match it reliably",
    "task-constant-output": "the task's output does not depend on its inputs",
    "task-zero-output-passes": "returning zeros passes this task: a verdict on it is weak evidence",
    "task-mean-output-passes": "returning a constant passes this task: a verdict on it is weak evidence",
    "task-identity-passes": "returning an input unchanged passes this task: a verdict on it is weak evidence",
    "task-inputs-one-distribution": "only the task's own input distribution keeps the reference finite",
}
