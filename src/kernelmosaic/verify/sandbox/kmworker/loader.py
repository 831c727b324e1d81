"""Import a problem or candidate file as its own module, with `load_inline` builds routed to a content-hashed cache.

Every `load_inline` call is forced to build verbosely into `<cache>/<name>_<hash>` while file descriptors 1 and 2
are captured, so the full compiler log is kept even when the candidate asked for `verbose=True` (where the stock
harness loses it), and a rebuilt identical candidate is a cache hit across processes and runs. A build the compiler
refused (`diagnosed_failure`) is recorded in its directory (`km_failed.log`): a later load of the same extension
fails at once with that log instead of running the compiler again. Candidates of one batch often share an extension
(an agent's variants differ in their Python): on the H200 four candidates sharing a broken source queued on its
build lock and failed one after another, 15-20 s each.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from . import build_steps, cxx_lean, nvcc_split, pch, published
from .intercept import INTERCEPT, op_names

__all__ = ["load_module", "BuildBusy", "BuildRecorder", "build_key", "diagnosed_failure"]

_STARVED = ("Killed", "killed", "signal", "internal compiler error", "out of memory", "memory exhausted",
            "Cannot allocate memory", "No space left", "interrupted")
_DIAGNOSTIC = re.compile(r"(\berror:|\berror [A-Z]*\d+|\(\d+\): error)")


def diagnosed_failure(exc: BaseException | None, log: str) -> bool:
    """True when the build ran to completion and the compiler rejected the source: ninja exited with a failure
    status (not a signal), the log holds a compiler diagnostic, and nothing says a compiler was killed or starved
    of memory or disk. Only such a failure is certain to repeat, so only it may be cached."""
    cause = exc.__cause__ if exc is not None else None
    if not isinstance(cause, subprocess.CalledProcessError) or cause.returncode <= 0:
        return False
    return bool(_DIAGNOSTIC.search(log)) and not any(m in log for m in _STARVED)

_FAILED = "km_failed.log"
"""In a build directory: the log of a build the compiler refused (written by the builder holding `km.lock`)."""

_counter = 0


def load_module(path: str, prefix: str) -> types.ModuleType:
    """Execute `path` as a fresh module named `<prefix>_<n>` (never shared with another file's namespace)."""
    global _counter
    _counter += 1
    name = f"{prefix}_{_counter}_{os.getpid()}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def build_key(kwargs: dict) -> str:
    """The content hash naming an extension's folder: its `load_inline` arguments and the toolchain."""
    import torch

    def norm(v):
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)

    material = {k: norm(v) for k, v in sorted(kwargs.items()) if k not in ("verbose", "build_directory")}
    material["__torch__"] = torch.__version__
    material["__cuda__"] = str(torch.version.cuda)
    material["__arch__"] = os.environ.get("TORCH_CUDA_ARCH_LIST", "")
    material["__python__"] = sys.version.split()[0]
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class BuildBusy(Exception):
    """Another process is building this extension and the recorder was told not to wait (`BuildRecorder(wait=False)`:
    the compile stage's first try, so a compile worker does not hold a place in the parent's compile gate while it
    waits; the parent waits on the folder's lock itself and tries again)."""


@contextlib.contextmanager
def _build_dir_lock(build_dir: Path, wait: bool = True):
    """Hold `km.lock` (an flock, released by the kernel when its holder dies) around torch's build or load of
    `build_dir`. torch marks a build in progress with a plain `lock` file that a killed builder (a compile worker
    past its timeout) leaves behind, and every later load of the directory then waits on it forever (seen here,
    2026-12-01: every candidate of one extension hung until its load timeout). Every builder of this cache holds
    `km.lock` first, so a `lock` file found while holding it belongs to a builder that is gone: it is removed."""
    with open(build_dir / "km.lock", "a+") as held:
        try:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BuildBusy(build_dir.name) from None
        try:
            (build_dir / "lock").unlink(missing_ok=True)
            yield
        finally:
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)


