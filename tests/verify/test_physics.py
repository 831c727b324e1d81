"""The speed-of-light bound: a timing under the measured ceilings is a timing anomaly, a plausible one is not."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kernelmosaic.contracts.results import DevicePeaks
from kernelmosaic.contracts.verdict import Stat, Status, Timing
from kernelmosaic.verify.judgement import Stop
from kernelmosaic.verify.physics import check_speed_of_light, floor_ms
from kernelmosaic.verify.reference_data import ReferenceData, RefSetup, reference_trials

N = 1 << 24  # two 64 MiB inputs, one 64 MiB output: 201 MB must move
REF = ReferenceData(
    setup=RefSetup(init_inputs=[], state_dict={}, flops=0.0),
    trials=reference_trials({"large": False, "trials": [
        {"distribution": "given", "skipped": False, "mutates_inputs": False, "inputs": [torch.empty(N), torch.empty(N)],
         "outputs": {"tuple": False, "meta": [{"type": "Tensor", "dtype": "float32", "shape": [N], "device": "cuda"}],
                     "tensors": []}}]}, "a problem").trials,
    env={},
)
PEAKS = DevicePeaks(bandwidth_gbps=4000.0, fp32_tflops=50.0, bf16_tflops=760.0, measured=True)


def _timing(ms: float) -> Timing:
    stat = Stat(median_ms=ms, q1_ms=ms, q3_ms=ms, samples=10)
    return Timing(candidate=stat, eager=stat, speedup_vs_eager=1.0, timer="cuda_events")


def test_floor_counts_bytes_moved():
    floor, why = floor_ms(REF, PEAKS)
    assert floor == pytest.approx(3 * N * 4 / 4000e9 * 1e3)
    assert "201.3 MB" in why


def test_impossible_speed_is_rejected():
    with pytest.raises(Stop) as stop:
        check_speed_of_light(REF, _timing(0.005), PEAKS)
    assert stop.value.status == Status.timing_anomaly
    assert stop.value.findings[0].rule == "speed-of-light"


def test_plausible_speed_passes_and_unmeasured_peaks_are_not_used():
    check_speed_of_light(REF, _timing(0.085), PEAKS)
    check_speed_of_light(REF, _timing(0.0001), PEAKS.model_copy(update={"measured": False}))



def test_unmeasured_peaks_are_a_visible_flag_not_a_silent_skip():
    nominal = DevicePeaks(bandwidth_gbps=0.0, fp32_tflops=0.0, bf16_tflops=0.0, measured=False,
                          note="measuring the peaks of cuda:0 failed: worker died")
    findings = check_speed_of_light(REF, _timing(0.005), nominal)
    assert [(f.rule, f.severity) for f in findings] == [("speed-of-light-unchecked", "flag")]
    assert "worker died" in findings[0].evidence
    assert check_speed_of_light(REF, _timing(10.0), PEAKS) == []


def test_beating_the_references_flops_is_a_flag_not_a_rejection():
    # KernelBench L1 problem 12 (diag(A) @ B) on an H100: the reference multiplies a dense N x N matrix, an honest
    # candidate scales B's rows. Its time is above the bytes floor and far under the reference's FLOPs at peak.
    dense = dataclasses.replace(REF, setup=RefSetup(init_inputs=[], state_dict={}, flops=137.44e9))
    bytes_floor, _ = floor_ms(dense, PEAKS)
    row_scale = 1.2 * bytes_floor  # moves what it must, does a fraction of the reference's arithmetic
    findings = check_speed_of_light(dense, _timing(row_scale), PEAKS)
    assert [(f.rule, f.severity) for f in findings] == [("speed-of-light-flops", "flag")]
    assert "137.44 GFLOP" in findings[0].evidence
    with pytest.raises(Stop):  # under the bytes floor it is still impossible
        check_speed_of_light(dense, _timing(0.25 * bytes_floor), PEAKS)
