"""Attacks on the OS isolation of candidate processes, run the way a candidate would run them (module-level Python
that executes in the compile worker and again in the candidate worker), with static checks off so that only the
OS layers stand in the way: no TCP connection to a listener the test holds, no process left after `verify`
returns, no file written outside the candidate's scratch folder, no read of another process's /proc files and no
signal to the reference worker.

Each attack prints what it tried; the wrong-on-purpose ones (`add_only`) are rejected, so the verdict keeps their
output tail and the test can see that the attack ran.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from kernelmosaic.contracts.isolation import missing
from kernelmosaic.verify import Status, Verifier, VerifyConfig
from kernelmosaic.verify.isolation import plan_for

from .kit import PROBLEM_ADD_RELU, candidate, write

pytestmark = pytest.mark.slow

CPU = plan_for("cpu")
NEEDS_LANDLOCK = pytest.mark.skipif(not CPU.landlock, reason="no Landlock on this kernel: writes outside the scratch "
                                    "folder are not confined here (the verdict records it and is not verified)")


def _planter(label: str, targets: str, prelude: str = "") -> str:
    """Module-level candidate code that tries to write each path of `targets` (a Python expression the candidate
    evaluates) and prints `<label>: wrote PATH` or `<label>: refused PATH ERROR` for each. `prelude`: statements run
    first, inside the same function (indented by four spaces)."""
    return f'''
import glob as _g, os as _os, tempfile as _t
def _plant():
{prelude}    for t in {targets}:
        try:
            with open(t, "w") as f:
                f.write("raise SystemExit('poisoned')\\n")
            print(f"{label}: wrote {{t}}", flush=True)
        except OSError as e:
            print(f"{label}: refused {{t}} {{type(e).__name__}}", flush=True)
_plant()
'''


@pytest.fixture(scope="module")
def open_verifier(build_cache):
    """Static checks off: the OS layers must hold where a static rule misses."""
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing_budget_ms=20, timing_rounds=2,
                          compile_baseline=False, run_timeout_s=20, memory_limit_gb=8, static_checks=False)
    with Verifier(config) as verifier:
        yield verifier


def _log(verdict) -> str:
    return verdict.compile.log + "\n" + verdict.candidate_output_tail


def test_no_tcp_connection_and_the_verdict_stays_honest(open_verifier, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    extra = f'''
import os as _o, socket as _s
def _phone_home():
    try:
        c = _s.create_connection(("127.0.0.1", {port}), timeout=2)
        c.sendall(b"weights please")
        said = "connect: connected"
    except OSError as e:
        said = f"connect: failed {{type(e).__name__}} {{e}}"
    print(said, flush=True)
_phone_home()
'''
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    try:
        conn, _ = listener.accept()
        conn.close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    assert not connected, "a candidate process reached the test's listener"
    said = _log(verdict)  # the kernel is wrong on purpose (no ReLU) so that the verdict keeps the output tail
    assert "connect: failed" in said and "connect: connected" not in said, said[-2000:]
    assert verdict.status == Status.output_mismatch, (verdict.status, verdict.message)  # its kernel's own verdict
    assert not missing(verdict.env.isolation), verdict.env.isolation


def _sleepers(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_setsid_double_fork_leaves_no_process(open_verifier, tmp_path):
    token = f"600.{os.getpid()}{int(time.time()) % 100000}"
    extra = f'''
import os as _os
def _detach():
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            _os.execvp("sleep", ["sleep", "{token}"])
        _os._exit(0)
    print("sleeper: forked", flush=True)
_detach()
'''
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    assert not verdict.accepted
    assert "sleeper: forked" in _log(verdict)
    deadline = time.monotonic() + 5  # a killed process is reaped by its new parent asynchronously
    while (left := _sleepers(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:  # never leave it running, whatever the verdict of this test
        os.kill(pid, 9)
    assert not left, f"a detached candidate process outlived verify: {left}"


@NEEDS_LANDLOCK
def test_no_write_into_its_own_code_through_proc_self_mem(open_verifier, tmp_path):
    """`/proc/self/mem` writes ignore page protections (the kernel's FOLL_FORCE), so a candidate could patch the
    clock's code, or a read-only clock pointer, in the worker that times it. Landlock denies opening it for writing
    (reading stays allowed: the process's own memory is no secret from it), under each of the names the same file
    has: per thread (`/proc/self/task/TID/mem`, which a CPU worker was allowed to write while its own task folder
    stayed writable for CUDA's sake), through the pid and through `thread-self`."""
    extra = '''
import ctypes as _c, os as _o, threading as _th
def _patch_self():
    where = _c.cast(_c.CDLL(None).clock_gettime, _c.c_void_p).value
    me, tid = _o.getpid(), _th.get_native_id()
    for path in ("/proc/self/mem", f"/proc/{me}/mem", f"/proc/self/task/{tid}/mem", f"/proc/{me}/task/{tid}/mem",
                 "/proc/thread-self/mem"):
        try:
            fd = _o.open(path, _o.O_RDWR)
        except OSError as e:
            print(f"selfmem: refused {path} {type(e).__name__}", flush=True)
            continue
        try:
            print(f"selfmem: wrote {path} {_o.pwrite(fd, _o.pread(fd, 1, where), where)} byte", flush=True)
        finally:
            _o.close(fd)
_patch_self()
'''
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    log = _log(verdict)
    assert log.count("selfmem: refused") == 5 and "selfmem: wrote" not in log, log[-2000:]
    assert log.count("PermissionError") >= 5, log[-2000:]
    assert verdict.status == Status.output_mismatch, (verdict.status, verdict.message)  # its kernel's own verdict


@NEEDS_LANDLOCK
def test_no_write_outside_the_scratch_folder(open_verifier, tmp_path):
    outside = tmp_path / "escaped"
    outside.mkdir()
    extra = _planter("plant", f'[{str(outside / "from_candidate.txt")!r}] + [d + "/triton.py" for d in '
                              '_g.glob("/tmp/km-reference-*") + _g.glob(_t.gettempdir() + "/km-reference-*")]')
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    assert not verdict.accepted
    log = _log(verdict)
    assert "plant: refused" in log and "plant: wrote" not in log, log[-2000:]
    assert not (outside / "from_candidate.txt").exists()
    assert not any(Path(p).name == "triton.py" for p in _scan_reference_scratch())


@NEEDS_LANDLOCK
def test_no_write_into_the_build_cache_from_a_candidates_process(open_verifier, build_cache, tmp_path):
    """A candidate that knows the build cache (the worst case: its path given) tries, from its top level (the
    compile worker, then the candidate worker), to replace a published extension's library and mark, plant a folder
    for an extension another candidate will ask for, and write the cache's root. Every write is refused, and the
    honest candidate judged next loads the library its own source built."""
    problem = write(tmp_path, "p.py", PROBLEM_ADD_RELU)
    honest = write(tmp_path, "honest.py",
                   candidate("return ext.add_relu(a, b)").replace("km_test_ext", "km_victim_ext"))
    first = open_verifier.verify(problem, honest)
    assert first.accepted, first.message
    (victim,) = build_cache.glob("km_victim_ext_*")
    library = next(victim.glob("*.so"))
    before = library.read_bytes()
    targets = [str(library), str(victim / "km_published"), str(victim / "planted.txt"),
               str(build_cache / ("km_future_ext_" + "0" * 16)) + "/km_future_ext.so", str(build_cache / "root.txt")]
    prelude = (f"    try:\n        _os.makedirs({targets[3].rsplit('/', 1)[0]!r})\n        print('cache: wrote a folder')\n"
               f"    except OSError as e:\n        print(f'cache: refused a folder {{type(e).__name__}}')\n")
    extra = _planter("cache", repr(targets), prelude=prelude)
    verdict = open_verifier.verify(problem, write(tmp_path, "c.py", candidate("return ext.add_only(a, b)",
                                                                              extra=extra)))
    assert not verdict.accepted
    log = _log(verdict)
    assert "cache: refused" in log and "cache: wrote" not in log, log[-2000:]
    assert library.read_bytes() == before
    assert not (victim / "planted.txt").exists() and not (build_cache / "root.txt").exists()
    assert not (build_cache / ("km_future_ext_" + "0" * 16)).exists()
    again = open_verifier.verify(problem, honest)
    assert again.accepted, again.message


def _scan_reference_scratch() -> list[str]:
    import glob
    import tempfile

    return glob.glob(f"{tempfile.gettempdir()}/km-reference-*/*")


def test_no_proc_read_or_signal_of_the_parent_or_reference(open_verifier, tmp_path):
    problem = write(tmp_path, "p.py", PROBLEM_ADD_RELU)
    first = open_verifier.verify(problem, write(tmp_path, "ok.py", candidate("return ext.add_relu(a, b)")))
    ref_pid = first.workers.reference_pid
    assert ref_pid and Path(f"/proc/{ref_pid}").exists()
    extra = f'''
import ctypes as _c, os as _os, signal as _sig
def _peek():
    _c.CDLL(None).umount2(b"/proc", 2)  # a private /proc over the host's: try to take it away
    for pid in ({os.getpid()}, {ref_pid}, _os.getppid()):
        for name in ("environ", "cmdline", "cwd", "mem"):
            path = f"/proc/{{pid}}/{{name}}"
            try:
                got = _os.readlink(path) if name == "cwd" else open(path, "rb").read(4096)
                print(f"peek: got {{path}} {{got[:80]!r}}", flush=True)
            except (OSError, ValueError) as e:
                print(f"peek: denied {{path}} {{type(e).__name__}}", flush=True)
        try:
            _os.kill(pid, _sig.SIGSTOP)
            print(f"peek: signalled {{pid}}", flush=True)
        except OSError as e:
            print(f"peek: signal refused {{pid}} {{type(e).__name__}}", flush=True)
_peek()
'''
    verdict = open_verifier.verify(problem, write(tmp_path, "peek.py", candidate("return ext.add_only(a, b)", extra=extra)))
    assert not verdict.accepted
    log = _log(verdict)
    assert f"peek: denied /proc/{ref_pid}/environ" in log, log[-3000:]
    assert f"peek: denied /proc/{os.getpid()}/environ" in log
    for pid in (os.getpid(), ref_pid):
        assert f"peek: got /proc/{pid}/environ" not in log and f"peek: got /proc/{pid}/mem" not in log
        assert f"peek: got /proc/{pid}/cwd" not in log  # the scratch folder of another worker stays unnamed
        assert f"peek: signalled {pid}" not in log
    assert Path(f"/proc/{ref_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T"  # not stopped
    again = open_verifier.verify(problem, write(tmp_path, "ok2.py", candidate("return ext.add_relu(a, b)")))
    assert again.accepted, (again.status, again.message)


@NEEDS_LANDLOCK
def test_what_judges_is_out_of_reach_of_a_candidate_that_finds_the_cache(open_verifier, build_cache, tmp_path):
    """What judges lives beside the build cache (`paths.judge_dir`): derived problems the reference imports, cached
    baselines, compile records, device locks. The candidate finds the cache the way any could, from where its own
    extension was loaded, and goes for its neighbour."""
    from kernelmosaic.paths import judge_dir

    planted = judge_dir(build_cache) / "derived" / "0000_test_planted.py"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("# a derived problem\n")
    extra = '''
import os as _os
def _reach():
    caches = [_os.path.dirname(_os.path.dirname(ext.__file__))]
    tried, wrote = 0, []
    for cache in caches:
        judge = cache.rstrip("/") + "-judge"
        if not _os.path.isdir(judge):
            continue
        for root, _, files in _os.walk(judge):
            for name in files + ["planted_by_candidate.py"]:
                t = _os.path.join(root, name)
                tried += 1
                try:
                    with open(t, "a") as f:
                        f.write("\\nraise SystemExit('poisoned')\\n")
                    wrote.append(t)
                except OSError as e:
                    if name == "0000_test_planted.py":
                        print(f"reach: refused {t} {type(e).__name__}", flush=True)
    print(f"reach: tried {tried}, wrote {wrote}", flush=True)  # one line: the output tail is bounded
_reach()
'''
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    assert not verdict.accepted
    log = _log(verdict)
    assert f"reach: refused {planted}" in log and "wrote []" in log, log[-3000:]
    assert planted.read_text() == "# a derived problem\n"
    assert not list(judge_dir(build_cache).rglob("planted_by_candidate.py"))


@NEEDS_LANDLOCK
def test_the_users_triton_and_inductor_caches_are_out_of_reach(open_verifier, build_cache, tmp_path):
    """The reference and the torch.compile baseline load compiled code from this user's Inductor and Triton caches;
    candidate processes get caches of their own in their scratch folder (`isolation.candidate_caches`), which no
    other process reads."""
    import getpass

    inductor = Path("/tmp") / f"torchinductor_{getpass.getuser()}"
    triton = Path.home() / ".triton"
    for folder in (inductor, triton):
        folder.mkdir(parents=True, exist_ok=True)
    extra = _planter("seed", repr([str(inductor / "planted_by_candidate.py"), str(triton / "planted_by_candidate.py")]),
                     prelude='    print("caches:", _os.environ.get("TORCHINDUCTOR_CACHE_DIR"), '
                             '_os.environ.get("TRITON_CACHE_DIR"), flush=True)\n')
    verdict = open_verifier.verify(write(tmp_path, "p.py", PROBLEM_ADD_RELU),
                                   write(tmp_path, "c.py", candidate("return ext.add_only(a, b)", extra=extra)))
    assert not verdict.accepted
    log = _log(verdict)
    assert "seed: refused" in log and "seed: wrote" not in log, log[-3000:]
    lines = [ln.split()[1:] for ln in log.splitlines() if ln.startswith("caches: ")]
    assert lines, log[-3000:]
    for inductor_dir, triton_dir in lines:  # the worker's own scratch folder, not the shared build cache
        assert "/km-candidate-" in inductor_dir and inductor_dir.endswith("/tmp/inductor"), inductor_dir
        assert triton_dir == inductor_dir[: -len("inductor")] + "triton", triton_dir
        assert not inductor_dir.startswith(str(build_cache)), inductor_dir
    assert not (inductor / "planted_by_candidate.py").exists() and not (triton / "planted_by_candidate.py").exists()
