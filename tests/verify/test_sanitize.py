"""compute-sanitizer output parsing (the tool itself runs only on a GPU, via --sanitize)."""

from __future__ import annotations


def test_sanitizer_summary_parsing():
    from kernelmosaic.verify.sanitize import parse_summary

    assert parse_summary("========= Invalid __global__ write of size 4\n========= ERROR SUMMARY: 3 errors\n") == 3
    assert parse_summary("========= ERROR SUMMARY: 0 errors") == 0
    assert parse_summary("Device not supported") is None


def test_racecheck_summary_is_parsed_too():
    """racecheck words its summary differently; the H200 run showed it (counted as 'no summary' before this)."""
    from kernelmosaic.verify.sanitize import parse_summary

    assert parse_summary("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)") == 0
    assert parse_summary("========= RACECHECK SUMMARY: 5 hazards displayed (2 errors, 3 warnings)") == 2


def test_the_four_tools_are_each_run_and_reported_in_order(tmp_path, monkeypatch):
    """The tools run side by side; each one's own result lands under its own name, and only memcheck, racecheck and
    synccheck errors reject. A stand-in `compute-sanitizer` on PATH answers per tool (the real one needs a GPU: tests/verify/test_verify_gpu.py)."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    tool = tmp_path / "compute-sanitizer"
    tool.write_text("#!/bin/sh\n"
                    'case "$2" in\n'
                    '  memcheck) echo "========= Invalid __global__ read of size 4"; echo "========= ERROR SUMMARY: 2 errors";;\n'
                    '  racecheck) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)";;\n'
                    '  synccheck) echo "========= Barrier error detected"; echo "========= ERROR SUMMARY: 1 error";;\n'
                    '  initcheck) echo "========= ERROR SUMMARY: 1 error";;\n'
                    "esac\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    (tmp_path / "p.py").write_text(PROBLEM)
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache")
    assert [k for k in report if k not in ("ran", "shapes", "tools", "isolation")] == ["memcheck", "racecheck", "synccheck",
                                                                          "initcheck"]
    assert report["tools"] == ["memcheck", "racecheck", "synccheck", "initcheck"]
    assert [report[t]["errors"] for t in report["tools"]] == [2, 0, 1, 1]
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-memcheck", "reject"),
                                                        ("sanitizer-synccheck", "reject"), ("sanitizer-initcheck", "flag")]
    assert "Invalid __global__ read" in findings[0].evidence


PROBLEM = """\
import torch

batch_size = 4096
dim = 4096
features = 512


class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(features))

    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [features]
"""


def test_small_shapes_shrink_only_the_input_sizes_to_odd_sixteenths():
    from kernelmosaic.tasks.shapes import small_shapes, small_size

    assert small_shapes(PROBLEM) == {"batch_size": 257, "dim": 257}  # `features` also builds the model: kept
    assert [small_size(v) for v in (7, 64, 65, 128, 1000, 4096, 16384)] == [7, 64, 33, 33, 63, 257, 1025]
    assert small_shapes("this is not python(") == {}


def _stand_in(tmp_path, monkeypatch, body: str):
    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    # $PROBLEM is the problem file: compute-sanitizer --tool NAME --print-limit 5 python ... kmworker.profile_one PROBLEM
    find = 'for a in "$@"; do case "$a" in */p.py) PROBLEM="$a";; esac; done\n'
    tool.write_text("#!/bin/sh\n" + find + f'grep -h "^batch_size" "$PROBLEM" >> {tmp_path}/seen\n' + body)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    (tmp_path / "p.py").write_text(PROBLEM)


def test_the_tools_run_the_problem_at_its_small_shapes(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'echo "========= ERROR SUMMARY: 0 errors"\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache")
    # the inputs' sizes odd, about a sixteenth; the model's width a sixteenth that keeps its power-of-two factor
    assert findings == [] and report["shapes"] == {"batch_size": 257, "dim": 257, "features": 32}
    assert (tmp_path / "seen").read_text().splitlines() == ["batch_size = 257"] * 4
    assert (tmp_path / "p.py").read_text() == PROBLEM  # the task's own file is never rewritten


def test_where_the_small_model_does_not_run_the_inputs_alone_are_shrunk(tmp_path, monkeypatch):
    """A candidate that ties a kernel to the model's width fails there; the inputs' small sizes are tried next."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'if grep -q "^features = 32" "$PROBLEM"; then exit 1; fi\n'
                                     'echo "========= ERROR SUMMARY: 0 errors"\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache",
                                     tools=("racecheck",))
    assert findings == [] and report["shapes"] == {"batch_size": 257, "dim": 257}
    assert (tmp_path / "seen").read_text().splitlines() == ["batch_size = 257"] * 2


