"""The precompiled torch header (`kmworker.pch`, `verify/pch_store.py`): made by the verifier's own process after a
plain C++ build of a flag set (on the CPU device its second), into a store no worker can write, used by later builds with those flags, and on a
GPU made in the background so no judgement waits for it. A build file whose flags are outside the known set (the
candidate's process can rewrite it first) gets no header."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from kernelmosaic.contracts.verdict import Status
from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.compile_stage import precompile_header
from kernelmosaic.verify.pch_store import UnsafeFlags, header_flags, precompile
from kernelmosaic.verify.progress import phase_progress
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


@pytest.fixture()
def store(tmp_path, monkeypatch):
    """A header store of this test's own (the default is one per user, shared by every build cache)."""
    monkeypatch.setenv("KERNELMOSAIC_PCH", str(tmp_path / "pch"))
    return tmp_path / "pch"


def test_the_second_plain_build_of_a_flag_set_leaves_a_header_that_the_next_build_with_its_flags_uses(tmp_path, store):
    """On the CPU device the header is made before the compile stage returns (no compiler beside a timed candidate),
    once a flag set's second plain build shows it is used again; with GPU settings (on any machine: the precompile
    itself runs on the CPU) the first asks for it, the call returns at once and the header is indexed later, by a
    thread of the verifier's process."""
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", trials=2, timing=False, compile_baseline=False)
    prob = write(tmp_path, "problem.py", problem("x * 2.0"))
    first, second, third = (write(tmp_path, f"c{k}.py", _candidate(k)) for k in (1, 2, 3))
    phases = io.StringIO()  # `verify`'s progress lines where the console is not a terminal
    with Verifier(config) as verifier:
        with phase_progress(Console(file=phases, force_terminal=False, width=200), "c1"):
            built = verifier.compile(first)
        assert built.ok, built.message
        assert "precompiling" not in phases.getvalue() and not list(store.glob("*/km_torch_extension.h.gch"))
        assert len(list((store / "seen").iterdir())) == 1  # a flag set used once has cost no header
        with phase_progress(Console(file=phases, force_terminal=False, width=200), "c2"):
            built = verifier.compile(second)
        assert built.ok, built.message
        assert "c2: precompiling the torch header" in phases.getvalue(), phases.getvalue()
        assert len(list(store.glob("*/km_torch_extension.h.gch"))) == 1
        assert len(list((store / "index").iterdir())) == 1
        assert not (config.cache_dir / "pch").exists()  # nothing of it where workers write
        assert "km_torch_extension.h" not in built.info.log  # the second build was plain too
        # a flag set with no header yet: with GPU settings its header is compiled in the background at its first
        # build, here beside the third candidate's judgement, which uses the first flag set's header
        [built_dir] = [d for d in config.cache_dir.iterdir() if d.name.startswith("km_pch_twice_1")]
        other = config.cache_dir / "km_pch_other_flags"
        other.mkdir()
        ninja = (built_dir / "build.ninja").read_text()
        (other / "build.ninja").write_text(ninja.replace("\ncflags = ", "\ncflags = -O1 ", 1))
        started = time.perf_counter()
        precompile_header("a" * 24, other.name, config.model_copy(update={"device": "cuda", "compile_nice": 0}))
        assert time.perf_counter() - started < 0.5  # the compiler alone takes longer than this
        index = store / "index" / ("a" * 24)
        assert not index.exists()
        verdict = verifier.verify(prob, third)
    assert verdict.accepted, verdict.message
    assert "-include" in verdict.compile.log and "km_torch_extension.h" in verdict.compile.log
    for _ in range(6000):  # a header compile takes ~30 s here alone, minutes on a loaded CI machine
        if index.exists():
            break
        time.sleep(0.1)
    assert index.read_text().endswith("km_torch_extension.h")


