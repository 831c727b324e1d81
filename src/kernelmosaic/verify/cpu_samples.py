"""Where a CPU worker's threads spend their time, sampled by the kernel from outside the process.

Under `strict` the candidate's kernels must do the work. The dispatcher's record sees PyTorch operators called
through the dispatcher, and the binary rules see the ATen and BLAS symbols an extension imports; native code that
finds ATen's kernels (`at::cpu::mm`, MKL inside libtorch_cpu) by walking a loaded library's ELF tables at run time
names nothing either sees (red team 12). The kernel's sampler does: the verifier's process opens a `cpu-clock`
sampling event (`perf_event_open`, user-space instruction pointers only, 1 kHz) on every thread of the candidate's worker
around its wall-clock burst, and attributes each sample to the mapping it fell in (/proc/<pid>/maps). Time in
PyTorch's and the numeric libraries' code beyond what the verifier's own work in the burst explains is PyTorch
compute the candidate did not write.

Where the host forbids the event (`kernel.perf_event_paranoid` above 2, a seccomp filter), no census is taken and
the verdict says so. Standard library only; the worker runs none of this.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
from collections import Counter
from typing import NamedTuple

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.verify.got_watch import proc_maps

__all__ = ["CpuSamples", "CpuSampler", "LIBRARY_FLOOR_MS", "LIBRARY_SHARE_LIMIT", "classify", "library_time_finding"]

_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_CPU_CLOCK = 1, 0
_SAMPLE_IP, _SAMPLE_TID = 1, 2
_EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 5, 1 << 6
_DISABLED, _INHERIT = 1 << 0, 1 << 1
_IOC_ENABLE, _IOC_DISABLE, _IOC_SET_OUTPUT = 0x2400, 0x2401, 0x2405
_MAX_EVENTS = 512
"""Events (threads × CPUs) beyond which no census is taken: each holds a file descriptor of the verifier's."""
_RECORD_SAMPLE, _RECORD_LOST = 9, 2
_FD_CLOEXEC = 8
_NR_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine, 298)
_PAGES = 16
"""Data pages per CPU's ring: 64 KiB, ~2,700 samples (24 bytes each): a 2 s burst at 1 kHz fits. A user without
CAP_IPC_LOCK may lock `kernel.perf_event_mlock_kb` (516 KiB by default) of such rings in all: 7 CPUs."""

PERIOD_NS = 1_000_000
"""One sample per millisecond of a thread's CPU time (1 kHz)."""

LIBRARY_SHARE_LIMIT = 0.8
"""Share of the computing code's time (the candidate's builds and the libraries, glue left out) that may be the
libraries' per call, less the verifier's own projections, before the work counts as PyTorch's. Under `strict`
PyTorch may still allocate, fill, copy and view: a memory-bound kernel whose forward also zero-fills its output,
makes an input contiguous and clones its result spends three quarters there; ATen doing a GEMM spends all of it."""

LIBRARY_FLOOR_MS = 0.05
"""Library time per call (ms of CPU time, the projections set aside) below which nothing is judged: allocation,
the dispatcher and the burst's input views take microseconds of libtorch's code in every call."""

_MATH = ("libm.so", "libm-", "libmvec")
"""The C math library: an extension's `std::exp` and `std::tanh` run there (ATen's own kernels use their vectorised
copies inside libtorch_cpu), so its time counts with the candidate's builds."""

_GLUE = ("libpython", "python3", "libc.so", "libc-", "ld-linux", "libstdc++", "libgcc_s", "libgomp",
         "libiomp", "libpthread", "libdl", "librt", "libtorch_python", "libc10.so", "[vdso]", "[vsyscall]", "libz",
         "libffi", "_ctypes", "libshm")
"""Basename prefixes of code an honest candidate's time passes through: the interpreter and its modules, the C and
C++ runtimes, OpenMP's thread pool (its threads wait there between parallel regions), torch's Python bindings and
its allocator (c10)."""


class _Attr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64), ("read_format", ctypes.c_uint64),
                ("flags", ctypes.c_uint64), ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64), ("config2", ctypes.c_uint64), ("branch_sample_type", ctypes.c_uint64),
                ("sample_regs_user", ctypes.c_uint64), ("sample_stack_user", ctypes.c_uint32),
                ("clockid", ctypes.c_int32), ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
                ("sample_max_stack", ctypes.c_uint16), ("reserved", ctypes.c_uint16)]


