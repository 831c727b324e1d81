"""What a built extension calls outside itself: its undefined symbols, read with binutils' `nm` (the toolchain that
linked it) and judged by `static/symbols.py`'s rules.

A shared object's undefined dynamic symbols include those of the static libraries linked into it: nvcc links the CUDA
runtime statically (`libcudart_static.a`), which itself calls `dlopen`, `syscall`, `open` and the like. So where the
objects compiled from the candidate's sources lie beside the library (a torch build folder keeps them), what the
candidate's code calls is read from those objects, and of the library's own list only what no static CUDA runtime
archive of the toolkit calls is added (a static library named in the candidate's flags still shows the calls its
objects make); a library with no objects beside it is judged by its whole list. Triton's launchers (built by Triton
from its own generated C into the candidate's Triton cache) open the CUDA driver with `dlopen`/`dlsym`: those two
names are theirs. The CUDA toolkit's NVTX headers (which CUB and Thrust include) define a loader for an NVTX
injection library in every unit that uses them: each of its versioned functions (`nvtxRangePushA_impl_init_v3`, ...)
calls `dlopen`/`dlsym`/`dlclose`, and it is the only code in a candidate's object that may: those names are read per
function (the relocation section each call lies in), and a `dl*` call counts as NVTX's only when every function
that makes it is one of the loader functions the toolkit's NVTX header defines (all at once: a unit that includes
it cannot define one of those names itself) and the object holds NVTX's own globals.

Run by the verifier's own process on the builds it trusts: the extensions the compile stage's builders made (they run
none of the candidate's code) and, after a judgement, the ones the candidate's worker built for itself in its scratch
folder (asked for only at run time). A name the source hides (a pasted macro, an assembler label) is plain here.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify.got_watch import proc_maps
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.rules import reject_message
from kernelmosaic.verify.static.symbols import symbol_rule

__all__ = ["build_calls", "runtime_calls", "extension_symbols", "library_symbols", "own_builds", "own_build_findings", "symbol_findings", "first_reject"]

log = logging.getLogger(__name__)


def _undefined(path: Path, dynamic: bool = True) -> list[str]:
    """The undefined symbols of `path` (its dynamic ones, or an object's or archive's own), read once per file
    version: a published build is checked at its compile and again in every judgement that maps it (`own_builds`),
    which need not run `nm` each time."""
    try:
        version = _version(path)
    except OSError:
        return []
    return list(_undefined_of(str(path), *version, dynamic=dynamic))


@functools.lru_cache(maxsize=1024)
def _undefined_of(path: str, inode: int, mtime_ns: int, size: int, dynamic: bool = True) -> tuple[str, ...]:
    return tuple(_read_undefined(Path(path), dynamic))


def _binutils(tool: str, *args: str) -> str | None:
    """What binutils' `tool` (`nm`, `readelf`) prints for `args`; None (with a warning) where it cannot run."""
    exe = shutil.which(tool)
    if exe is None:  # binutils come with the compiler that built the extension; without them nothing is read
        log.warning("no `%s` on PATH: %s is not checked", tool, args[-1])
        return None
    try:
        return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("reading %s with %s: %s", args[-1], tool, exc)
        return None


def _read_undefined(path: Path, dynamic: bool) -> list[str]:
    out = _binutils("nm", *(["-D"] if dynamic else []), "--undefined-only", "--demangle", str(path))
    if out is None:
        return []
    lines = [line.strip() for line in out.splitlines()]  # an archive's `member.o:` headers end in a colon
    return [line.split(None, 1)[1] if line.split(None, 1)[0] in ("U", "w") and " " in line else line
            for line in lines if line and not line.endswith(":")]


def _base(symbol: str) -> str:
    return symbol.split("@", 1)[0].strip()


_RUNTIME_ARCHIVES = ("libcudart_static.a", "libcudadevrt.a", "libculibos.a")
_TRITON_LAUNCHERS = ("__triton_launcher", "cuda_utils")
"""Triton's module names (`__triton_launcher.so`, `cuda_utils.cpython-312-x86_64-linux-gnu.so`)."""
_DL_CALLS = frozenset({"dlopen", "dlsym", "dlerror", "dlclose"})
"""The dynamic loader's calls that Triton's launchers and NVTX's loader make themselves (module docstring)."""


