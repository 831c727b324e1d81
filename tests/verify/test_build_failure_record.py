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


def test_a_refused_build_is_not_compiled_again_for_the_next_candidate(build_cache, tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, memory_limit_gb=8)
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    first, second = (write(tmp_path, f"candidate_{k}.py", BROKEN.format(k=k)) for k in (1, 2))
    with Verifier(config) as verifier:
        a = verifier.verify(problem, first)
        (build_dir,) = build_cache.glob("km_refused_ext_*")
        assert (build_dir / "km_failed.log").is_file()
        written = (build_dir / "main.cpp").stat().st_mtime_ns
        b = verifier.verify(problem, second)
    for v in (a, b):
        assert v.status == Status.compile_error, v.message
        assert "not_declared_here" in v.message
    assert not a.compile.cache_hit and "failed to build before" not in a.compile.log
    assert "failed to build before with these exact inputs" in b.compile.log
    assert (build_dir / "main.cpp").stat().st_mtime_ns == written  # torch never set the second build up
    assert not list(build_dir.glob("*.o"))  # neither build produced an object

