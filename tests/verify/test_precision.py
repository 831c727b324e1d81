"""Precision honesty: an fp32 task's result is measured against a float64 reference."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify.judge import Stop, _precision_honesty
from kernelmosaic.verify.sandbox.kmworker.common import package_outputs
from kernelmosaic.verify.verdict import Correctness

x64 = torch.randn(4096, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 3
TRIAL = {"outputs64": package_outputs(x64), "outputs": package_outputs(x64.float())}


def test_fp32_result_is_honest_and_reported():
    corr = Correctness()
    _precision_honesty(TRIAL, package_outputs(x64.float()), 1e-4, 1e-4, corr)
    assert corr.error_vs_fp64 < 0.01 and corr.reference_error_vs_fp64 < 0.01


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
def test_half_precision_result_is_rejected(low):
    with pytest.raises(Stop) as stop:
        _precision_honesty(TRIAL, package_outputs(x64.to(low).float()), 1e-4, 1e-4, Correctness())
    assert stop.value.findings[0].rule == "precision-downgrade"
