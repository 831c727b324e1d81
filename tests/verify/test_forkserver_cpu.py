"""Workers forked from the fork server (verify/forkserver.py, kmworker/zygote.py) are the process a fresh
`python -m kmworker` would be: a candidate that looks around from its top level finds its own temporary folder and
caches (not the server's), the worker's own environment, only its own descriptors (no way to the server, which
could fork processes outside the namespaces), its own PID namespace, and no capability. With the server off, the
same judgement starts workers as fresh interpreters and gets the same verdict and isolation layers."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

import pytest

from kernelmosaic.verify import Verifier, forkserver
from kernelmosaic.verify.pool import SAFE_PATH, worker_env

from .kit import PROBLEM_ADD_RELU, write

pytestmark = pytest.mark.slow

LOOKS_AROUND = r'''
import json
import os
import socket
import tempfile

import torch
import torch.nn as nn

facts = {"tempdir": tempfile.gettempdir(), "cwd": os.getcwd(), "pid": os.getpid(), "env": sorted(os.environ),
         "tmpdir_env": os.environ.get("TMPDIR", "")}
import torch._dynamo.package as _package
facts["dynamo_cache"] = str(getattr(_package.DynamoCache, "path_prefix", getattr(_package.DynamoCache, "_path", "")))
facts["inductor_env"] = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
kinds = {}
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        target = os.readlink(f"/proc/self/fd/{name}")
    except OSError:
        continue
    kind = ""
    if target.startswith("socket:"):
        try:
            s = socket.socket(fileno=os.dup(fd))
            kind = {socket.SOCK_STREAM: "stream", socket.SOCK_SEQPACKET: "seqpacket"}.get(s.type, str(s.type))
            s.close()
        except OSError as exc:
            kind = f"unreadable {exc}"
    kinds[fd] = [target, kind]
facts["fds"] = kinds
with open("/proc/self/status") as f:
    facts["status"] = {k: v.strip() for k, v in (line.split(":", 1) for line in f if ":" in line)
                       if k in ("CapEff", "CapPrm", "NSpid", "Threads")}
print("FACTS " + json.dumps(facts), flush=True)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b) + 1.0  # wrong on purpose: a rejected verdict keeps the output tail
'''


def _facts(verdict) -> dict:
    line = next((x for x in verdict.candidate_output_tail.splitlines() if x.startswith("FACTS ")), None)
    assert line is not None, (verdict.status, verdict.message, verdict.candidate_output_tail)
    return json.loads(line[len("FACTS "):])


def test_a_forked_candidate_finds_only_what_a_fresh_worker_would(cpu_verifier, tmp_path):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidate = write(tmp_path, "candidate.py", LOOKS_AROUND)
    with Verifier(cpu_verifier.config.model_copy(update={"static_checks": False})) as verifier:
        verdict = verifier.verify(problem, candidate, timing=False)
    assert not verdict.accepted
    facts = _facts(verdict)
    scratch = facts["cwd"]
    assert os.path.basename(scratch).startswith("km-"), scratch
    # its own temporary folder and caches, beneath its scratch folder: nothing the server's imports cached
    assert facts["tempdir"] == facts["tmpdir_env"] and facts["tempdir"].startswith(scratch), facts
    assert facts["inductor_env"].startswith(scratch), facts
    assert "km-forkserver-" not in json.dumps(facts), facts
    # the worker's environment: the allowlist plus its own settings, the server's absent
    assert "TMPDIR" in facts["env"] and "LD_BIND_NOW" in facts["env"]
    # descriptors: stdio and its one stream socket to the verifier; no seqpacket socket (the server's channel)
    sockets = [kind for _, (target, kind) in facts["fds"].items() if target.startswith("socket:")]
    assert sockets == ["stream"], facts["fds"]
    # its own PID namespace (init there), no capability, one thread at its top level besides torch's
    assert facts["pid"] == 1 and facts["status"]["NSpid"] == "1", facts["status"]
    assert int(facts["status"]["CapEff"], 16) == 0 and int(facts["status"]["CapPrm"], 16) == 0, facts["status"]
    assert {"userns", "netns", "pidns", "landlock-fs"} <= set(verdict.env.isolation), verdict.env.isolation


def test_the_same_judgement_without_the_server(cpu_verifier, tmp_path, monkeypatch):
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidate = write(tmp_path, "candidate.py", LOOKS_AROUND)
    config = cpu_verifier.config.model_copy(update={"static_checks": False})
    with Verifier(config) as verifier:
        forked = verifier.verify(problem, candidate, timing=False)
    monkeypatch.setenv(forkserver.SWITCH, "off")
    with Verifier(config) as verifier:
        fresh = verifier.verify(problem, candidate, timing=False)
    assert (forked.status, forked.message) == (fresh.status, fresh.message)
    assert forked.env.isolation == fresh.env.isolation
    a, b = _facts(forked), _facts(fresh)
    for key in ("env", "pid"):
        assert a[key] == b[key], (key, a[key], b[key])
    def shape(facts: dict) -> list:  # what each descriptor is (not its number), its own scratch folder left out
        return sorted(("socket" if target.startswith("socket:") else target.replace(facts["cwd"], "<scratch>"), kind)
                      for target, kind in facts["fds"].values())

    assert shape(a) == shape(b)


def test_a_forked_worker_killed_is_reported_killed_and_its_pid_stays_until_asked():
    env = worker_env({"PYTHONDONTWRITEBYTECODE": "1"})
    server = forkserver.ForkServer([sys.executable, *SAFE_PATH, "-m", "kmworker.zygote"], env,
                                   ("userns", "netns", "pidns"))
    try:
        ours, theirs = socket.socketpair()
        scratch = os.path.realpath(os.environ.get("TMPDIR", "/tmp"))
        with open(os.devnull, "wb") as out:
            proc = server.spawn(["--role", "compile", "--device", "cpu"], env, scratch, theirs, ours, out.fileno())
        theirs.close()
        assert proc.poll() is None
        proc.kill()
        assert proc.wait(timeout=30) == -signal.SIGKILL  # the outer fork ends as its worker did
        assert proc.poll() == -signal.SIGKILL
        proc.kill()  # reaped: a second kill signals nothing (the pid may belong to another process now)
        ours.close()
    finally:
        server.close()
    assert not server.alive and not server.scratch.exists()


def test_an_unknown_switch_value_is_an_error(monkeypatch):
    monkeypatch.setenv(forkserver.SWITCH, "sometimes")
    with pytest.raises(ValueError, match="KERNELMOSAIC_FORK_SERVER"):
        forkserver.enabled("cpu")


def test_the_server_refuses_a_request_it_does_not_know():
    env = worker_env({"PYTHONDONTWRITEBYTECODE": "1"})
    server = forkserver.ForkServer([sys.executable, *SAFE_PATH, "-m", "kmworker.zygote"], env, ())
    try:
        with pytest.raises(forkserver.ForkServerError, match="unknown op"):
            server._ask({"op": "exec", "argv": ["/bin/sh"]})
        assert server.alive  # it answered and goes on
        assert server.status(os.getpid()) == -signal.SIGKILL  # not its child: reported gone, never waited on
    finally:
        server.close()


def test_servers_are_few_and_one_whose_fork_still_runs_is_kept(monkeypatch):
    """Each server holds torch's import: a process whose workers' environment keeps changing keeps at most
    `MAX_SERVERS`, dropping the least recently used, but never one whose fork may still run (only it can report that
    fork's exit status)."""
    command = [sys.executable, *SAFE_PATH, "-m", "kmworker.zygote"]
    monkeypatch.setattr(forkserver, "MAX_SERVERS", 2)
    env = worker_env({"PYTHONDONTWRITEBYTECODE": "1", "KM_FORK_VARIANT": "0"})
    first = forkserver.server_for(command, env, ())
    assert first is not None
    ours, theirs = socket.socketpair()
    scratch = os.path.realpath(os.environ.get("TMPDIR", "/tmp"))
    with open(os.devnull, "wb") as out:
        proc = first.spawn(["--role", "compile", "--device", "cpu"], env, scratch, theirs, ours, out.fileno())
    theirs.close()
    try:
        others = [forkserver.server_for(command, worker_env({"PYTHONDONTWRITEBYTECODE": "1",
                                                             "KM_FORK_VARIANT": str(k)}), ()) for k in (1, 2, 3)]
        assert all(s is not None for s in others)
        assert first.alive and proc.poll() is None  # kept: its fork runs
        assert not others[0].alive and not others[1].alive and others[2].alive  # dropped, least recently used first
        assert sum(not s.forks_alive() for s in forkserver._SERVERS.values()) <= 2
        assert forkserver.server_for(command, env, ()) is first  # found again, not started again
    finally:
        proc.kill()
        assert proc.wait(timeout=30) == -signal.SIGKILL
        ours.close()


def test_a_fork_of_the_verifiers_process_does_not_use_its_parents_servers():
    command = [sys.executable, *SAFE_PATH, "-m", "kmworker.zygote"]
    env = worker_env({"PYTHONDONTWRITEBYTECODE": "1"})
    parent = forkserver.server_for(command, env, ())
    assert parent is not None
    read, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no server of its parent's is offered to it
        os.close(read)
        os.write(write_end, b"none" if not forkserver._SERVERS else b"inherited")
        os._exit(0)
    os.close(write_end)
    got = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert got == b"none"
    assert parent.alive and forkserver.server_for(command, env, ()) is parent  # the parent's own still serves it


SCANS_ITS_MEMORY = r'''
import json
import os
import re

import torch
import torch.nn as nn

own = os.path.basename(os.getcwd())
found = set()
with open("/proc/self/maps") as f:
    maps = f.read().splitlines()
fd = os.open("/proc/self/mem", os.O_RDONLY)
for line in maps:
    parts = line.split()
    lo, hi = (int(x, 16) for x in parts[0].split("-"))
    if "rw" not in parts[1] or (len(parts) > 5 and parts[5] != "[heap]") or hi - lo > 1 << 28:
        continue  # the heap and anonymous writable memory: where freed strings stay
    try:
        data = os.pread(fd, hi - lo, lo)
    except OSError:
        continue
    found.update(m.group().decode() for m in re.finditer(rb"km-(?:candidate|compile|reference)-[A-Za-z0-9_]{6,}", data))
print("SCRATCH_NAMES " + json.dumps(sorted(found - {own})), flush=True)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b) + 1.0  # wrong on purpose: a rejected verdict keeps the output tail
'''


def test_no_other_workers_scratch_folder_is_in_a_forked_candidates_memory(cpu_verifier, tmp_path):
    """The server never receives a worker's environment or folder (they go on the worker's own socket), so a fork
    cannot find an earlier or a concurrent worker's scratch folder in the memory it inherits."""
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    earlier = write(tmp_path, "earlier.py", LOOKS_AROUND)
    scanner = write(tmp_path, "scanner.py", SCANS_ITS_MEMORY)
    with Verifier(cpu_verifier.config.model_copy(update={"static_checks": False})) as verifier:
        for _ in range(2):  # earlier candidates forked from the same server, each with its own scratch folder
            verifier.verify(problem, earlier, timing=False)
        verdict = verifier.verify(problem, scanner, timing=False)
    line = next((x for x in verdict.candidate_output_tail.splitlines() if x.startswith("SCRATCH_NAMES ")), None)
    assert line is not None, (verdict.status, verdict.message, verdict.candidate_output_tail)
    assert json.loads(line[len("SCRATCH_NAMES "):]) == []