class CpuSamples(NamedTuple):
    samples: int
    own: int
    """In the candidate's own builds, or in the C math library (`_MATH`)."""
    library: int
    """In PyTorch's or another library's code that is neither glue (`_GLUE`) nor the candidate's."""
    glue: int
    other: int
    """Anonymous executable memory (JIT code: oneDNN's, or the candidate's) and addresses in no mapping."""
    lost: int
    """Samples the kernel dropped (a ring full)."""
    top: list[tuple[str, int]]
    """The libraries with most samples outside the candidate's builds, most first."""

    @property
    def library_share(self) -> float:
        return self.library / self.samples if self.samples else 0.0

    def describe(self) -> str:
        libs = ", ".join(f"{name} {n}" for name, n in self.top[:4])
        return (f"{self.samples} samples of the worker's threads: {self.own} in the candidate's builds and libm, {self.library} "
                f"in PyTorch's or other libraries' code ({libs}), {self.glue} in the interpreter and runtimes, "
                f"{self.other} elsewhere")


def classify(path: str, own: set[str]) -> str:
    """`own`, `glue`, `library` or `other` (no file) for a mapping's path."""
    base = os.path.basename(path)
    if path in own or path.startswith("/") and base.startswith(_MATH):
        return "own"
    if not path or not path.startswith("/") and not path.startswith("["):
        return "other"
    if base.startswith(_GLUE) or path.startswith("[") and base in ("[vdso]", "[vsyscall]"):
        return "glue"
    if path.startswith("["):
        return "other"
    return "library"


class CpuSampler:
    """`with CpuSampler(pid) as s: ...` samples every thread `pid` has at entry and the threads they start
    meanwhile; `s.census(own)` afterwards. One event per (thread, CPU the worker may run on), inherited by the
    threads it starts (the kernel maps an inherited event's ring only per CPU), each CPU's events writing into one
    ring. `s.error` says why nothing was sampled (the event refused, the process gone, too many events)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.error = ""
        self._events: list[int] = []
        self._rings: list[tuple[int, mmap.mmap]] = []
        self._records: list[bytes] = []

    def __enter__(self) -> CpuSampler:
        import fcntl

        libc = ctypes.CDLL(None, use_errno=True)
        attr = _Attr(type=_PERF_TYPE_SOFTWARE, size=ctypes.sizeof(_Attr), config=_PERF_COUNT_SW_CPU_CLOCK,
                     sample_period=PERIOD_NS, sample_type=_SAMPLE_IP | _SAMPLE_TID,
                     flags=_DISABLED | _INHERIT | _EXCLUDE_KERNEL | _EXCLUDE_HV)
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{self.pid}/task")]
            cpus = sorted(os.sched_getaffinity(self.pid))
        except OSError as e:
            self.error = f"the worker's threads could not be listed ({e})"
            return self
        if len(tids) * len(cpus) > _MAX_EVENTS:
            self.error = f"{len(tids)} threads on {len(cpus)} CPUs: more than {_MAX_EVENTS} events"
            return self
        ring_of: dict[int, int] = {}  # cpu -> the fd whose ring its events write into
        for cpu in cpus:
            for tid in tids:
                fd = libc.syscall(_NR_PERF_EVENT_OPEN, ctypes.byref(attr), tid, cpu, -1, _FD_CLOEXEC)
                if fd < 0:
                    err = ctypes.get_errno()
                    if err == 3:  # ESRCH: the thread ended meanwhile
                        continue
                    self.error = f"perf_event_open refused ({os.strerror(err)})"
                    break
                self._events.append(fd)
                if cpu in ring_of:
                    fcntl.ioctl(fd, _IOC_SET_OUTPUT, ring_of[cpu])
                    continue
                try:
                    ring = mmap.mmap(fd, (1 + _PAGES) * mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
                except OSError as e:
                    self.error = (f"the sampling ring of CPU {cpu} could not be mapped ({e}; "
                                  "kernel.perf_event_mlock_kb bounds what a user may lock)")
                    break
                ring_of[cpu] = fd
                self._rings.append((fd, ring))
            if self.error:
                break
        if self.error:
            self._close()
            return self
        for fd in self._events:
            fcntl.ioctl(fd, _IOC_ENABLE, 0)
        return self

    def __exit__(self, *exc) -> None:
        if not self._events:
            return
        import fcntl

        for fd in self._events:
            fcntl.ioctl(fd, _IOC_DISABLE, 0)
        self._records = [_drain(ring) for _, ring in self._rings]
        self._close()

    def _close(self) -> None:
        for _, ring in self._rings:
            ring.close()
        for fd in self._events:
            os.close(fd)
        self._rings, self._events = [], []

    def census(self, own: set[str]) -> CpuSamples | None:
        """The samples attributed to the worker's mappings now (None when nothing was sampled)."""
        if self.error or not self._records:
            return None
        try:
            maps = sorted((m.lo, m.hi, m.path) for m in proc_maps(self.pid) if "x" in m.perms)
        except OSError:
            return None
        starts = [m[0] for m in maps]
        kinds: Counter[str] = Counter()
        libs: Counter[str] = Counter()
        lost = 0
        import bisect

        for data in self._records:
            for kind, value in _samples(data):
                if kind == _RECORD_LOST:
                    lost += value
                    continue
                i = bisect.bisect_right(starts, value) - 1
                path = maps[i][2] if i >= 0 and value < maps[i][1] else ""
                k = classify(path, own)
                kinds[k] += 1
                if k != "own":
                    libs[os.path.basename(path) or "(anonymous)"] += 1
        total = sum(kinds.values())
        return CpuSamples(total, kinds["own"], kinds["library"], kinds["glue"], kinds["other"], lost,
                          libs.most_common(8))


