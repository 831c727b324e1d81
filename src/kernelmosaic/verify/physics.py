"""A speed-of-light bound: no kernel runs faster than the device's measured ceilings allow.

The floor that rejects is the bytes every implementation must move (inputs read once, outputs written once) at the
measured copy bandwidth: a candidate timed well under it did not do the work inside the timed window. The reference's
FLOPs at the fastest measured matrix rate are not a floor for the candidate: they count the work the reference does,
and a candidate may exploit structure it ignores (a diagonal matrix applied as a row scale, a triangle's zero half,
an algebraic identity: KernelBench L1 problem 12 on an H100, 2026-12-05, an honest row scale timed 0.063 ms against
the reference matmul's 0.180 ms at peak). Beating that figure is a flag (`speed-of-light-flops`) for a reader.
"""

from __future__ import annotations

from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.contracts.verdict import Finding, Status, Timing
from kernelmosaic.verify.compare import output_nbytes
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.reference_data import ReferenceData

__all__ = ["floor_ms", "flops_ms", "check_speed_of_light", "SLACK"]

SLACK = 0.5
"""A candidate may beat the floor by this factor before it is called impossible (measured peaks are not
the datasheet's, and caches can help a little even with the L2 flushed)."""

def floor_ms(refdata: ReferenceData, peaks: DevicePeaks) -> tuple[float, str]:
    """The bytes floor: inputs read once and outputs written once at the measured copy bandwidth, and why."""
    trial = refdata.usable[0]
    in_bytes = sum(x.numel() * x.element_size() for x in trial.inputs if hasattr(x, "element_size"))
    moved = in_bytes + sum(output_nbytes(trial.outputs))
    t_bytes = moved / (peaks.bandwidth_gbps * 1e9) * 1e3 if peaks.bandwidth_gbps > 0 else 0.0
    return t_bytes, f"{moved / 1e6:.1f} MB at {peaks.bandwidth_gbps:.0f} GB/s = {t_bytes:.4f} ms"


def flops_ms(refdata: ReferenceData, peaks: DevicePeaks) -> tuple[float, str]:
    """The reference's FLOPs at the fastest measured matrix rate, and why (not a floor for the candidate)."""
    flops = refdata.setup.flops
    rate = max(peaks.fp32_tflops, peaks.bf16_tflops) * 1e12
    t_flops = flops / rate * 1e3 if rate > 0 else 0.0
    return t_flops, f"{flops / 1e9:.2f} GFLOP at {rate / 1e12:.0f} TFLOP/s = {t_flops:.4f} ms"


def check_speed_of_light(refdata: ReferenceData, timing: Timing, peaks: DevicePeaks) -> list[Finding]:
    """Raises Stop on a candidate faster than the floor; a flag when the peaks are unknown (never silently off)."""
    if not peaks.measured:
        return [Finding(rule="speed-of-light-unchecked", severity="flag",
                        message="the device's peaks could not be measured, so the speed-of-light check did not run",
                        evidence=peaks.note or "no measured peaks")]
    floor, why = floor_ms(refdata, peaks)
    if floor > 0 and timing.candidate.median_ms < SLACK * floor:
        evidence = f"median {timing.candidate.median_ms:.4f} ms < {SLACK} x floor {floor:.4f} ms ({why})"
        raise Stop(Status.timing_anomaly, f"faster than the device allows: {evidence}",
                   [Finding(rule="speed-of-light", severity="reject",
                            message="timed faster than the measured ceilings allow: the work escaped the timer",
                            evidence=evidence)])
    work, what = flops_ms(refdata, peaks)
    if work > 0 and timing.candidate.median_ms < SLACK * work:
        return [Finding(rule="speed-of-light-flops", severity="flag",
                        message="timed faster than the reference's own FLOPs allow at the device's peak: the "
                                "candidate does less arithmetic than the reference (structure it exploits)",
                        evidence=f"median {timing.candidate.median_ms:.4f} ms < {SLACK} x {what}")]
    return []
