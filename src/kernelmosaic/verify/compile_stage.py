"""The compile stage: a candidate's extensions asked for by its import in a fresh CPU-only compile worker and built by
builders that run none of its code, its result kept per source and toolchain (beneath the judge folder, out of
candidates' reach), the torch header precompiled for later builds.

A worker that never comes up (`WorkerStartFailed`) is no compile result: nothing about the candidate is known.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

from kernelmosaic.contracts.hashing import candidate_hash
from kernelmosaic.contracts.verdict import CompileInfo, Status
from kernelmosaic.paths import judge_dir, pch_dir
from kernelmosaic.verify.binary_check import extension_symbols
from kernelmosaic.verify.build_replies import BuildRecord, CompileReply, build_reply, compile_reply
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.judgement import Stop, status_of_death
from kernelmosaic.verify.pch_store import UnsafeFlags, precompile, second_sighting
from kernelmosaic.verify.pool import Worker, WorkerDied, WorkerError, WorkerStartFailed, calls_log
from kernelmosaic.verify.sandbox.kmworker import pch
from kernelmosaic.verify.sandbox.kmworker.published import PUBLISHED
from kernelmosaic.verify.slot import worker_limits
from kernelmosaic.verify.stopping import stop_requested

__all__ = ["BuildBusy", "cached_compile", "compile_stage", "precompile_header", "spare_compile_worker", "wait_for_build"]

log = logging.getLogger(__name__)


def _marker(source: str, config: VerifyConfig) -> Path:
    """Where the compile stage's result for this exact source and toolchain is kept."""
    limits = worker_limits(config, "cpu", "compile")
    # keyed by the toolchain too: a build that failed under one torch/arch/python must be retried under another
    toolchain = f"{torch.__version__}|{torch.version.cuda}|{limits.extra_env.get('TORCH_CUDA_ARCH_LIST', '')}|{sys.version}" \
                "|symbols2"  # results from before the binaries' symbols were read (from the objects: 2) are not reused
    return judge_dir(config.cache_dir) / "compiled" / f"{candidate_hash(source + chr(0) + toolchain)}.json"


def cached_compile(source: str, config: VerifyConfig) -> tuple[Status, str, CompileInfo] | None:
    """The compile stage's result without a compile worker, when there is nothing to build (no `load_inline`) or
    this exact candidate built before and its builds are still there (or the compiler rejected it before)."""
    if "load_inline" not in source:
        return Status.accepted, "", CompileInfo()  # Triton or plain module: nothing to build ahead of loading
    marker = _marker(source, config)
    if not marker.is_file():
        return None
    record = json.loads(marker.read_text())
    done = CompileInfo.model_validate(record["info"]).model_copy(update={"cache_hit": True, "seconds": 0.0})
    if record.get("error"):  # the compiler rejected this exact source before: it will again
        return Status.compile_error, record["error"], done
    if all((config.cache_dir / d / PUBLISHED).is_file() for d in record["dirs"]):
        return Status.accepted, "", done
    return None


class BuildBusy(Exception):
    """The compile stage's worker found one of the candidate's extensions being built by another process and did not
    wait (`compile_stage(wait=False)`): the caller lets go of its compile-gate place, waits on `build_dir`'s lock
    (`wait_for_build`) and runs the stage again."""

    def __init__(self, build_dir: Path) -> None:
        super().__init__(str(build_dir))
        self.build_dir = build_dir


