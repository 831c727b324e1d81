"""A candidate whose kernel is registered as an operator (`TORCH_LIBRARY`, `load_inline(..., is_python_module=False)`,
called through `torch.ops.NS.op`) is judged like any other: `load_inline` then returns the library's path, not a
module, which the verifier's build path must not treat as one (it raised `'str' object attribute 'capitalize'
is read-only`, a load failure of an honest candidate)."""

from __future__ import annotations

from pathlib import Path

from kernelmosaic.verify import Status

from . import kit

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "static" / "legit_torch_library_op.py"

PROBLEM = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha: float = 2.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * x


def get_inputs():
    return [torch.randn(64, 33)]


def get_init_inputs():
    return []
'''


def test_an_operator_registered_with_torch_library_is_a_custom_kernel(cpu_verifier, tmp_path):
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    verdict = cpu_verifier.verify(problem, FIXTURE, timing=False)
    assert verdict.status == Status.accepted, verdict.message


def test_a_catch_all_operator_is_seen_calling_its_kernel_under_kernelbench(tmp_path):
    """`m.def(schema, &fn)` registers a catch-all kernel, which runs before the Python dispatch key: the probe's
    dispatch mode never saw it, and under `kernelbench` the honest candidate was `no_custom_kernel`
    (kernel-output-unverified). Calls through `torch.ops` (the packet and `.default`) are counted by the probe."""
    from kernelmosaic.verify import Verifier, VerifyConfig

    source = FIXTURE.read_text().replace(
        'm.def("scaled_copy(Tensor x, float alpha) -> Tensor");\n    m.impl("scaled_copy", &scaled_copy);',
        'm.def("scaled_copy(Tensor x, float alpha) -> Tensor", &scaled_copy);').replace(
        "kmfixture", "kmcatchall")
    assert "&scaled_copy);" in source and "m.impl" not in source
    problem = kit.write(tmp_path, "problem.py", PROBLEM)
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", trials=2, timing=False,
                          compile_baseline=False, policy="kernelbench")
    with Verifier(config) as verifier:
        for call in ("torch.ops.kmcatchall.scaled_copy(x, self.alpha)",
                     "torch.ops.kmcatchall.scaled_copy.default(x, self.alpha)"):
            candidate = kit.write(tmp_path, "candidate.py", source.replace(
                "torch.ops.kmcatchall.scaled_copy(x, self.alpha)", call))
            verdict = verifier.verify(problem, candidate)
            assert verdict.status == Status.accepted, (call, verdict.message)
            assert [k.name for k in verdict.custom.kernels] == ["kmcatchall::scaled_copy"], verdict.custom
            assert verdict.custom.kernels[0].reaches_output, verdict.custom