@functools.lru_cache(maxsize=1)
def runtime_calls() -> frozenset[str]:
    """What the CUDA toolkit's static runtime archives call outside themselves (unversioned names): found beside the
    nvcc torch builds with (`CUDA_HOME`), else on PATH; empty without a toolkit (CPU builds link none of them)."""
    calls: set[str] = set()
    for home in _toolkit_homes():
        for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
            for name in _RUNTIME_ARCHIVES:
                archive = Path(home) / sub / name
                if archive.is_file():
                    calls.update(_base(s) for s in _undefined_of(str(archive), *_version(archive), dynamic=False))
    return frozenset(calls)


@functools.lru_cache(maxsize=1)
def _toolkit_homes() -> tuple[str, ...]:
    """The CUDA toolkit folders: `CUDA_HOME`, `CUDA_PATH`, and the one nvcc on PATH belongs to."""
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        homes.append(str(Path(os.path.realpath(nvcc)).parent.parent))
        try:  # a wrapper script (`exec /usr/local/cuda-X/bin/nvcc "$@"`) names the real toolkit
            text = Path(nvcc).read_text(errors="replace")[:4096] if os.path.getsize(nvcc) < 4096 else ""
        except OSError:
            text = ""
        homes += [str(Path(m).parent.parent) for m in re.findall(r"(/\S+/bin/nvcc)\b", text)]
    return tuple(dict.fromkeys(h for h in homes if h))


@functools.lru_cache(maxsize=1)
def _nvtx_loader_names() -> frozenset[str]:
    """The loader functions NVTX's header defines (`nvtxMarkA_impl_init`, ...; compiled with a `_v3` suffix), read
    from the toolkit's own `nvtxInitDefs.h`; empty without a toolkit (nothing is then excused)."""
    names: set[str] = set()
    for home in _toolkit_homes():
        for sub in ("include", "targets/x86_64-linux/include", "targets/sbsa-linux/include"):
            try:
                text = (Path(home) / sub / "nvtx3" / "nvtxDetail" / "nvtxInitDefs.h").read_text(errors="replace")
            except OSError:
                continue
            names.update(re.findall(r"NVTX_VERSIONED_IDENTIFIER\((nvtx\w+_impl_init)\)", text))
    return frozenset(names)


