"""A candidate may import what its problem imports (KernelBench's Mamba problems import `einops`, and answers that
keep the reference's code keep the import): the verifier gives the static view the problem's imports."""

from __future__ import annotations

from kernelmosaic.verify import Status

from . import kit


def test_an_import_the_problem_makes_is_allowed_to_the_candidate(cpu_verifier, tmp_path):
    cand = kit.write(tmp_path, "cand.py", kit.candidate("return ext.add_relu(a, b)", extra="import json  # noqa\n"))
    plain = kit.write(tmp_path, "plain.py", kit.PROBLEM_ADD_RELU)
    verdict = cpu_verifier.verify(plain, cand, timing=False)
    assert verdict.status == Status.static_reject and "import-not-allowed" in verdict.message, verdict.message
    importing = kit.write(tmp_path, "importing.py", "import json  # noqa: F401\n" + kit.PROBLEM_ADD_RELU)
    verdict = cpu_verifier.verify(importing, cand, timing=False)
    assert verdict.status == Status.accepted, verdict.message