def _drain(ring: mmap.mmap) -> bytes:
    """The ring's records in order, copied out. Nothing reads the ring while it fills (its tail stays 0), so the kernel
    never overwrites a record: a full ring drops new samples and says how many in a lost record."""
    head = struct.unpack_from("<Q", ring, 1024)[0]
    offset, size = struct.unpack_from("<QQ", ring, 1040)
    if not size:  # kernels before 4.1: the data area follows the metadata page
        offset, size = mmap.PAGESIZE, _PAGES * mmap.PAGESIZE
    return ring[offset:offset + min(head, size)]


def _samples(data: bytes):
    """(record type, instruction pointer or lost count) of each sample and lost record in `data`."""
    pos = 0
    while pos + 8 <= len(data):
        rtype, _misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > len(data):
            break
        if rtype == _RECORD_SAMPLE and size >= 24:
            yield rtype, struct.unpack_from("<Q", data, pos + 8)[0]
        elif rtype == _RECORD_LOST and size >= 24:
            yield rtype, struct.unpack_from("<Q", data, pos + 16)[0]
        pos += size


def library_time_finding(census: CpuSamples | None, error: str, calls: int, print_ms: float) -> Finding | None:
    """A reject when the candidate's burst spent most of its computing time in PyTorch's or other libraries' code
    (beyond `LIBRARY_FLOOR_MS` a call, the verifier's projections set aside); a flag when no census could be taken."""
    if census is None:
        return Finding(rule="cpu-census-unavailable", severity="flag", evidence=error or "no samples",
                       message="the kernel's sampler could not watch the candidate's worker, so library code doing "
                               "the work below the dispatcher could not be seen")
    per_sample = PERIOD_NS / 1e6
    library_ms = max(census.library * per_sample / max(calls, 1) - print_ms, 0.0)
    own_ms = census.own * per_sample / max(calls, 1)
    if library_ms <= LIBRARY_FLOOR_MS or library_ms <= LIBRARY_SHARE_LIMIT * (library_ms + own_ms):
        return None
    return Finding(rule="library-compute-observed", severity="reject", evidence=census.describe(),
                   message=f"under strict, the candidate's calls spent {library_ms:.3f} ms each in PyTorch's or other "
                           f"libraries' code and {own_ms:.3f} ms in its own builds (the kernel's samples of its "
                           "worker, the verifier's projections set aside): the work is the library's, reached below "
                           "the dispatcher (judge with `--policy kernelbench`, where PyTorch may compute the rest)")
