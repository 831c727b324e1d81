"""On a CUDA GPU with CuPy (scripts/gpu/gpu-check): the fast form judged with the same checks as load_inline candidates.

Correct fast-form candidates are accepted and their RawKernel/RawModule kernels are the custom ones in the census and
the probes; work done by CuPy's library, a decoy RawKernel, and work left on a CuPy stream of its own are caught.
"""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from . import fastform_kit as fk
from . import gpu_kit as gk
from . import kit

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
cupy = pytest.importorskip("cupy")


def _config(cache, **kw) -> VerifyConfig:
    base = dict(device="cuda", trials=3, cache_dir=cache, timing_budget_ms=100, timing_rounds=2, compile_baseline=False)
    return VerifyConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def strict(build_cache):
    with Verifier(_config(build_cache)) as v:
        yield v


@pytest.fixture(scope="module")
def kernelbench(build_cache):
    with Verifier(_config(build_cache, policy="kernelbench")) as v:
        yield v


@pytest.fixture(scope="module")
def unguarded(build_cache):
    """Static checks off: the run-time defences on their own."""
    with Verifier(_config(build_cache, static_checks=False)) as v:
        yield v


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    d = tmp_path_factory.mktemp("fastform-problems")
    (d / "add.py").write_text(gk.PROBLEM_ADD_RELU)
    (d / "rowsum.py").write_text(fk.PROBLEM_ROWSUM)
    return d


def test_fast_form_add_relu_is_accepted_and_its_kernel_is_the_custom_one(strict, problems, tmp_path):
    v = strict.verify(problems / "add.py", kit.write(tmp_path, "fast.py", fk.CORRECT))
    assert v.accepted, (v.status, v.message, v.findings)
    custom = [k.name for k in v.census.kernels if k.custom]
    assert any("add_relu" in name for name in custom), v.census
    assert [(k.name, k.reaches_output) for k in v.custom.kernels] == [("cupy.add_relu", True)]
    assert v.custom.share is not None and v.custom.share > 0.9
    assert v.timing is not None and v.timing.candidate.median_ms > 0


def test_fast_form_row_reduction_module_is_accepted(strict, problems, tmp_path):
    v = strict.verify(problems / "rowsum.py", kit.write(tmp_path, "rowsum.py", fk.ROWSUM))
    assert v.accepted, (v.status, v.message, v.findings)
    assert [k.name for k in v.custom.kernels] == ["cupy.row_sum"]


def test_cupy_library_work_is_not_a_custom_kernel(strict, unguarded, problems, tmp_path):
    path = kit.write(tmp_path, "library.py", fk.LIBRARY_ONLY)
    guarded = strict.verify(problems / "add.py", path)
    # Static analysis rejects it before anything runs: the module's kernels are never launched (the status) and the
    # work is CuPy's library (named too). The H200 run of 2026-12-01 showed the status is no_custom_kernel here.
    assert guarded.status == Status.no_custom_kernel, (guarded.status, guarded.message)
    assert {"no-kernel-launched", "cupy-compute"} <= {f.rule for f in guarded.rejected_by}, guarded.findings
    v = unguarded.verify(problems / "add.py", path)
    assert v.status == Status.no_custom_kernel, (v.status, v.message)
    assert any(f.rule == "no-custom-kernel" and "cupy_" in f.evidence for f in v.findings), v.findings


def test_decoy_raw_kernel_output_unused_is_caught_by_the_probe(kernelbench, problems, tmp_path):
    v = kernelbench.verify(problems / "add.py", kit.write(tmp_path, "decoy.py", fk.DECOY))
    assert v.status == Status.output_mismatch, (v.status, v.message)
    assert any(f.rule == "kernel-output-unused" and f.severity == "reject" for f in v.findings), v.findings


def test_work_left_on_a_cupy_side_stream_is_caught(strict, unguarded, problems, tmp_path):
    path = kit.write(tmp_path, "side.py", fk.TRAILING_SIDE_WORK)
    guarded = strict.verify(problems / "add.py", path)
    assert guarded.status == Status.static_reject and {f.rule for f in guarded.rejected_by} == {"streams-python"}
    v = unguarded.verify(problems / "add.py", path)
    assert v.status == Status.timing_anomaly, (v.status, v.message)
    assert {f.rule for f in v.rejected_by} & {"timing-escaped-work", "timing-wall-clock"}, v.findings
