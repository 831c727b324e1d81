"""The batch's most shared build first: which candidates share a build (read statically), the order and niceness of
their compiles, and the niceness a real compile worker runs at inside `verify_many`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig, pool
from kernelmosaic.verify.build_order import Start, build_signature, compile_plan
from kernelmosaic.verify.compile_stage import spare_compile_worker
from kernelmosaic.verify.pool import kill_all_workers
from tests.verify.kit import PROBLEM_ADD_RELU, write

EXT = '''\
import os
from pathlib import Path
import sys
import time
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = "{src}"
with open({log!r}, "a") as out:  # which worker ran this module, at which niceness, when
    out.write(f"{tag} {{'compile' in sys.argv}} {{os.nice(0)}} {{time.time()}}\\n")
if 'compile' in sys.argv:
    {compiling}
if {build}:  # never true in the tests: the build is seen statically, not run
    ext = load_inline(name="{name}", cpp_sources=SRC, functions=["f"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)
'''


def _ext(tag: str, name: str = "shared", src: str = "int f() { return 1; }", log: str = "/dev/null",
         build: str = "False", compiling: str = "pass") -> str:
    """`compiling`: a statement the module runs in its compile worker (it does not change the build)."""
    return EXT.format(tag=tag, name=name, src=src, log=log, build=build, compiling=compiling)


@pytest.fixture
def shared_log(tmp_path: Path):
    """A file every worker may append to: workers write only their scratch folder and /dev (/dev/shm included)."""
    log = Path("/dev/shm") / f"km-build-order-{os.getpid()}-{tmp_path.name}.log"
    log.unlink(missing_ok=True)
    yield log
    log.unlink(missing_ok=True)


def _runs(log: Path) -> dict[str, tuple[int, float]]:
    """tag: (niceness, time) of the compile worker that imported it."""
    runs = {}
    for line in log.read_text().splitlines():
        tag, in_compile, nice, when = line.split()
        if in_compile == "True":
            runs[tag] = (int(nice), float(when))
    return runs


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


def test_the_most_shared_build_goes_first_at_normal_priority_its_followers_and_every_other_compile_niced():
    sources = [_ext("0", name="lone"), _ext("1"), None, _ext("3"), "import torch\n", _ext("5", name="pair"),
               _ext("6", name="pair"), _ext("7")]
    plan = compile_plan(sources, 10)
    assert plan == [Start(1, 0), Start(3, 10, after=1), Start(7, 10, after=1), Start(0, 10), Start(2, 10),
                    Start(4, 10), Start(5, 10), Start(6, 10, after=5)]
    assert sorted(s.index for s in plan) == list(range(len(sources)))  # every candidate once
    assert all(plan.index(s) > [p.index for p in plan].index(s.after) for s in plan if s.after is not None)


def test_equally_shared_builds_all_lead_and_nothing_shared_keeps_the_batch_as_it_is():
    tied = [_ext("0", name="x"), _ext("1", name="y"), _ext("2", name="lone"), _ext("3", name="x"),
            _ext("4", name="y")]
    assert compile_plan(tied, 7) == [Start(0, 0), Start(1, 0), Start(3, 7, after=0), Start(4, 7, after=1),
                                     Start(2, 7)]
    distinct = [_ext(str(k), name=f"n{k}") for k in range(4)]
    assert compile_plan(distinct, 10) == [Start(k, 0) for k in range(4)]
    # compile_nice 0: no order and no niceness, but a shared build is still built once and followed
    assert compile_plan(tied, 0) == [Start(0, 0), Start(1, 0), Start(2, 0), Start(3, 0, after=0),
                                     Start(4, 0, after=1)]
    unreadable = [None, None, "import torch\n", "import torch\n"]  # neither unreadable nor nothing-to-build is shared
    assert compile_plan(unreadable, 10) == [Start(k, 0) for k in range(4)]


def test_a_compile_worker_runs_at_the_niceness_it_was_given(tmp_path):
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    worker = spare_compile_worker(config, 5)
    try:  # the worker process itself (inside `unshare` where that wraps it) applies it first thing at its start
        worker.activate()
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == min(19, os.nice(0) + 5)
    finally:
        worker.kill()


def test_verify_many_compiles_the_shared_build_at_normal_priority_and_the_others_niced(tmp_path, shared_log):
    """s0 leads the shared build at normal priority; s1 and s2 follow it niced; the lone build is niced."""
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    log = shared_log
    names = {"s0": "shared", "s1": "shared", "lone": "lone", "s2": "shared"}
    pairs = [(problem, write(tmp_path, f"{tag}.py", _ext(tag, name=name, log=str(log),
                                                     compiling="time.sleep(3)" if tag == "s0" else "pass")))
             for tag, name in names.items()]
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60, lookahead=2, compile_nice=6)
    with Verifier(config) as verifier:
        verdicts = dict(verifier.verify_many(pairs))
    assert all(v.accepted for v in verdicts.values()), [v.message for v in verdicts.values()]
    base = os.nice(0)
    runs = _runs(log)
    assert {tag: nice for tag, (nice, _) in runs.items()} == {"s0": base, "s1": min(19, base + 6),
                                                             "s2": min(19, base + 6), "lone": min(19, base + 6)}
    for tag in ("s1", "s2"):  # they compiled only once s0's compile (3 s of it asleep) was done
        assert runs[tag][1] >= runs["s0"][1] + 3, runs
        assert verdicts[list(names).index(tag)].phase_seconds["build_wait"] >= 3
    assert runs["lone"][1] < runs["s0"][1] + 3  # an unshared build does not wait on it


def test_followers_compile_and_are_judged_on_their_own_when_their_leader_fails(tmp_path, shared_log):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    log = shared_log
    leader = write(tmp_path, "s0.py", _ext("s0", log=str(log), compiling="os._exit(3)"))
    followers = [write(tmp_path, f"s{k}.py", _ext(f"s{k}", log=str(log))) for k in (1, 2)]
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60, lookahead=2)
    with Verifier(config) as verifier:
        verdicts = dict(verifier.verify_many([(problem, c) for c in (leader, *followers)]))
    assert verdicts[0].status == "crash" and "compile worker died" in verdicts[0].message, verdicts[0].message
    assert verdicts[1].accepted and verdicts[2].accepted, (verdicts[1].message, verdicts[2].message)


def test_a_batch_stopped_early_leaves_no_follower_worker_running(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidates = [write(tmp_path, "s0.py", _ext("s0", compiling="time.sleep(60)"))]
    candidates += [write(tmp_path, f"s{k}.py", _ext(f"s{k}")) for k in (1, 2)]
    candidates.append(write(tmp_path, "other.py", _ext("other", name="other")))
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60, compile_timeout_s=120, lookahead=2)
    with Verifier(config) as verifier:
        batch = verifier.verify_many([(problem, c) for c in candidates])
        index, _ = next(batch)  # the unshared candidate, while s1 and s2 wait on s0's compile with workers loaded
        assert index == 3
        followers = [w for w in list(pool._LIVE) if w.role == "compile" and w.proc and w.proc.poll() is None]
        assert len(followers) >= 3  # s0's and the two followers'
        kill_all_workers()  # what Ctrl-C does: s0's compile returns at once
        batch.close()
    assert not [w for w in followers if w.proc.poll() is None]


def test_an_empty_batch_and_a_single_candidate_need_no_plan(tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    config = VerifyConfig(device="cpu", trials=1, cache_dir=tmp_path / "cache", static_checks=False, timing=False,
                          compile_baseline=False, run_timeout_s=60)
    with Verifier(config) as verifier:
        assert list(verifier.verify_many([])) == []  # a resumed batch with everything judged already
        only = write(tmp_path, "only.py", _ext("only"))
        [(index, verdict)] = list(verifier.verify_many([(problem, only)]))
    assert index == 0 and verdict.accepted, verdict.message
