"""The loaded libraries' global offset tables, watched from outside the candidate's process.

Every call a library makes into another one (libpython's `clock_gettime`, libtorch_cuda's `cudaEventElapsedTime`)
jumps through a slot of the caller's GOT, which with partial RELRO stays writable all run. Native code of the
candidate can rewrite such a slot without naming it anywhere (found through the loader's list and the ELF
relocation tables): the worker's own clock, timer or reply channel then answer to the candidate (issue 36, item 8).
So the verifier's process reads the GOTs of every library the worker had mapped before the candidate was loaded,
from `/proc/<pid>/mem` (it is the worker's parent; the candidate cannot make its process unreadable to it without
calls the static and binary rules reject), and reads them again after the candidate ran: a slot that changed is a
rejection naming the symbol. Workers that run candidate code bind every symbol at load (`LD_BIND_NOW`), so no slot
legitimately changes after the snapshot; a lazy slot resolved later (from its object's own PLT stub to code of a
library already loaded) is allowed where binding was not forced.

Standard library only: the parent reads ELF files and another process's memory; it runs none of the worker's code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GotPoller", "GotSnapshot", "Mapping", "got_snapshot", "got_changes", "proc_maps"]

_SHT_RELA, _SHT_DYNSYM = 4, 11
_GOT_SECTIONS = (".got", ".got.plt")
_PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")


@dataclass
class _Object:
    path: str
    base: int
    regions: list[tuple[int, bytes]]  # (address in the worker, the bytes there at the snapshot)
    plt: list[tuple[int, int]]  # [start, end) of the object's PLT stubs in the worker


@dataclass
class GotSnapshot:
    pid: int
    objects: list[_Object] = field(default_factory=list)
    executable: list[tuple[int, int, str]] = field(default_factory=list)
    """[start, end, path) of the file-backed executable mappings at the snapshot: where a slot may point."""
    error: str = ""
    """Why nothing was read (no /proc, the memory unreadable): the watch is then off for this worker."""
    data: list[tuple[str, int, bytes]] = field(default_factory=list)
    """(label, address, bytes at the snapshot) of the fields the worker named at start (`kmworker/cwatch.py`)."""
    code: dict[str, tuple[list[tuple[int, int]], bytes]] = field(default_factory=dict)
    """The machine code the timer runs through (`_CODE`: the loader, libc, the interpreter, the CUDA runtime, the
    vDSO): name -> (its executable mappings, a digest of their bytes)."""
    hot: list[tuple[str, int, bytes]] = field(default_factory=list)
    """(label, address, bytes at the snapshot) of the GOT slots bound to `_HOT` symbols: read every few
    milliseconds while calls are timed (`GotPoller`), the whole tables less often."""


_HOT = frozenset({
    "clock_gettime", "__clock_gettime", "gettimeofday", "time", "clock", "timespec_get", "clock_getres",
    "cudaEventElapsedTime", "cudaEventRecord", "cudaEventRecordWithFlags", "cudaEventSynchronize", "cudaEventQuery",
    "cuEventElapsedTime", "cuEventRecord", "cuEventSynchronize", "cuEventQuery", "cudaDeviceSynchronize",
    "cudaStreamSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
    "send", "sendto", "sendmsg", "write", "writev", "pwrite64",
})
"""Symbols whose GOT slots decide what the worker measures and what it tells the parent (its clocks, CUDA event
timing and synchronisation, the calls its reply goes out through): a rewrite that lasts only inside each timed call
is a few milliseconds long, so these few slots are read far more often than the whole tables."""

_CODE = ("ld-linux", "libc.so", "libpython", "python3", "libcudart.so", "[vdso]")
"""Basename prefixes of the objects whose code is watched too: clocks, the interpreter's timer and event timing go
through them, and none of them rewrites its own code (no JIT). A patch in place needs `mprotect`, which the
binary rules reject by name, but an inline `syscall` instruction names nothing."""


@dataclass(frozen=True)
class Mapping:
    """One line of /proc/<pid>/maps: the kernel's account of a mapping, not the process's."""

    lo: int
    hi: int
    perms: str
    offset: int
    inode: int
    path: str
    """The file's path (without the kernel's ` (deleted)` mark), or a pseudo-file such as `[vdso]`."""
    deleted: bool


def proc_maps(pid: int) -> list[Mapping]:
    """The named mappings of process `pid` (files and pseudo-files; anonymous ones left out); raises OSError."""
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        path = fields[5].removesuffix(" (deleted)")
        out.append(Mapping(lo, hi, fields[1], int(fields[2], 16), int(fields[4]), path, path != fields[5]))
    return out


_Section = tuple[int, int, int, int, int]  # (type, addr, offset, size, link)


def _sections(path: str) -> tuple[int, int, dict[str, _Section], list[_Section]] | None:
    """(e_type, first PT_LOAD's page-aligned vaddr, {name: section}, the sections in order) of an ELF64 file."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:  # 64-bit little-endian only
                return None
            e_type = struct.unpack_from("<H", head, 16)[0]
            phoff, shoff = struct.unpack_from("<QQ", head, 32)
            phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", head, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
            first_load = min((struct.unpack_from("<Q", ph, i * phentsize + 16)[0]
                              for i in range(phnum) if struct.unpack_from("<I", ph, i * phentsize)[0] == 1), default=0)
            f.seek(shoff)
            sh = f.read(shentsize * shnum)
            rows = [struct.unpack_from("<IIQQQQII", sh, i * shentsize) for i in range(shnum)]
            if not rows or shstrndx >= len(rows):
                return None
            f.seek(rows[shstrndx][4])
            names = f.read(rows[shstrndx][5])
    except (OSError, struct.error):
        return None
    ordered = [(sh_type, addr, offset, size, link) for _n, sh_type, _f, addr, offset, size, link, _i in rows]
    out: dict[str, _Section] = {}
    for row, section in zip(rows, ordered, strict=True):
        name = names[row[0]:names.find(b"\0", row[0])].decode(errors="replace")
        out.setdefault(name, section)
    return e_type, first_load & ~0xFFF, out, ordered


def got_snapshot(pid: int, named: list[tuple[str, int, int]] | None = None) -> GotSnapshot:
    """The GOT bytes of every ELF object process `pid` has mapped now, the code of `_CODE`'s and the bytes of the
    `named` regions ((label, address, size): what the worker reported before any candidate code ran), read from
    outside it."""
    snap = GotSnapshot(pid=pid)
    try:
        maps = [m for m in proc_maps(pid) if not m.deleted and (m.path.startswith("/") or m.path == "[vdso]")]
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError as exc:
        snap.error = f"{type(exc).__name__}: {exc}"
        return snap
    try:
        firsts: dict[str, int] = {}
        for m in maps:
            if m.offset == 0:
                firsts.setdefault(m.path, m.lo)
            if "x" in m.perms:
                snap.executable.append((m.lo, m.hi, m.path))
                if os.path.basename(m.path).startswith(_CODE):
                    snap.code.setdefault(os.path.basename(m.path), ([], b""))[0].append((m.lo, m.hi))
        for name, (ranges, _) in list(snap.code.items()):
            snap.code[name] = (ranges, _digest(fd, ranges))
        for label, addr, size in named or []:
            try:
                snap.data.append((label, addr, os.pread(fd, size, addr)))
            except OSError:  # not mapped: nothing there to watch
                continue
        for path, first in firsts.items():
            parsed = _sections(path) if path.startswith("/") else None
            if parsed is None:
                continue
            e_type, load_vaddr, sections, _ = parsed
            base = first - load_vaddr if e_type == 3 else 0  # ET_DYN (shared objects, PIE) is relocated; ET_EXEC not
            regions = []
            for name in _GOT_SECTIONS:
                if name in sections and sections[name][3] > 0:
                    addr, size = base + sections[name][1], sections[name][3]
                    regions.append((addr, os.pread(fd, size, addr)))
            plt = [(base + s[1], base + s[1] + s[3]) for n in _PLT_SECTIONS if (s := sections.get(n))]
            if regions:
                snap.objects.append(_Object(path=path, base=base, regions=regions, plt=plt))
                for offset, symbol in _hot_slots(path):
                    snap.hot.append((f"{symbol} in {os.path.basename(path)}", base + offset,
                                     os.pread(fd, 8, base + offset)))
    except OSError as exc:
        snap.error, snap.objects = f"{type(exc).__name__}: {exc}", []
    finally:
        os.close(fd)
    return snap


def _digest(fd: int, ranges: list[tuple[int, int]]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for lo, hi in ranges:
        h.update(os.pread(fd, hi - lo, lo))
    return h.digest()


def got_changes(snap: GotSnapshot, limit: int = 8, code: bool = True) -> list[str]:
    """The GOT slots of `snap`'s objects whose value changed since, described (`` `clock_gettime` in libc.so.6 ``),
    and (with `code`) the watched objects whose machine code changed;
    empty when none did, or when the snapshot could not be taken or the process is gone."""
    if snap.error or not (snap.objects or snap.data):
        return []
    try:
        fd = os.open(f"/proc/{snap.pid}/mem", os.O_RDONLY)
    except OSError:
        return []
    changed: list[str] = []
    try:
        for label, addr, before in snap.data:
            if os.pread(fd, len(before), addr) != before:
                changed.append(f"`{label}`")
        for name, (ranges, digest) in snap.code.items() if code else ():
            if _digest(fd, ranges) != digest:
                changed.append(f"the machine code of {name}")
        for obj in snap.objects:
            for addr, before in obj.regions:
                now = os.pread(fd, len(before), addr)
                if now == before:
                    continue
                for k in range(0, min(len(now), len(before)) - 7, 8):
                    old, new = (struct.unpack_from("<Q", b, k)[0] for b in (before, now))
                    if old != new and not _lazy_bound(snap, obj, old, new):
                        symbol = _slot_symbol(obj, addr + k)
                        changed.append(f"`{symbol}` in {os.path.basename(obj.path)}" if symbol
                                       else f"slot {hex(addr + k - obj.base)} in {os.path.basename(obj.path)}")
                        if len(changed) >= limit:
                            return changed
    except OSError:
        return changed
    finally:
        os.close(fd)
    return changed


def _hot_slots(path: str) -> tuple[tuple[int, str], ...]:
    """(slot's offset from the object's base, symbol) of the object's GOT slots bound to `_HOT` symbols, read from
    its file once per version of it (libtorch's tables hold ~10^5 relocations)."""
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return _hot_slots_of(path, st.st_ino, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=1024)
def _hot_slots_of(path: str, _inode: int, _mtime_ns: int, _size: int) -> tuple[tuple[int, str], ...]:
    parsed = _sections(path)
    if parsed is None:
        return ()
    ordered = parsed[3]
    try:
        with open(path, "rb") as f:
            hot_of_table: dict[int, dict[int, str]] = {}
            out = []
            for table, r_offset, sym_index in _relocations(f, ordered):
                if table not in hot_of_table:
                    hot_of_table[table] = _hot_symbols(f, ordered, table)
                if (name := hot_of_table[table].get(sym_index)) is not None:
                    out.append((r_offset, name))
            return tuple(out)
    except (OSError, struct.error):
        return ()


def _relocations(f, ordered: list[_Section]):
    """(dynamic symbol table's section index, slot offset, symbol index) of every RELA entry of the ELF file `f`
    bound to a dynamic symbol table; each section is read whole before its first entry is given."""
    for sh_type, _addr, offset, size, link in ordered:
        if sh_type != _SHT_RELA or link >= len(ordered) or ordered[link][0] != _SHT_DYNSYM:
            continue
        f.seek(offset)
        for r_offset, r_info, _addend in struct.iter_unpack("<QQq", f.read(size - size % 24)):
            yield link, r_offset, r_info >> 32


def _hot_symbols(f, ordered: list[_Section], link: int) -> dict[int, str]:
    """Index -> name of the `_HOT` symbols in the dynamic symbol table `ordered[link]`."""
    _, _, sym_off, sym_size, str_link = ordered[link]
    if str_link >= len(ordered):
        return {}
    f.seek(ordered[str_link][2])
    strings = f.read(ordered[str_link][3])
    at = {}
    for name in _HOT:  # every place the name ends a string: the linker shares tails ("write" inside "fwrite")
        needle = name.encode() + b"\0"
        pos = strings.find(needle)
        while pos >= 0:
            at[pos] = name
            pos = strings.find(needle, pos + 1)
    if not at:
        return {}
    f.seek(sym_off)
    table = f.read(sym_size - sym_size % 24)
    return {i: at[st_name] for i, (st_name,) in enumerate(struct.iter_unpack("<I20x", table)) if st_name in at}


def _lazy_bound(snap: GotSnapshot, obj: _Object, old: int, new: int) -> bool:
    """A lazily bound slot resolved after the snapshot: it pointed into its object's own PLT, and now points into
    the code of a library mapped at the snapshot (never into memory mapped since, the candidate's)."""
    return any(lo <= old < hi for lo, hi in obj.plt) and any(lo <= new < hi for lo, hi, _ in snap.executable)


def _slot_symbol(obj: _Object, slot: int) -> str | None:
    """The symbol the relocation tables bind to `slot`, read from the object's file."""
    parsed = _sections(obj.path)
    if parsed is None:
        return None
    ordered = parsed[3]
    try:
        with open(obj.path, "rb") as f:
            for table, r_offset, sym_index in _relocations(f, ordered):
                if obj.base + r_offset != slot:
                    continue
                _, _, sym_off, _, str_link = ordered[table]
                f.seek(sym_off + sym_index * 24)
                name_at = struct.unpack("<I", f.read(4))[0]
                f.seek(ordered[str_link][2] + name_at)
                return f.read(256).split(b"\0", 1)[0].decode(errors="replace")
    except (OSError, struct.error):
        return None
    return None


class GotPoller:
    """Reads the snapshot again from a thread of the verifier's process while the candidate's calls are timed: the
    `hot` slots (clocks, event timing, the reply's calls) at random moments every 1-4 ms, a few preads; the whole
    tables every 10-60 ms (a millisecond of reads), the machine code every tenth time. A slot rewritten for each
    timed call and put back when the call returns is seen too: the candidate cannot tell when it is read, and on a
    loaded host, where this thread runs less often, the short reads still come many times per round. `changed`
    holds the first rewrite seen; `polls` and `hot_polls` count the reads."""

    def __init__(self, snap: GotSnapshot, low_s: float = 0.01, high_s: float = 0.06, hot_low_s: float = 0.001,
                 hot_high_s: float = 0.004):
        import random
        import threading

        self.snap, self.changed, self.polls, self.hot_polls = snap, [], 0, 0
        self._stop = threading.Event()
        self._wait = lambda: random.uniform(low_s, high_s)
        self._hot_wait = lambda: random.uniform(hot_low_s, hot_high_s)
        self._thread = threading.Thread(target=self._run, name="km-got-poller", daemon=True)

    def _run(self) -> None:
        import time

        try:
            fd = os.open(f"/proc/{self.snap.pid}/mem", os.O_RDONLY) if self.snap.hot else -1
        except OSError:
            fd = -1
        try:
            due = time.monotonic() + self._wait()
            while not self._stop.wait(self._hot_wait() if fd >= 0 else self._wait()):
                moved = self._hot_moved(fd) if fd >= 0 else {}
                if moved or time.monotonic() >= due:  # a hot slot moved: the full read names it (or a lazy bind)
                    found = got_changes(self.snap, code=self.polls % 10 == 0)  # code: megabytes, every tenth time
                    self.polls += 1
                    due = time.monotonic() + self._wait()
                    if found:
                        self.changed = found
                        return
                    for i, now in moved.items():  # a lazy bind the full read allowed: the new value is the one to keep
                        label, addr, _ = self.snap.hot[i]
                        self.snap.hot[i] = (label, addr, now)
        finally:
            if fd >= 0:
                os.close(fd)

    def _hot_moved(self, fd: int) -> dict[int, bytes]:
        """The hot slots whose bytes differ from the snapshot's: index -> the bytes now."""
        self.hot_polls += 1
        moved = {}
        try:
            for i, (_label, addr, before) in enumerate(self.snap.hot):
                if (now := os.pread(fd, len(before), addr)) != before:
                    moved[i] = now
        except OSError:
            return {}
        return moved

    def __enter__(self) -> GotPoller:
        if not self.snap.error and (self.snap.objects or self.snap.data):
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
