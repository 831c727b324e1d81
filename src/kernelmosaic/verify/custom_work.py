"""Does the candidate's own kernel work reach its result? Perturbation probes, and the custom kernels' share of time.

The candidate worker counts every call into the candidate's kernels during one forward, then repeats that forward
once per kernel entry point with that entry point's outputs (returned tensors and buffers it wrote) replaced by
noise. The buffers it wrote include reused ones that it rewrote with identical values (intercept.py finds them by
repeating the call with noise in them). An entry point whose noise leaves the result within tolerance does no work
the result depends on. Under
every policy at least one entry point must reach the result (`kernel-output-unused`); under `kernelbench`, where
PyTorch may compute the rest, a candidate whose calls cannot be observed at all is rejected too
(`kernel-output-unverified`), since nothing then shows that a custom kernel contributes.

In large-output mode the probes' outputs stay where they are: the unperturbed probe's are handed out in place and
copied into the reference worker, and each perturbed probe's are compared with that copy there (`verify/large.py`),
with the same comparison; only its numbers come back.
"""

from __future__ import annotations

from kernelmosaic.contracts.verdict import Census, CustomWork, Finding, KernelUse, Status
from kernelmosaic.verify.compare import compare_outputs
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Stop, call, integrity
from kernelmosaic.verify.large import compare_probe_outputs, hold_probe_outputs, let_go_probes
from kernelmosaic.verify.pool import Worker
from kernelmosaic.verify.reference_data import ReferenceData
from kernelmosaic.verify.run_replies import ProbeReply, candidate_reply
from kernelmosaic.verify.static.vocab import dispatched_kind, dispatched_names

__all__ = ["check_custom_work", "custom_share", "records_ops", "judge_torch_ops"]

NO_TENSOR = "it returned no tensor and wrote none of its tensor arguments (a size or other host value)"
"""An entry point with no tensor output: not judged alone, but no such entry point shows a kernel's work used."""


def custom_share(census: Census | None) -> float | None:
    """Custom kernels' device time over all kernels' in the census (None without a census or any time)."""
    rows = census.kernels if census is not None else []
    total = sum(r.total_ms for r in rows)
    if not rows or total <= 0:
        return None
    return round(sum(r.total_ms for r in rows if r.custom) / total, 4)


def _probe(cand: Worker, config: VerifyConfig, inputs: list, perturb: list[str], seed: int,
           shared: bool, record_ops: bool = False) -> ProbeReply:
    res = candidate_reply(ProbeReply, call(cand, "probe", config.run_timeout_s, Status.runtime_error,
                                           "probing the candidate's kernels", host_inputs=inputs, perturb=perturb,
                                           seed=seed, shared=shared, record_ops=record_ops), "probe")
    integrity(res.integrity, "kernel probes")
    return res


def records_ops(config: VerifyConfig) -> bool:
    """Whether the operators forward dispatches are recorded and judged at run time: where the static policy rejects
    PyTorch compute (`strict`) and the policy checks are on. The kernel probe records one forward; every timing
    round records one call more among its timed calls (`timed.py`), which forward cannot tell from the others."""
    return config.static_checks and config.static_policy().action("torch-compute") == "reject"


def judge_torch_ops(outside: dict[str, int], inside: dict[str, int], config: VerifyConfig,
                    findings: list[Finding]) -> None:
    """Where PyTorch compute is a reject (`strict`, the policy checks on): PyTorch compute as the dispatcher saw it run
    (whatever the source spelled: a name the static view missed, a call built at run time) is a reject too: in
    forward outside the candidate's kernels (`torch-compute-observed`), or inside an extension function's own host
    code (`aten-compute-observed`). Operators the static policy allows (`allowed_torch_ops`: `torch.cumsum`, `sort`)
    are allowed here by their last name; operators neither known to compute nor known to allocate, view or copy are
    a flag naming them."""
    names_allowed = {a.rsplit(".", 1)[-1] for a in config.static_policy().allowed_torch_ops}
    outside, inside = ({n: c for n, c in ops.items() if dispatched_names(n)[1] not in names_allowed} for ops in (outside, inside))

    def said(ops: dict[str, int], names: list[str]) -> str:
        return ", ".join(f"{n} ({ops[n]}x)" for n in sorted(names))[:800]

    for ops, rule, where in ((outside, "torch-compute-observed", "forward ran PyTorch compute outside the candidate's "
                              "kernels"),
                             (inside, "aten-compute-observed", "the candidate's extension functions ran ATen compute "
                              "in their host code")):
        compute = [n for n in ops if dispatched_kind(n) == "compute"]
        if compute:
            message = (f"{rule}: {where} ({said(ops, compute)[:200]}), which `strict` forbids; accepted instead: the kernels compute, and PyTorch "
                       "only allocates, views, copies or concatenates (or judge with `--policy kernelbench`, where "
                       "PyTorch may compute the rest)")
            raise Stop(Status.no_custom_kernel, message,
                       [Finding(rule=rule, severity="reject", message=message, evidence=said(ops, compute))])
    for ops, where in ((outside, "outside its kernels"), (inside, "inside its extension functions")):
        unknown = [n for n in ops if dispatched_kind(n) == "unknown"]
        evidence = said(ops, unknown)
        if unknown and not any(f.rule == "torch-op-unclassified" and f.evidence == evidence for f in findings):
            # the probe and every round's watched call: the same operators flagged once
            findings.append(Finding(rule="torch-op-unclassified", severity="flag", evidence=evidence,
                                    message=f"forward ran {len(unknown)} PyTorch operator(s) {where} that are neither "
                                            "known compute nor known to allocate, view or copy"))


