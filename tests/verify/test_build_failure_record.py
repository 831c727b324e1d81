"""A build the compiler refused is recorded in its build directory: another candidate with the same extension (an
agent's variant that differs only in its Python) fails at once with the recorded log, without running the
compiler again; a build that did not run to completion is never recorded (test_compile_marker.py)."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Status, Verifier, VerifyConfig

from .kit import PROBLEM_ADD_RELU, write

pytestmark = pytest.mark.slow

BROKEN = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
# variant {k}

SRC = r"""
torch::Tensor add_relu(torch::Tensor a, torch::Tensor b) {{
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) {{ float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f + not_declared_here; }}
    return out;
}}
"""
ext = load_inline(name="km_refused_ext", cpp_sources=SRC, functions=["add_relu"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu(a, b)
'''


def test_a_refused_build_is_not_compiled_again_and_its_waiter_gives_up_its_gate_place(build_cache, tmp_path):
    """Two places in the compile gate, three candidates. The first builds the shared (broken) extension; the second
    finds that build under way, lets its place go and waits outside the gate, so the third (nothing to build) is
    compiled before the build ends; the second then fails from the record, the compiler not run again."""
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, memory_limit_gb=8, lookahead=2,
                          static_checks=False)  # the plain candidate launches no kernel of its own
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    first, second = (write(tmp_path, f"candidate_{k}.py", BROKEN.format(k=k)) for k in (1, 2))
    plain = write(tmp_path, "plain.py", "import torch\n# load_inline named, not called: a compile worker runs it\n\n\n"
                  "class ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return torch.relu(a + b)\n")
    with Verifier(config) as verifier:
        got = dict(verifier.verify_many([(problem, first), (problem, second), (problem, plain)]))
    c = got[2]
    refused = [v for v in (got[0], got[1]) if "failed to build before with these exact inputs" in v.compile.log]
    built = [v for v in (got[0], got[1]) if v not in refused]
    assert len(refused) == 1 and len(built) == 1  # either may have taken the gate first
    (build_dir,) = build_cache.glob("km_refused_ext_*")
    assert (build_dir / "km_failed.log").is_file()
    for v in (got[0], got[1]):
        assert v.status == Status.compile_error, v.message
        assert "not_declared_here" in v.message
    assert not list(build_dir.glob("*.o"))  # one build ran, and produced nothing
    build_end = built[0].phase_started["compile"] + built[0].phase_seconds["compile"]
    assert c.accepted and c.phase_started["compile"] + c.phase_seconds["compile"] < build_end
