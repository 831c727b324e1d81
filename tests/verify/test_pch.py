"""The precompiled torch header (`kmworker.pch`): made by a compile worker of its own after the first plain C++ build of
a flag set, used by later builds with those flags, and on a GPU made in the background so no judgement waits for it."""

from __future__ import annotations

import time

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.compile_stage import precompile_header
from kernelmosaic.verify.pool import Worker, WorkerError
from kernelmosaic.verify.slot import worker_limits
from tests.cpp_kit import candidate, problem
from tests.verify.kit import write

CPP = """
#include <torch/extension.h>
torch::Tensor twice_{k}(torch::Tensor x) {{
    auto y = torch::empty_like(x);
    const float* px = x.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) py[i] = 2.0f * px[i];
    return y;
}}
"""


def _candidate(k: int) -> str:  # a distinct extension source each, the same compiler flags
    return candidate(f"km_pch_twice_{k}", CPP.format(k=k), [f"twice_{k}"], f"twice_{k}(x)")


def test_the_first_plain_build_leaves_a_header_that_the_next_build_with_its_flags_uses(tmp_path):
    """On the CPU device the header is made before the compile stage returns (no compiler beside a timed candidate);
    with GPU settings (on any machine: the precompile itself runs on the CPU) the call returns at once and a compile
    worker of its own indexes the header later."""
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", trials=2, timing=False, compile_baseline=False)
    prob = write(tmp_path, "problem.py", problem("x * 2.0"))
    first, second = write(tmp_path, "c1.py", _candidate(1)), write(tmp_path, "c2.py", _candidate(2))
    with Verifier(config) as verifier:
        built = verifier.compile(first)
        assert built.ok, built.message
        assert len(list((config.cache_dir / "pch").glob("*/km_torch_extension.h.gch"))) == 1
        assert len(list((config.cache_dir / "pch" / "index").iterdir())) == 1
        assert "km_torch_extension.h" not in built.info.log  # the first build was plain
        verdict = verifier.verify(prob, second)
    assert verdict.accepted, verdict.message
    assert "-include" in verdict.compile.log and "km_torch_extension.h" in verdict.compile.log

    [build_dir] = [d.name for d in config.cache_dir.iterdir() if d.name.startswith("km_pch_twice_1")]
    started = time.perf_counter()
    precompile_header("a" * 24, build_dir, config.model_copy(update={"device": "cuda"}))
    assert time.perf_counter() - started < 0.5  # a worker takes longer than this to start
    index = config.cache_dir / "pch" / "index" / ("a" * 24)
    assert not index.exists()
    for _ in range(600):
        if index.exists():
            break
        time.sleep(0.1)
    assert index.read_text().endswith("km_torch_extension.h")


def test_the_precompile_op_refuses_a_folder_outside_the_build_cache_and_a_key_that_is_no_name(tmp_path):
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "build.ninja").write_text("cxx = c++\n")
    worker = Worker("compile", "cpu", worker_limits(config, "cpu", "compile"))
    try:
        worker.start()
        for where in ("../elsewhere", str(tmp_path / "elsewhere"), "missing"):
            with pytest.raises(WorkerError) as refused:
                worker.call("precompile", 60, cache_dir=str(config.cache_dir), build_dir=where, key="a" * 24)
            assert "no build folder of the cache" in refused.value.error["message"]
        (config.cache_dir / "km_x").mkdir(parents=True)
        (config.cache_dir / "km_x" / "build.ninja").write_text("cxx = c++\n")
        for key in ("../../outside", "A" * 24, "a" * 23):  # an index file name, never a path
            with pytest.raises(WorkerError) as refused:
                worker.call("precompile", 60, cache_dir=str(config.cache_dir), build_dir="km_x", key=key)
            assert "no header index key" in refused.value.error["message"]
    finally:
        worker.kill()


FORGED_WISH = '''\
import gc

import torch
import torch.nn as nn

# names load_inline, so the compile stage runs it in a compile worker, where it forges its build record
for obj in gc.get_objects():
    if type(obj).__name__ == "BuildRecorder":
        obj.builds.append({"name": "km_forged", "key": "0" * 16, "cache_hit": False, "seconds": 0.0, "log": "",
                           "ok": True, "pch_wanted": {"key": "../../escape", "build_dir": "km_forged_0000000000000000"}})
        obj.builds.append({"name": "km_forged", "key": "0" * 16, "cache_hit": False, "seconds": 0.0, "log": "",
                           "ok": True, "pch_wanted": ["not", "a", "wish"]})


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2.0
'''


def test_a_forged_header_wish_in_the_compile_reply_is_not_acted_on(tmp_path):
    """The compile worker runs the candidate's top level, which can rewrite what the worker reports: a wish whose key is
    a path, or that is no wish at all, starts no precompile and fails nothing."""
    from kernelmosaic.verify import compile_stage

    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", static_checks=False)
    with Verifier(config) as verifier:
        built = verifier.compile(write(tmp_path, "forged.py", FORGED_WISH))
    assert built.ok, built.message
    assert not any(c == str(config.cache_dir) for c, _ in compile_stage._PCH_ASKED)
    assert not (config.cache_dir / "pch").exists() and not list(tmp_path.rglob("escape*"))