class BuildRecorder:
    """Wraps `torch.utils.cpp_extension.load_inline` for the lifetime of one import. `mode` (`published.py`):
    `build`, the builder's: build into the shared cache, load nothing, mark the folder published; `capture`, the
    compile worker's: load what is published, record the rest in `wanted` and hand back a stand-in; `load`, a
    candidate worker's: load what is published, build the rest in `private` (its own scratch folder)."""

    def __init__(self, cache_dir: str, wait: bool = True, pch_dir: str | None = None, mode: str = "load") -> None:
        if mode not in ("build", "capture", "load"):
            raise ValueError(f"unknown build mode {mode!r}")
        self.cache_dir = Path(cache_dir)
        self.pch_dir = Path(pch_dir) if pch_dir else None
        """The precompiled headers' store (`paths.pch_dir`, read only here); None: new builds get none."""
        self.wait = wait
        """False: a build another process holds raises `BuildBusy` (recorded as `busy`) instead of waiting for it."""
        self.mode = mode
        self.private = Path.cwd() / "ext"
        """`load`: where extensions nobody published are built (the worker's scratch folder is its working directory)."""
        self.builds: list[dict] = []
        self.wanted: list[dict] = []
        """`capture`: the extensions the candidate asked for that are not published ({"spec", "key"})."""
        self._orig = None

    def __enter__(self) -> BuildRecorder:
        from torch.utils import cpp_extension

        self._orig = cpp_extension.load_inline
        recorder = self

        def load_inline(name, cpp_sources, cuda_sources=None, *args, **kwargs):
            return recorder._build(name, cpp_sources, cuda_sources, args, kwargs)

        cpp_extension.load_inline = load_inline
        return self

    def __exit__(self, *exc) -> None:
        from torch.utils import cpp_extension

        cpp_extension.load_inline = self._orig

    def _build(self, name, cpp_sources, cuda_sources, args, kwargs):
        if args:
            raise TypeError("load_inline: pass arguments after cuda_sources by keyword")
        key = build_key({"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources, **kwargs})
        build_dir = self.cache_dir / f"{name}_{key[:16]}"
        if published.is_published(build_dir, name):
            return self._published(build_dir, name, key, kwargs)
        if self.mode == "capture":
            self.wanted.append({"spec": published.spec_of(name, cpp_sources, cuda_sources, kwargs), "key": key})
            return published.Unbuilt(name)
        if self.mode == "load":  # asked for after the compile stage: built for this worker alone
            build_dir = self.private / f"{name}_{key[:16]}"
        build_dir.mkdir(parents=True, exist_ok=True)
        cache_hit = (build_dir / f"{name}.so").exists()
        pch_key, header = self._pch_choice(build_dir, cache_hit, {"cuda_sources": cuda_sources, **kwargs})
        if header is not None:  # the flags the directory was built with, or ninja would rebuild it
            kwargs = {**kwargs, "extra_cflags": [*(kwargs.get("extra_cflags") or []), *pch.flags(header)]}
        if cuda_sources:  # nvcc records its phases beside the build (build_steps.py); same flag for every build here
            kwargs = {**kwargs, "extra_cuda_cflags": [*(kwargs.get("extra_cuda_cflags") or []),
                                                       *build_steps.nvcc_time_flags(build_dir)]}
        kwargs = {**kwargs, "build_directory": str(build_dir), "verbose": True}
        record = {"name": name, "key": key, "cache_hit": cache_hit, "seconds": 0.0, "log": "", "ok": False,
                  "pch": header is not None}
        self.builds.append(record)
        start = time.perf_counter()
        ops_before = op_names()
        built_here = False
        with tempfile.TemporaryFile() as log:
            sys.stdout.flush()
            sys.stderr.flush()
            saved = os.dup(1), os.dup(2)
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                with _build_dir_lock(build_dir, wait=self.wait or cache_hit):
                    if not cache_hit and (build_dir / _FAILED).is_file():
                        _refuse_again(name, build_dir / _FAILED)
                    built_here = not (build_dir / f"{name}.so").exists()
                    if built_here:  # nvcc appends to its table: this build's phases only
                        (build_dir / build_steps.NVCC_TIME).unlink(missing_ok=True)
                    try:
                        with _split_nvcc(bool(cuda_sources)), _lean_cxx(), _loading(self.mode != "build"):
                            module = self._orig(name, cpp_sources, cuda_sources, **kwargs)
                    except Exception as exc:
                        _keep_failure(build_dir, log, exc)
                        raise
                    if self.mode == "build":
                        (build_dir / published.PUBLISHED).write_text(key)
                record["ok"] = True
                registered = op_names() - ops_before  # operators the extension registered as it loaded
                INTERCEPT.ops |= registered
                INTERCEPT.wrap_ops(registered)
                if isinstance(module, types.ModuleType):  # `is_python_module=False` returns the library's path: its
                    INTERCEPT.wrap_extension(module)  # kernels are the operators just recorded, called via torch.ops
                return module
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])
                record["log"] = _captured(log)
                record["seconds"] = time.perf_counter() - start
                if built_here:
                    record["steps"] = build_steps.steps(build_dir)
                if not record["ok"]:
                    record["busy"] = isinstance(sys.exc_info()[1], BuildBusy)
                    record["diagnosed"] = diagnosed_failure(sys.exc_info()[1], record["log"])
                elif pch_key and header is None and not cache_hit:  # the parent has it precompiled (compile_stage.py)
                    record["pch_wanted"] = {"key": pch_key, "build_dir": build_dir.name}

    def _published(self, build_dir: Path, name: str, key: str, kwargs: dict):
        """A published extension, loaded (the builder's mode: left alone) and recorded as a cache hit."""
        record = {"name": name, "key": key, "cache_hit": True, "seconds": 0.0, "log": "", "ok": False,
                  "pch": (build_dir / "km_pch").is_file()}
        self.builds.append(record)
        if self.mode == "build":
            record["ok"] = True
            return None
        start, ops_before = time.perf_counter(), op_names()
        module = published.load(build_dir, name, kwargs.get("is_python_module", True))
        record["ok"], record["seconds"] = True, time.perf_counter() - start
        registered = op_names() - ops_before
        INTERCEPT.ops |= registered
        INTERCEPT.wrap_ops(registered)
        if isinstance(module, types.ModuleType):
            INTERCEPT.wrap_extension(module)
        return module

    def _pch_choice(self, build_dir: Path, cache_hit: bool, kwargs: dict) -> tuple[str | None, Path | None]:
        """(index key, header) for this build: a built directory keeps the choice it was built with (`km_pch`); a
        new one takes the precompiled header of its flag set when there is one."""
        marker = build_dir / "km_pch"
        if cache_hit:
            return None, Path(marker.read_text()) if marker.is_file() else None
        key = pch.index_key(kwargs) if self.pch_dir is not None else None
        header = pch.lookup(self.pch_dir, key) if key else None
        if header is not None:
            marker.write_text(str(header))
        else:
            marker.unlink(missing_ok=True)
        return key, header


