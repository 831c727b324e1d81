"""Precision honesty: an fp32 task's result is measured against a float64 oracle, within the error budget."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify.compare import compare_outputs
from kernelmosaic.verify.sandbox.kmworker.common import package_outputs

x64 = torch.randn(4096, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 3
REF = package_outputs(x64.float())
ORACLE = {"outputs64": package_outputs(x64), "terms": package_outputs(x64.abs())}


def test_fp32_result_is_honest_and_reported():
    cmp = compare_outputs(REF, package_outputs(x64.float()), 1e-4, 1e-4, ORACLE)
    assert cmp.ok and cmp.budget_used < 0.01 and cmp.reference_budget_used < 0.01


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
def test_half_precision_result_is_rejected(low):
    cmp = compare_outputs(REF, package_outputs(x64.to(low).float()), 1e-4, 1e-4, ORACLE)
    assert not cmp.ok and "float64 oracle" in cmp.detail and cmp.budget_used > 1.0