def test_a_header_is_made_only_from_a_build_file_whose_flags_are_all_known(tmp_path, store):
    """The build file lies in the build cache, which a candidate's process may rewrite before the parent reads it:
    a flag that would put anything of the candidate's into the header (an include of its own, a plugin, another
    compiler, a folder of headers) means no header at all."""
    from torch.utils import cpp_extension

    torch_include = cpp_extension.include_paths()[0]
    plain = f"cxx = c++\ncflags = -DTORCH_EXTENSION_NAME=km_x -DTORCH_API_INCLUDE_EXTENSION_H -isystem {torch_include} -fPIC -std=c++17 -O3\npost_cflags = \n"
    (tmp_path / "plain.ninja").write_text(plain)
    cxx, cflags, post = header_flags(tmp_path / "plain.ninja")
    assert cxx == ["c++"] and "-O3" in cflags and not any(f.startswith("-DTORCH_EXTENSION_NAME") for f in cflags)
    # a model's usual flags (blind round 16's AVX2 answer built without a header: `-mavx2` was not in the set)
    usual = "-O3 -march=native -mavx2 -mfma -ffast-math -funroll-loops -fopenmp -march=x86-64-v3 -msse4.2"
    (tmp_path / "usual.ninja").write_text(plain.replace("-O3", usual))
    assert header_flags(tmp_path / "usual.ninja")[1][-len(usual.split()):] == usual.split()
    poisoned = {
        "an include of its own": plain.replace("-O3", f"-O3 -include {tmp_path / 'evil.h'}"),
        "a compiler plugin": plain.replace("-O3", "-O3 -fplugin=/tmp/evil.so"),
        "a folder of headers": plain.replace("-O3", f"-O3 -I{tmp_path}"),
        "another compiler": plain.replace("cxx = c++", f"cxx = {tmp_path / 'cc'}"),
        "a flag after the source": plain.replace("post_cflags = ", "post_cflags = -B/tmp/x"),
        "a macro of its own": plain.replace("-O3", "-O3 -Dfloat=double"),
    }
    for why, text in poisoned.items():
        (tmp_path / "poisoned.ninja").write_text(text)
        with pytest.raises(UnsafeFlags):
            precompile(store, "b" * 24, tmp_path / "poisoned.ninja")
        assert not (store / "index" / ("b" * 24)).exists(), why
    for key in ("../../outside", "A" * 24, "a" * 23):  # an index file name, never a path
        with pytest.raises(UnsafeFlags, match="no header index key"):
            precompile(store, key, tmp_path / "plain.ninja")


def _forging(record: str) -> str:
    """A candidate whose top level names load_inline, so the compile stage runs it in a compile worker, where it
    appends `record` to the worker's build records."""
    return f'''\
import gc

import torch
import torch.nn as nn

# names load_inline, so the compile stage runs it in a compile worker
for obj in gc.get_objects():
    if type(obj).__name__ == "BuildRecorder":
        obj.builds.append({record})


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2.0
'''


RECORD = '{"name": "km_forged", "key": "0" * 16, "cache_hit": False, "seconds": 0.0, "log": "", "ok": True, '


def test_a_forged_header_wish_in_the_compile_reply_is_not_acted_on(tmp_path, store):
    """The compile worker runs the candidate's top level, which can rewrite what the worker reports: a wish whose key is
    a path starts no precompile and fails nothing; a wish that is no wish at all is a malformed reply, rejected."""
    from kernelmosaic.verify import compile_stage

    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache", static_checks=False)
    path_wish = RECORD + '"pch_wanted": {"key": "../../escape", "build_dir": "km_forged_0000000000000000"}}'
    with Verifier(config) as verifier:
        built = verifier.compile(write(tmp_path, "forged.py", _forging(path_wish)))
        assert built.ok, built.message
        shapeless = verifier.compile(write(tmp_path, "shapeless.py", _forging(RECORD + '"pch_wanted": ["not", "a"]}')))
    assert not shapeless.ok and shapeless.status == Status.integrity_violation
    assert "malformed reply to compiling: builds.0.pch_wanted" in shapeless.message
    assert not any(c == str(config.cache_dir) for c, _ in compile_stage._PCH_ASKED)
    assert not store.exists() and not list(tmp_path.rglob("escape*"))