@contextlib.contextmanager
def _loading(load: bool):
    """The builder's `load_inline` builds and stops there: what it built is never loaded into a process that judges
    nothing (its static initializers are the candidate's code)."""
    if load:
        yield
        return
    from torch.utils import cpp_extension

    saved = cpp_extension._import_module_from_library
    cpp_extension._import_module_from_library = lambda *args, **kwargs: None
    try:
        yield
    finally:
        cpp_extension._import_module_from_library = saved


@contextlib.contextmanager
def _split_nvcc(cuda: bool):
    """torch's ninja runs `nvcc_split` as its nvcc for this build (the wrapper runs the real one unchanged when told
    to, `KM_NVCC_SPLIT=0`, so the build file is the same either way and switching never rebuilds)."""
    if not cuda:
        yield
        return
    from torch.utils.cpp_extension import _join_cuda_home

    with _environ({"PYTORCH_NVCC": f"{shlex.quote(sys.executable)} -I {shlex.quote(nvcc_split.__file__)}",
                   nvcc_split.REAL_NVCC: _join_cuda_home("bin", "nvcc")}):
        yield


@contextlib.contextmanager
def _lean_cxx():
    """torch's ninja runs `km-cxx` as its C++ compiler for this build (`cxx_lean.py`: the binding unit lean first;
    `KM_CXX_LEAN=0` runs the real one unchanged, so the build file is the same either way and switching never
    rebuilds). Skipped where the wrapper lost its executable bit (an install that does not keep it)."""
    if not os.access(cxx_lean.WRAPPER, os.X_OK):
        yield
        return
    real = os.environ.get(cxx_lean.REAL_CXX) or os.environ.get("CXX") or "c++"
    with _environ({cxx_lean.REAL_CXX: real, "CXX": str(cxx_lean.WRAPPER), "KM_CXX_PYTHON": sys.executable}):
        yield


@contextlib.contextmanager
def _environ(values: dict[str, str]):
    """`values` set in this process's environment for the block (torch's ninja reads its tools from there), and
    what was there before put back after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _captured(log) -> str:
    """The end of what the build wrote so far to the capture file (its position left at the end, where fds 1 and 2
    go on writing)."""
    log.seek(0)
    text = log.read().decode("utf-8", "replace")[-200_000:]
    log.seek(0, os.SEEK_END)
    return text


def _keep_failure(build_dir: Path, log, exc: BaseException) -> None:
    """Record the build's log in `build_dir` when the compiler refused the source (never for a killed or starved
    build, which may pass next time)."""
    sys.stdout.flush()
    sys.stderr.flush()
    text = _captured(log)
    if diagnosed_failure(exc, text):
        tmp = build_dir / f".{_FAILED}.{os.getpid()}"
        tmp.write_text(text)
        os.replace(tmp, build_dir / _FAILED)


def _refuse_again(name: str, failed: Path) -> None:
    """Fail as the recorded build did: its log on the captured output, the same exception chain (so the compile
    stage reads it as a compiler's refusal)."""
    sys.stdout.write(f"[kernelmosaic] extension `{name}` failed to build before with these exact inputs; its log:\n")
    sys.stdout.write(failed.read_text())
    sys.stdout.flush()
    try:
        raise subprocess.CalledProcessError(1, ["ninja", "-v"])
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"Error building extension '{name}' (recorded failure of the same inputs)") from exc