def test_errors_at_the_small_model_go_straight_to_the_stated_shapes(tmp_path, monkeypatch):
    """Errors, unlike an unfinished forward, are settled by the problem's own shapes, not by other small ones."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'if grep -q "^features = 32" "$PROBLEM"; then\n'
                                     '  echo "========= RACECHECK SUMMARY: 1 hazards displayed (1 errors, 0 warnings)"\n'
                                     'else echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"; fi\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache",
                                     tools=("racecheck",))
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-small-shapes", "flag")]
    assert report["shapes"] == "as stated (the small shapes showed errors)"
    assert (tmp_path / "seen").read_text().splitlines() == ["batch_size = 257", "batch_size = 4096"]


def test_a_forward_that_fails_at_the_small_shapes_is_sanitized_at_its_own(tmp_path, monkeypatch):
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'echo "========= ERROR SUMMARY: 0 errors"\n'
                                     'if grep -q "^batch_size = 257" "$PROBLEM"; then exit 1; fi\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache")
    assert report["shapes"].startswith("as stated") and findings == []
    # both small tiers (the model's width shrunk, then the inputs alone) leave the forward unfinished
    assert sorted((tmp_path / "seen").read_text().splitlines()) == ["batch_size = 257"] * 8 + ["batch_size = 4096"] * 4
    assert all(report[t]["exit"] == 0 for t in ("memcheck", "racecheck", "synccheck", "initcheck"))


def test_errors_only_at_the_small_shapes_are_a_flag_and_the_stated_shapes_decide(tmp_path, monkeypatch):
    """A kernel written for the stated size may read out of bounds elsewhere: legitimate under kernelbench."""
    from kernelmosaic.verify.sanitize import run_sanitizer

    _stand_in(tmp_path, monkeypatch, 'if grep -q "^batch_size = 257" "$PROBLEM"; then\n'
                                     '  echo "========= Invalid __global__ read of size 4"; echo "========= ERROR SUMMARY: 3 errors"\n'
                                     'else echo "========= ERROR SUMMARY: 0 errors"; fi\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache")
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-small-shapes", "flag")]
    assert "sanitizer-memcheck" in findings[0].evidence and report["shapes"] == "as stated (the small shapes showed errors)"
    assert {k: report["memcheck"][k] for k in ("errors", "exit")} == {"errors": 0, "exit": 0}


RACY_SOURCES = {  # candidate source -> uses shared memory?
    "__global__ void k(float* o) { __shared__ float s[256]; s[threadIdx.x] = 0; }": True,
    "extern __shared__ float smem[];": True,
    "rowsum<<<rows, 256, 256 * sizeof(float), at::cuda::getCurrentCUDAStream()>>>(x, y);": True,
    "reduce<<<grid, block, smem_bytes>>>(x, y, n);": True,
    "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304);": True,
    "kern((blocks,), (256,), (x, y, n), shared_mem=1024)": True,
    "add<<<blocks, threads>>>(a, b, out, n);": False,
    "add<<<blocks, threads, 0, stream>>>(a, b, out, n);": False,
    "kern((blocks,), (256,), (x, y, n), shared_mem=0)": False,
    "out = torch.relu(x)  # shared weights, no kernel": False,
}


def test_shared_memory_is_found_in_the_source_and_names_its_line():
    from kernelmosaic.verify.sanitize import shared_memory_evidence

    for source, shared in RACY_SOURCES.items():
        assert bool(shared_memory_evidence(source)) is shared, source
    assert shared_memory_evidence("x = 1\ny = 2\n__shared__ float s[32];").startswith("line 3: __shared__")


def test_the_plan_says_which_tools_run_or_why_none():
    from kernelmosaic.contracts.sanitizer import TOOLS
    from kernelmosaic.verify.sanitize import RACE_TOOLS, sanitizer_plan

    shared = "__global__ void k() { __shared__ float s[32]; }"
    assert sanitizer_plan("cpu", True, True, shared) == ((), "not run: the cpu device runs no CUDA kernels")
    assert sanitizer_plan("cuda:0", True, True, "") == (tuple(TOOLS), "every tool (--sanitize)")
    tools, why = sanitizer_plan("cuda:0", False, True, shared)
    assert tools == RACE_TOOLS == ("racecheck", "synccheck") and why.startswith("race check: the source uses shared")
    assert sanitizer_plan("cuda", False, True, "add<<<b, t>>>(x);") == (
        (), "race check not needed: the candidate's source uses no shared memory")
    tools, why = sanitizer_plan("cuda", False, False, shared)
    assert tools == () and why.startswith("race check skipped: verify.race_check is off")


def test_the_race_check_runs_racecheck_and_synccheck_only(tmp_path, monkeypatch):
    from kernelmosaic.contracts.verdict import Status, Verdict
    from kernelmosaic.contracts.verified import sanitizer_passed
    from kernelmosaic.verify.sanitize import RACE_TOOLS, run_sanitizer

    _stand_in(tmp_path, monkeypatch, f'echo "$2" >> {tmp_path}/tools\n'
                                     'case "$2" in\n'
                                     '  racecheck) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)";;\n'
                                     '  *) echo "========= ERROR SUMMARY: 0 errors";;\n'
                                     'esac\n')
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache", tools=RACE_TOOLS)
    assert findings == [] and report["tools"] == ["racecheck", "synccheck"]
    assert sorted((tmp_path / "tools").read_text().split()) == ["racecheck", "synccheck"]
    # clean as far as it went, but not the full run a verified CUDA solution needs
    verdict = Verdict(accepted=True, status=Status.accepted, message="", problem_sha256="p", sanitizer=report)
    assert sanitizer_passed(verdict) is None


def test_a_tool_past_its_timeout_is_killed_with_its_program_and_claims_nothing(tmp_path, monkeypatch):
    """The program under the tool (here a `sleep` child) goes with it: nothing keeps running on the device."""
    import time

    from kernelmosaic.verify.sanitize import run_sanitizer

    # the target says how far it got (profile_one's stage lines) before it stalls
    _stand_in(tmp_path, monkeypatch, 'echo "km-profile-one stage torch $(date +%s)"\n'
                                     'echo "km-profile-one stage ready $(date +%s)" >&2\n'
                                     f'sleep 300 & echo $! >> {tmp_path}/children\nwait\n')
    started = time.monotonic()
    findings, report = run_sanitizer(tmp_path / "p.py", tmp_path / "c.py", {}, tmp_path / "cache", timeout_s=1.0,
                                     tools=("racecheck", "synccheck"))
    assert time.monotonic() - started < 30
    assert report["racecheck"]["timed_out"] and report["racecheck"]["errors"] is None
    assert [(f.rule, f.severity) for f in findings] == [("sanitizer-incomplete", "flag")]
    assert "racecheck: took longer than 1s: killed (the target's last stage: ready)" in findings[0].evidence
    assert set(report["racecheck"]["stages_s"]) == {"torch", "ready"}
    time.sleep(0.2)
    for pid in map(int, (tmp_path / "children").read_text().split()):
        assert not _alive(pid), f"the program under the tool (pid {pid}) outlived it"


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_synccheck_error_fails_the_sanitizer_gate():
    from kernelmosaic.contracts.verdict import Status, Verdict
    from kernelmosaic.contracts.verified import SANITIZER_GATES, sanitizer_passed

    assert SANITIZER_GATES == ("memcheck", "racecheck", "synccheck")
    ok = {"errors": 0, "exit": 0}
    report = {"ran": True, "tools": ["memcheck", "racecheck", "synccheck", "initcheck"], "memcheck": ok,
              "racecheck": ok, "synccheck": {"errors": 1, "exit": 0}, "initcheck": ok}
    verdict = Verdict(accepted=True, status=Status.accepted, message="", problem_sha256="p", sanitizer=report)
    assert sanitizer_passed(verdict) is False
    report["synccheck"] = ok
    assert sanitizer_passed(verdict.model_copy(update={"sanitizer": report})) is True