def _version(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_size


def build_calls(lib: Path) -> list[str]:
    """The undefined symbols `lib` answers for (module docstring): its objects' where they lie beside it, plus what the
    library alone imports that no static CUDA runtime archive calls; else the library's whole list."""
    calls = _undefined(lib)
    if lib.name.split(".", 1)[0] in _TRITON_LAUNCHERS and lib.suffix == ".so" and "triton" in lib.parts:
        calls = [s for s in calls if _base(s) not in _DL_CALLS]
    objects = sorted(lib.parent.glob("*.o"))
    if not objects:
        return calls
    runtime = runtime_calls()
    own = [s for obj in objects for s in _object_calls(obj)]
    return list(dict.fromkeys(own + [s for s in calls if _base(s) not in runtime]))


_NVTX_LOADER = re.compile(r"\.rela?\.text\.(nvtx\w+_impl_init)_v\d+")
"""The relocation section of one of NVTX's versioned loader functions (a COMDAT section of its own per function)."""
_NVTX_GLOBALS = re.compile(r"\bnvtxGlobals_v\d+$")


def _object_calls(obj: Path) -> list[str]:
    """`obj`'s undefined symbols, less the `dl*` calls that only NVTX's loader makes (module docstring); read once
    per file version, as `_undefined` is."""
    names = _undefined(obj, dynamic=False)
    if not any(_base(n) in _DL_CALLS for n in names):
        return names
    try:
        return list(_nvtx_excused(str(obj), *_version(obj), names=tuple(names)))
    except OSError:
        return names


@functools.lru_cache(maxsize=256)
def _nvtx_excused(obj: str, inode: int, mtime_ns: int, size: int, names: tuple[str, ...]) -> tuple[str, ...]:
    callers = _callers(Path(obj))
    if not callers or not any(_NVTX_GLOBALS.search(d) for d in _defined(Path(obj))):
        return names

    loaders = _nvtx_loader_names()

    def loader(section: str) -> bool:
        found = _NVTX_LOADER.fullmatch(section)
        return found is not None and found.group(1) in loaders

    def nvtx_only(name: str) -> bool:
        sections = callers.get(_base(name), set())
        return _base(name) in _DL_CALLS and bool(sections) and all(loader(s) for s in sections)

    return tuple(n for n in names if not nvtx_only(n))


def _callers(obj: Path) -> dict[str, set[str]]:
    """{symbol: the relocation sections that refer to it} of an object file (`readelf -r`); empty when unreadable."""
    text = _binutils("readelf", "-rW", str(obj))
    if text is None:
        return {}
    out: dict[str, set[str]] = {}
    section = ""
    for line in text.splitlines():
        head = re.match(r"Relocation section '([^']+)'", line)
        if head:
            section = head.group(1)
            continue
        fields = line.split()
        if len(fields) >= 5 and re.fullmatch(r"[0-9a-f]+", fields[0]):
            out.setdefault(_base(fields[4]), set()).add(section)
    return out


def _defined(obj: Path) -> list[str]:
    text = _binutils("nm", "--defined-only", str(obj))
    return [line.split()[-1] for line in (text or "").splitlines() if line.strip()]


def library_symbols(libraries: Iterable[Path]) -> dict[str, list[str]]:
    """{rule: the symbols it owns} over what `libraries` (shared objects) call outside themselves (`build_calls`)."""
    out: dict[str, list[str]] = {}
    for lib in libraries:
        for symbol in build_calls(lib):
            rule = symbol_rule(symbol)
            if rule is not None and symbol not in out.setdefault(rule, []):
                out[rule].append(symbol)
    return {rule: names for rule, names in out.items() if names}


def extension_symbols(folders: Iterable[Path]) -> dict[str, list[str]]:
    """`library_symbols` of every shared object in `folders` (a built extension's folder each)."""
    return library_symbols(lib for folder in folders for lib in sorted(folder.glob("*.so")))


def own_builds(pid: int, scratch: Path, cache: Path | None = None) -> tuple[list[Path], list[str]]:
    """The libraries process `pid` (a candidate worker) has mapped from its scratch folder `scratch` (extensions it
    built for itself: asked for only at run time) or from the build cache `cache` (what the builders published,
    whatever the compile worker's reply listed), and those under `scratch` no longer on disk as mapped (removed, or
    another file in their place: the mapping's inode is not the file's). Read from the kernel's account of its
    mappings (/proc/<pid>/maps), not from anything the process says."""
    own = {str(scratch), str(scratch.resolve())}
    roots = own | ({str(cache), str(cache.resolve())} if cache is not None else set())
    mapped: dict[str, tuple[int, bool]] = {}
    try:
        maps = proc_maps(pid)
    except OSError:
        return [], []
    for m in maps:
        if any(m.path.startswith(root + "/") for root in roots):
            mapped[m.path] = (m.inode, m.deleted or mapped.get(m.path, (0, False))[1])
    libs, replaced = [], []
    for path, (inode, deleted) in sorted(mapped.items()):
        try:
            gone = deleted or os.stat(path).st_ino != inode
            with open(path, "rb") as f:
                elf = not gone and f.read(4) == b"\x7fELF"
        except OSError:
            gone, elf = True, False
        if gone and any(path.startswith(root + "/") for root in own):
            replaced.append(path)
        elif elf:
            libs.append(Path(path))
    return libs, replaced


def own_build_findings(pid: int, scratch: Path, cache: Path | None, policy: StaticPolicy) -> list[Finding]:
    """`symbol_findings` of the libraries a candidate worker mapped from its scratch folder or the build cache
    (`own_builds`), and a `dynamic-code` reject for one it mapped from its scratch folder and then removed or replaced
    on disk (its symbols can no longer be read)."""
    libs, replaced = own_builds(pid, scratch, cache)
    found = symbol_findings(library_symbols(libs), policy)
    if replaced:
        found.insert(0, Finding(rule="dynamic-code", severity="reject", evidence="; ".join(replaced[:4]),
                                message="a library the candidate built and loaded itself was removed or replaced on disk "
                                        "after it was mapped"))
    return found


def symbol_findings(symbols: dict[str, list[str]], policy: StaticPolicy) -> list[Finding]:
    """The findings `symbols` (`extension_symbols`) give under `policy`, a rule each, rejects first."""
    found = []
    for rule, names in sorted(symbols.items()):
        action = policy.action(rule)
        if action == "allow" or not names:
            continue
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        found.append(Finding(rule=rule, severity=action, evidence="; ".join(names[:8]),
                             message=f"the built extension calls `{names[0]}`{more} (undefined symbols of its binary, "
                                     "whatever name the source gives them)"))
    return sorted(found, key=lambda f: f.severity != "reject")


def first_reject(findings: list[Finding]) -> str | None:
    """The verdict's message for the first rejecting finding, or None."""
    for f in findings:
        if f.severity == "reject":
            return reject_message(f.rule, f.message, f.evidence)
    return None