def wait_for_build(build_dir: Path, timeout_s: float) -> None:
    """Block until no process holds `build_dir`'s build lock (`km.lock`, kmworker/loader.py), at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    with open(build_dir / "km.lock", "a+") as lock:
        while True:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
                return
            except BlockingIOError:
                if time.monotonic() > deadline or stop_requested():
                    return  # the stage's next try waits inside its worker, under its own timeout
                time.sleep(0.2)


def compile_stage(candidate: str, source: str, config: VerifyConfig, wait: bool = True,
                  worker: Worker | None = None, nice: int = 0) -> tuple[Status, str, CompileInfo]:
    """Build the candidate's extensions; returns (status, message, info). A CPU-only compile worker imports the
    candidate and reports the extensions it asks for that are not built yet; each is built by a builder, a worker
    that runs none of the candidate's code and may write only that extension's folder (`kmworker/published.py`);
    while the import stopped at an extension that was not built, it runs again. `wait=False`: raises `BuildBusy`
    when an extension is being built by another process, instead of waiting for it. `worker`: a compile worker
    launched ahead (`spare_compile_worker`) for the first import; it goes either way. `nice`: the new workers' CPU
    niceness (`build_order`)."""
    if (done := cached_compile(source, config)) is not None:
        if worker is not None:
            worker.kill()
        return done
    info = CompileInfo()
    marker = _marker(source, config)
    builds: list[BuildRecord] = []
    res = CompileReply(builds=[])
    for _ in range(_ROUNDS):
        try:
            res = compile_reply(_in_compile_worker(config, "compile", worker, nice, candidate=candidate))
        except Stop as stop:  # the reply was not what the compile worker sends: the candidate's process forged it
            return stop.status, stop.message, info
        except WorkerStartFailed:
            raise  # no compile ran: nothing about the candidate is known
        except WorkerDied as exc:
            return status_of_death(exc), f"compiling: {exc.detail}", info
        except WorkerError as exc:
            return Status.compile_error, f"compiling: {exc.error.get('message', '')[:500]}", info
        worker = None
        builds += res.builds
        for wanted in res.wanted:
            try:
                built = _build(config, wanted, wait, nice)
            except _Refused as exc:
                return Status.compile_error, str(exc), info
            except WorkerDied as exc:
                return status_of_death(exc), f"compiling: {exc.detail}", info
            builds += built
            if not all(b.ok for b in built):
                break
        if not res.stopped or not res.wanted or not all(b.ok for b in builds):
            break
    else:
        return Status.compile_error, f"the candidate's import still needed an unbuilt extension after {_ROUNDS} rounds " \
                                     "of building", info
    for b in [] if wait else [b for b in builds if b.busy and b.name]:
        folder = config.cache_dir / f"{b.name}_{b.key[:16]}"
        if folder.parent == config.cache_dir and (folder / "km.lock").is_file():
            raise BuildBusy(folder)
    info = CompileInfo(seconds=round(sum(b.seconds for b in builds), 3), cache_hit=bool(builds) and all(b.cache_hit for b in builds),
                       extensions=list(dict.fromkeys(b.name for b in builds)), log="\n".join(b.log for b in builds)[-200_000:],
                       steps={f"{b.name}:{k}": v for b in builds for k, v in b.steps.items()})
    failed = [b for b in builds if not b.ok]
    marker.parent.mkdir(parents=True, exist_ok=True)
    if failed:
        message = f"extension `{failed[0].name}` failed to build: {_first_error(failed[0].log)}"
        if failed[0].diagnosed:  # the build ran to completion and the compiler said no: it will again
            marker.write_text(json.dumps({"info": info.model_dump(mode="json"), "dirs": [], "error": message}))
        return Status.compile_error, message, info
    err = res.import_error
    if err and err.type in ("SyntaxError", "IndentationError", "TabError"):
        return Status.compile_error, f"Python {err.type}: {err.message[:300]}", info
    dirs = sorted({f"{b.name}_{b.key[:16]}" for b in builds})
    # what the builders' binaries call (a name the source hides is plain there); folder names come from the
    # candidate's process: only the cache's own folders are read
    info.symbols = extension_symbols(config.cache_dir / d for d in dirs if _FOLDER.fullmatch(d)
                                     and (config.cache_dir / d).is_dir())
    marker.write_text(json.dumps({"info": info.model_dump(mode="json"), "dirs": dirs}))
    for wanted in [b.pch_wanted for b in builds]:
        if wanted is not None and pch.is_index_key(wanted.get("key")) and \
                isinstance(wanted.get("build_dir"), str):  # a well-formed wish only
            precompile_header(wanted["key"], wanted["build_dir"], config)
    return Status.accepted, "", info


_ROUNDS = 4
"""Imports of one candidate at most: each may stop at an extension its top level uses before it is built."""
_FOLDER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}_[0-9a-f]{16}")


class _Refused(Exception):
    """The compile worker asked for a build the verifier will not run (its message is the verdict's)."""


def _build(config: VerifyConfig, wanted: dict, wait: bool, nice: int) -> list[BuildRecord]:
    """Build one extension the compile worker asked for (data from the candidate's process: its folder name must be
    one of the cache's) in a builder whose only writable folder is the extension's; its build records."""
    spec, key = wanted.get("spec"), wanted.get("key")
    if not isinstance(spec, dict) or not isinstance(key, str) or not re.fullmatch(r"[0-9a-f]{64}", key) \
            or not isinstance(spec.get("name"), str):
        raise _Refused("compiling: the candidate's process asked for a malformed build")
    folder = config.cache_dir / f"{spec['name']}_{key[:16]}"
    if not _FOLDER.fullmatch(folder.name) or folder.parent != config.cache_dir:
        raise _Refused(f"compiling: `{spec['name'][:80]}` is not an extension name the verifier builds")
    folder.mkdir(parents=True, exist_ok=True)
    limits = dataclasses.replace(worker_limits(config, "cpu", "compile"), nice=nice, writable=(str(folder),))
    builder = Worker("compile", "cpu", limits, keep_scratch=config.keep_scratch)
    try:
        builder.start()
        res = build_reply(builder.call("build", config.compile_timeout_s, spec=spec, key=key,
                                       cache_dir=str(config.cache_dir), wait=wait, pch_dir=str(pch_dir(config.cache_dir))))
    except WorkerError as exc:
        raise _Refused(f"compiling: {exc.error.get('message', '')[:500]}") from None
    except Stop as stop:
        raise _Refused(f"compiling: {stop.message}") from None
    finally:
        builder.kill()
    if not res.builds:  # the arguments failed before any build started (e.g. a wrong keyword)
        err = res.error
        raise _Refused(f"compiling: load_inline({spec['name'][:80]!r}, ...): {err.type if err else ''}: "
                       f"{err.message[:400] if err else ''}")
    return res.builds


def spare_compile_worker(config: VerifyConfig, nice: int = 0) -> Worker:
    """A fresh compile worker launched now (loading Python and torch) for a compile that will run later: a
    candidate waiting on another process's build of its extension retries in it the moment the build ends (on the
    H200, thirteen retries that each started their worker after the build ended up to 11 s after it)."""
    worker = _compile_worker(config, nice)
    worker.spawn(defer_device=True)
    return worker


def _compile_worker(config: VerifyConfig, nice: int = 0) -> Worker:
    limits = dataclasses.replace(worker_limits(config, "cpu", "compile"), nice=nice)
    return Worker("compile", "cpu", limits, keep_scratch=config.keep_scratch)


def _in_compile_worker(config: VerifyConfig, op: str, worker: Worker | None = None, nice: int = 0, **args) -> dict:
    """`op` of a fresh CPU-only compile worker on the build cache (raises WorkerDied, WorkerError); the worker goes.
    `worker`: one launched ahead (`spare_compile_worker`), else a new one at niceness `nice`."""
    worker = worker if worker is not None else _compile_worker(config, nice)
    try:
        if worker.deferred:
            worker.activate(config.load_timeout_s)
        else:
            worker.start()
        return worker.call(op, config.compile_timeout_s, cache_dir=str(config.cache_dir), **args)
    finally:
        worker.kill()


_PCH_ASKED: set[tuple[str, str]] = set()
_PCH_LOCK = threading.Lock()


def precompile_header(key: str, build_dir: str, config: VerifyConfig) -> None:
    """Precompile the torch header with the flags of the plain build in `build_dir` (a folder of the build cache),
    for later C++ builds with those flags, in this process (`verify/pch_store.py`: no worker runs candidate code near
    it); once per flag set per process. On a GPU in the background: no judgement waits for it (on the H200 it cost
    the first candidate of a flag set tens of seconds when made before the compile stage replied). On the CPU device
    before returning: a compiler running beside a candidate timed on host timers would skew its numbers. There a flag
    set earns its header on its second plain build (`pch_store.second_sighting`): the header costs about four builds
    (~55 s against ~13 s on two cores), which a flag set used once never pays back."""
    folder = config.cache_dir / build_dir
    if folder.parent != config.cache_dir or not pch.is_index_key(key):  # named from the candidate's process
        log.warning("no torch header for %r: not a build folder of the cache", build_dir[:80])
        return
    with _PCH_LOCK:
        if (str(config.cache_dir), key) in _PCH_ASKED:
            return
        if config.device == "cpu" and not second_sighting(pch_dir(config.cache_dir), key):
            return
        _PCH_ASKED.add((str(config.cache_dir), key))

    def run() -> None:
        try:
            precompile(pch_dir(config.cache_dir), key, folder / "build.ninja",
                       nice=config.compile_nice if config.device != "cpu" else 0)
        except (UnsafeFlags, subprocess.SubprocessError, OSError) as exc:  # later builds stay plain; no verdict needs it
            log.warning("could not precompile the torch header for builds like %s: %s", build_dir, exc)

    if config.device == "cpu":
        calls_log.debug("verifier pch")  # a phase of its own in `verify`'s progress: it takes as long as a build
        run()
    else:
        threading.Thread(target=run, name="km-pch", daemon=True).start()


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line.lower() and ("error:" in line or "Error" in line):
            return line.strip()[:300]
    return "see the compiler log"
