"""The batch's most shared build first: which candidates share a build (read statically), the order and niceness of
their compiles, and the niceness a real compile worker runs at inside `verify_many`."""

from __future__ import annotations

import os

from kernelmosaic.verify import Verifier, VerifyConfig
from kernelmosaic.verify.build_order import build_signature, compile_plan
from kernelmosaic.verify.slot import spare_compile_worker
from tests.verify.kit import PROBLEM_ADD_RELU, write

EXT = '''\
import os
import sys
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = "{src}"
with open({log!r}, "a") as out:  # which worker ran this module, at which niceness
    out.write(f"{tag} {{'compile' in sys.argv}} {{os.nice(0)}}\\n")
if {build}:  # never true in the tests: the build is seen statically, not run
    ext = load_inline(name="{name}", cpp_sources=SRC, functions=["f"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)
'''


def _ext(tag: str, name: str = "shared", src: str = "int f() { return 1; }", log: str = "/dev/null",
         build: str = "False") -> str:
    return EXT.format(tag=tag, name=name, src=src, log=log, build=build)


def test_candidates_that_differ_only_in_python_share_a_signature_and_a_different_source_does_not():
    first, second = build_signature(_ext("a")), build_signature(_ext("b"))
    assert first and first == second
    assert build_signature(_ext("a", src="int f() { return 2; }")) != first
    assert build_signature(_ext("a", name="other")) != first
    assert build_signature("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n") == ""  # nothing to build
    assert build_signature(None) is None  # unreadable
    assert build_signature("from torch.utils.cpp_extension import load_inline\ndef broken(:\n") is None
    opaque = _ext("a").replace('SRC = "int f() { return 1; }"', "SRC = open('k.cpp').read()")
    assert build_signature(opaque) is None  # a source the analysis cannot read counts as its own build


def test_the_most_shared_build_goes_first_at_normal_priority_and_every_other_compile_is_niced():
    sources = [_ext("0", name="lone"), _ext("1"), None, _ext("3"), "import torch\n", _ext("5", name="pair"),
               _ext("6", name="pair"), _ext("7")]
    plan = compile_plan(sources, 10)
    assert plan == [(1, 0), (3, 0), (7, 0), (0, 10), (2, 10), (4, 10), (5, 10), (6, 10)]
    assert sorted(i for i, _ in plan) == list(range(len(sources)))  # every candidate once


def test_equally_shared_builds_all_go_first_and_nothing_shared_keeps_the_batch_as_it_is():
    tied = [_ext("0", name="x"), _ext("1", name="y"), _ext("2", name="lone"), _ext("3", name="x"),
            _ext("4", name="y")]
    assert compile_plan(tied, 7) == [(0, 0), (1, 0), (3, 0), (4, 0), (2, 7)]
    distinct = [_ext(str(k), name=f"n{k}") for k in range(4)]
    assert compile_plan(distinct, 10) == [(k, 0) for k in range(4)]
    assert compile_plan(tied, 0) == [(k, 0) for k in range(5)]  # compile_nice 0: off


def test_a_compile_worker_runs_at_the_niceness_it_was_given(tmp_path):
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    worker = spare_compile_worker(config, 5)
    try:
        assert os.getpriority(os.PRIO_PROCESS, worker.proc.pid) == min(19, os.nice(0) + 5)
    finally:
        worker.kill()


def test_verify_many_compiles_the_shared_build_at_normal_priority_and_the_others_niced(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    log = tmp_path / "ran.log"
    names = {"s0": "shared", "s1": "shared", "lone": "lone", "s2": "shared"}
    pairs = [(problem, write(tmp_path, f"{tag}.py", _ext(tag, name=name, log=str(log)))) for tag, name in names.items()]
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60, lookahead=2, compile_nice=6)
    with Verifier(config) as verifier:
        verdicts = dict(verifier.verify_many(pairs))
    assert all(v.accepted for v in verdicts.values()), [v.message for v in verdicts.values()]
    base = os.nice(0)
    compiled = {}
    for line in log.read_text().splitlines():
        tag, in_compile, nice = line.split()
        if in_compile == "True":
            compiled[tag] = int(nice)
    assert compiled == {"s0": base, "s1": base, "s2": base, "lone": min(19, base + 6)}


def test_an_empty_batch_and_a_single_candidate_need_no_plan(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60)
    with Verifier(config) as verifier:
        assert list(verifier.verify_many([])) == []  # a resumed batch with everything judged already
        only = write(tmp_path, "only.py", _ext("only"))
        [(index, verdict)] = list(verifier.verify_many([(problem, only)]))
    assert index == 0 and verdict.accepted, verdict.message
