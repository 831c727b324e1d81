"""Ids and one-line rationales of the findings the verifier's runtime checks produce (static rules live in
`verify.static.RULES`, rules about the task itself in `verify.task_rules.TASK_RULES`); `verify --explain` shows
them."""

from __future__ import annotations

__all__ = ["RUNTIME_RULES"]

RUNTIME_RULES: dict[str, str] = {
    "runtime-integrity": "the candidate replaced a timer, sync, checker or RNG function, or flipped a numerics flag",
    "harness-got": "a GOT slot of a library the worker loaded before the candidate, or the machine code of the loader, "
                   "libc, the interpreter or the CUDA runtime, was rewritten (read by the verifier's process from "
                   "outside the worker): a clock, timer or reply call redirected into the candidate's code",
    "got-unwatched": "the candidate worker's memory could not be read from the verifier's process, so the GOT watch "
                     "did not run",
    "output-aliasing": "forward returned the memory it had returned on the previous call: the earlier result a caller "
                       "holds is overwritten (a module-held output buffer)",
    "input-mutation": "writing into the inputs can make a later comparison or timed call see different data",
    "background-threads": "threads alive after forward do work the timer never sees",
    "candidate-processes": "the candidate's worker had processes of its own while its baselines were timed (they were "
                           "stopped with it)",
    "no-custom-kernel": "every kernel that ran came from ATen/cuBLAS/cuDNN/CuPy: the candidate wrapped the library",
    "library-kernels": "library kernels ran beside the custom ones; part of the speed is the library's",
    "timing-escaped-work": "the device kept working after the candidate's stream finished: side-stream work escapes the time",
    "timed-output-check": "a timed call returned a wrong result: cached, stale or unfinished work",
    "candidate-reported-inputs": "a timed call's inputs, as the candidate's worker reports them, are not the ones it "
                                 "was given (forward rebound `x.data`, resized an input, or the reply misreports its "
                                 "seeds): the reference would judge other data",
    "timed-output-fingerprint": "a timed call, chosen after the round, did not return its own inputs' result: skipped, "
                                "stale or cached work on some calls",
    "burst-output-fingerprint": "a call picked from a wall-clock burst did not return its own inputs' result: a memo, "
                                "skipped or deferred work once the calls come back to back",
    "stale-buffer-check": "new values written in place into the same input buffers gave the old output: a cache keyed "
                          "on buffer identity",
    "timing-reply": "a timing reply from the candidate's process held a number its timer never sends (not finite, "
                    "negative, missing or of another type)",
    "worker-reply": "a reply from the candidate's process (its load, trials, outputs, probes, census or peak memory) "
                    "was not what the worker sends: a field missing, of another type, or answering for fewer trials",
    "timing-wall-clock": "the verifier's own clock saw the calls take far longer than the worker reported",
    "speed-of-light": "timed faster than the device's measured bandwidth allows for the bytes every implementation moves",
    "speed-of-light-flops": "timed faster than the reference's FLOPs allow at the device's peak (a flag: the candidate "
                            "may exploit structure the reference ignores)",
    "speed-of-light-unchecked": "the device's peaks could not be measured, so the speed-of-light check did not run",
    "kernel-output-unused": "noise in place of a custom kernel's output left the result within tolerance: its work is not used",
    "timed-without-kernels": "a timed call the candidate could not tell from the others (watched by the dispatch "
                             "mode) called none of the kernels forward called while checked: the speed is not theirs",
    "torch-compute-observed": "under strict, forward ran PyTorch compute outside the candidate's kernels, as the "
                              "dispatcher saw it at run time (whatever name or indirection the source used)",
    "aten-compute-observed": "under strict, an extension function's host code ran ATen compute, as the dispatcher saw "
                             "it at run time (whatever name, macro or lookup the C++ used)",
    "library-compute-observed": "under strict, the kernel's samples of the candidate's worker during its wall-clock "
                                "burst put most of the computing time in PyTorch's or other libraries' code, however "
                                "it was reached (ATen or BLAS found at run time, below the dispatcher)",
    "cpu-census-unavailable": "under strict on the CPU, the kernel's sampler (perf_event_open) was not available, so "
                              "library code reached below the dispatcher could not be seen (a flag)",
    "torch-op-unclassified": "under strict, forward (or an extension function's host code) ran a PyTorch operator "
                             "that is neither known compute nor known to allocate, view or copy (a flag naming it)",
    "kernel-output-unverified": "no call into the candidate's kernels could be observed, so nothing shows their output is used",
    "shape-specialised": "wrong or failing at an alternative shape/dtype set: sizes baked in (reject under strict, flag under kernelbench)",
    "sanitizer-memcheck": "compute-sanitizer found out-of-bounds or misaligned memory accesses",
    "sanitizer-racecheck": "compute-sanitizer found a shared-memory data race",
    "sanitizer-synccheck": "compute-sanitizer found a barrier used wrongly (a __syncthreads() not reached by every "
                           "thread of the block, or a warp-synchronous call with a bad mask)",
    "sanitizer-initcheck": "compute-sanitizer found reads of uninitialised device memory",
    "sanitizer-incomplete": "a compute-sanitizer tool did not finish the forward (timed out, or no summary): it claims "
                            "nothing, and the candidate is not verified on CUDA until a full run passes",
    "large-output-mode": "outputs too large to bring to the verifier were compared in the reference worker, one trial "
                         "at a time; the reference's own audit (task-* checks) did not run",
    "sanitizer-small-shapes": "compute-sanitizer found errors at the small shapes only; the problem's own shapes were clean",
}
