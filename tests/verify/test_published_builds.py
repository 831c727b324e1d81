"""Extensions are built by a process that runs none of the candidate's code and loaded by those that do
(`kmworker/published.py`): the builder publishes without loading, refuses a build key that is not the arguments'
own, the verifier refuses malformed build requests from a candidate's process, and candidates whose top level uses
their extension, or builds several, are judged as before."""

from __future__ import annotations

import json

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.compile_stage import _build, _Refused
from kernelmosaic.verify.sandbox.kmworker import published
from kernelmosaic.verify.sandbox.kmworker.compiler import build_one
from kernelmosaic.verify.sandbox.kmworker.loader import build_key

from .kit import CPP, FUNCTIONS, PROBLEM_ADD_RELU, write

pytestmark = pytest.mark.slow

INIT_CPP = r"""
#include <cstdio>
static int km_touch() {{ if (FILE* f = std::fopen("{marker}", "w")) {{ std::fclose(f); }} return 1; }}
static int km_touched = km_touch();  // runs when the library is loaded, never when it is built
torch::Tensor twice(torch::Tensor a) {{ return a * 2; }}
"""


def test_the_builder_publishes_what_it_built_and_loads_nothing(tmp_path):
    marker = tmp_path / "static-initializer-ran"
    spec = published.spec_of("km_pub_init_ext", INIT_CPP.format(marker=marker), None,
                             {"functions": ["twice"], "extra_cflags": ["-O1"]})
    spec = json.loads(json.dumps(spec))  # as it crosses the channel
    key = build_key({"cuda_sources": None, **spec})
    cache = tmp_path / "cache"
    res = build_one(spec, key, str(cache))
    folder = cache / f"km_pub_init_ext_{key[:16]}"  # the folder the key names
    assert res["error"] is None and res["builds"][0]["ok"], res
    assert published.is_published(folder, "km_pub_init_ext")
    assert not marker.exists()  # built, never loaded here
    module = published.load(folder, "km_pub_init_ext")
    assert marker.exists()  # the initializer does run where the library is loaded
    import torch

    assert torch.equal(module.twice(torch.ones(3)), torch.full((3,), 2.0))
    again = build_one(spec, key, str(cache))  # published already: nothing is built
    assert again["builds"][0]["cache_hit"] and again["builds"][0]["seconds"] == 0.0


def test_a_build_key_that_is_not_the_arguments_own_is_refused_before_building(tmp_path):
    spec = published.spec_of("km_pub_forged_ext", "torch::Tensor one(torch::Tensor a) { return a; }", None,
                             {"functions": ["one"]})
    with pytest.raises(ValueError, match="build key"):
        build_one(spec, "0" * 64, str(tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("wanted, says", [
    ({"spec": {"name": "../../escape"}, "key": "a" * 64}, "not an extension name"),
    ({"spec": {"name": "ok_ext"}, "key": "../x"}, "malformed"),
    ({"spec": "not a dict", "key": "a" * 64}, "malformed"),
    ({"key": "a" * 64}, "malformed"),
])
def test_a_malformed_build_request_from_a_candidates_process_is_refused(tmp_path, wanted, says):
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    with pytest.raises(_Refused, match=says):
        _build(config, wanted, wait=True, nice=0)
    assert not any((tmp_path / "cache").glob("*escape*")) and not (tmp_path / "escape").exists()


def test_arguments_that_are_not_plain_data_are_named():
    with pytest.raises(TypeError, match="extra_cflags"):
        published.spec_of("x", "", None, {"extra_cflags": [object()]})


TOP_LEVEL_USE = f'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{CPP}"""
try:
    ext = load_inline(name="km_pub_top_ext", cpp_sources=CPP, functions={FUNCTIONS!r}, extra_cflags=["-O2"])
except Exception:  # the fallback models write: it must not swallow the import's stop
    ext = None
add_relu = ext.add_relu  # used at the top level, before anything is built
COPY = r"""
torch::Tensor copy_out(torch::Tensor a) {{
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) po[i] = pa[i];
    return out;
}}
"""
helper = load_inline(name="km_pub_second_ext", cpp_sources=COPY, functions=["copy_out"])

class ModelNew(nn.Module):
    def forward(self, a, b):
        return helper.copy_out(add_relu(a, b))
'''


def test_a_candidate_that_uses_its_extension_at_the_top_level_and_builds_two_is_judged(build_cache, tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, run_timeout_s=20,
                          memory_limit_gb=8)
    with Verifier(config) as verifier:
        verdict = verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU), write(tmp_path, "c.py", TOP_LEVEL_USE))
    assert verdict.accepted, (verdict.status, verdict.message)
    assert sorted(verdict.compile.extensions) == ["km_pub_second_ext", "km_pub_top_ext"]
    for name in ("km_pub_top_ext", "km_pub_second_ext"):
        (folder,) = build_cache.glob(f"{name}_*")
        assert published.is_published(folder, name)
