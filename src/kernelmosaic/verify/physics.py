"""A speed-of-light bound: no kernel runs faster than the device's measured ceilings allow.

The floor is the larger of (reference FLOPs at the fastest measured matrix rate) and (bytes every
implementation must move: inputs read once, outputs written once, at the measured copy bandwidth). A
candidate timed well under that floor did not do the work inside the timed window.
"""

from __future__ import annotations

from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.contracts.verdict import Finding, Status, Timing
from kernelmosaic.verify.compare import output_nbytes
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.reference_data import ReferenceData

__all__ = ["floor_ms", "check_speed_of_light", "SLACK"]

SLACK = 0.5
"""A candidate may beat the floor by this factor before it is called impossible (measured peaks are not
the datasheet's, and caches can help a little even with the L2 flushed)."""

def floor_ms(refdata: ReferenceData, peaks: DevicePeaks) -> tuple[float, str]:
    trial = refdata.usable[0]
    in_bytes = sum(x.numel() * x.element_size() for x in trial.inputs if hasattr(x, "element_size"))
    moved = in_bytes + sum(output_nbytes(trial.outputs))
    flops = refdata.setup.flops
    rate = max(peaks.fp32_tflops, peaks.bf16_tflops) * 1e12
    t_bytes = moved / (peaks.bandwidth_gbps * 1e9) * 1e3 if peaks.bandwidth_gbps > 0 else 0.0
    t_flops = flops / rate * 1e3 if rate > 0 else 0.0
    why = f"{moved / 1e6:.1f} MB at {peaks.bandwidth_gbps:.0f} GB/s = {t_bytes:.4f} ms; " \
          f"{flops / 1e9:.2f} GFLOP at {rate / 1e12:.0f} TFLOP/s = {t_flops:.4f} ms"
    return max(t_bytes, t_flops), why


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
    return []