def check_custom_work(cand: Worker, refdata: ReferenceData, config: VerifyConfig, census: Census | None,
                      findings: list[Finding], ref: Worker | None = None,
                      watched: list[dict[str, int]] | None = None) -> CustomWork:
    """Probe the candidate (already loaded and constructed in `cand`); raise Stop when its kernels' output is
    unused (or, under `kernelbench`, unobservable); append flags for entry points that are decoys. `ref`: the
    reference worker, which compares the probes' outputs in large-output mode (required there)."""
    if not refdata.large:
        return _check(cand, None, refdata, config, census, findings, watched or [])
    if ref is None:
        raise ValueError("large-output mode compares the probes in the reference worker: pass `ref`")
    try:
        return _check(cand, ref, refdata, config, census, findings, watched or [])
    finally:
        let_go_probes(cand, ref, config)


def _check(cand: Worker, ref: Worker | None, refdata: ReferenceData, config: VerifyConfig, census: Census | None,
           findings: list[Finding], watched: list[dict[str, int]]) -> CustomWork:
    """`check_custom_work`; `ref` given: large-output mode (the outputs compared in the reference worker)."""
    trial = refdata.usable[0]
    shared = ref is not None
    record = records_ops(config)
    base = _probe(cand, config, trial.inputs, [], config.seed + 5000, shared, record_ops=record)
    if base.error or base.outputs is None:
        raise Stop(Status.runtime_error, f"forward failed while its kernels were probed: {base.error}")
    if record:
        judge_torch_ops(base.torch_ops, base.kernel_ops, config, findings)
    if ref is not None:
        hold_probe_outputs(cand, ref, config, base.outputs)
    skipped = [i + 1 for i, calls in enumerate(watched) if base.calls and not calls]
    if skipped:
        message = (f"forward called none of its kernels in a timed call (round {skipped[0]}), where it called "
                   f"{', '.join(sorted(base.calls))} while checked: the speed measured is not its kernels'; accepted "
                   "instead: the same code on every call")
        raise Stop(Status.no_custom_kernel, message,
                   [Finding(rule="timed-without-kernels", severity="reject", message=message,
                            evidence=f"watched timed calls without a kernel call: rounds {skipped}")])
    work = CustomWork(kernels=[KernelUse(name=n, calls=c) for n, c in sorted(base.calls.items())])
    if cand.device.startswith("cuda"):
        work.share, work.share_basis = custom_share(census), "device_time" if custom_share(census) is not None \
            else "unavailable"
    elif base.calls and base.forward_s > 0:
        work.share = round(min(1.0, sum(base.host_s.values()) / base.forward_s), 4)
        work.share_basis = "host_time"
    if not work.kernels:
        message = ("kernel-output-unverified: no call into the candidate's own kernels was observed (extension "
                   "functions, Triton kernels, registered operators), so nothing shows that their output reaches the "
                   "result; accepted instead: forward calls a `load_inline`/`load` extension function, a Triton "
                   "kernel or an operator the extension registered")
        finding = Finding(rule="kernel-output-unverified", message=message,
                          severity="reject" if config.policy == "kernelbench" else "flag")
        if finding.severity == "reject":
            raise Stop(Status.no_custom_kernel, message, [finding])
        findings.append(finding)
        return work
    atol, rtol = config.tolerances()
    for k, use in enumerate(work.kernels[: config.dataflow_functions]):
        res = _probe(cand, config, trial.inputs, [use.name], config.seed + 5001 + k, shared)
        if res.error:
            use.reaches_output, use.detail = False, f"forward raised when its output was noise: {res.error}"
            continue
        if not res.noised.get(use.name):
            use.detail = NO_TENSOR  # a size or other host value: nothing to judge, neither used nor unused
            continue
        if res.outputs is None:  # forward returned None under noise: not what the unperturbed forward returned
            use.reaches_output, use.detail = True, "forward returned nothing when its output was noise"
            continue
        cmp = (compare_probe_outputs(cand, ref, config, res.outputs) if ref is not None
               else compare_outputs(base.outputs, res.outputs, atol, rtol))
        use.reaches_output = not cmp.ok
        use.detail = cmp.detail if not cmp.ok else "noise in its output left the result within tolerance"
    tested = [u for u in work.kernels if u.reaches_output is not None]
    unused = [u for u in tested if not u.reaches_output]
    host_only = [u for u in work.kernels if u.detail == NO_TENSOR]
    if (unused and len(unused) == len(tested)) or (host_only and not tested):
        message = ("kernel-output-unused: the candidate's kernels run, but noise in their output (the tensors they "
                   "return and every buffer they write, reused buffers included) leaves what forward returns within "
                   "tolerance, or they output no tensor at all; accepted instead: forward returns what its kernels "
                   "computed (directly, or through a copy, a view or later operations)")
        evidence = "; ".join(f"{u.name} ({u.calls} call(s)): {u.detail}" for u in unused + host_only)[:800]
        raise Stop(Status.output_mismatch, message,
                   [Finding(rule="kernel-output-unused", severity="reject", message=message, evidence=evidence)])
    evidence = "; ".join(f"{u.name} ({u.calls} call(s)): {u.detail}" for u in unused)[:800]
    if unused:  # entry points with tensor outputs only: a helper returning a size is no decoy
        findings.append(Finding(rule="kernel-output-unused", severity="flag", evidence=evidence,
                                message=f"{len(unused)} kernel entry point(s) run without their output reaching "
                                        "the result (their time counts, their work does not); not flagged: entry "
                                        "points whose output (returned or written into a buffer) forward uses"))
    return work
