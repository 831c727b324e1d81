"""One timing phase per device at a time, across every Verifier of a process and across processes.

Two subjects timed on one GPU at once skew each other's numbers, and on CUDA so does any other work on the device
while a subject is timed: another candidate's trials would be seen by the device-wide end event as this candidate's
escaped work. The lock is an `flock` on a file per device under the build cache (shared by every process that uses
that cache), taken in two modes:

- **exclusive** around a timing phase (the rounds of candidate, eager and `torch.compile`, and the wall-clock
  bursts) and around measuring the device's peaks;
- **shared** around everything else that runs kernels on the device: on CUDA every call of a judgement to its
  workers (reference trials, correctness, census, probes, alternative shapes; `DeviceHold.shared`, taken by
  `Worker.call`), and compute-sanitizer runs for their whole length (with `verify.sanitize_gated`, from when their
  targets are set up, no kernel run yet, to their end: `verify/sanitize.py`). Host work between calls (transfers,
  float64 comparisons) holds nothing.
  One call holds it from the worker's side instead: building the `torch.compile` baseline, which the reference
  worker (trusted code) holds shared itself except while Dynamo and Inductor compile (`DeviceHold.lend`,
  `kmworker/compile_share.py`): minutes of host work on a large problem that kept every timing phase waiting.

So on one GPU several judgements (`judges_per_gpu` device slots) and sanitizer runs proceed side by side, and a
timing phase has the device to itself. Measured on the H200 (2026-12-01) with the whole judgement exclusive: 55 s
a judgement of a 16M-element task, 18 s of it timing; the rest is host work (transfers, float64 comparisons,
worker start-ups) that needs no exclusive device.

`flock` is not fair: a steady stream of shared holders could delay a timing phase without end. Within one process,
`TimingFirst` restores the order: a call about to take the device shared waits while a timing phase of the same
device is pending (waiting for the lock or holding it), at most `yield_to_timing_s`. On the CPU only the timing
phase takes the lock (exclusive); the CPU's other work is not held back.

What sharing gives up: a candidate's native code can leave kernels running after its worker has replied (the
worker synchronizes the device before every reply, but the candidate controls its own process). With the device
shared, such work can land in another candidate's timing (that candidate is then slower, or `timing_anomaly` for
escaped work): sabotage of a neighbour, never a gain for the candidate itself. `judges_per_gpu = 1` rules it out.

A whole judgement holds the device exclusively when it would not fit in memory beside the others, or after it ran out
of device memory with the device shared (`verify/device_memory.py`); its timing phases nest inside that hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from kernelmosaic.paths import judge_dir

__all__ = ["timing_lock", "lock_path", "TimingFirst", "timing_first", "DeviceHold", "CpuHold", "device_hold", "acquire", "holders",
           "SAY_WAIT_S"]

_local = threading.Lock()
_by_path: dict[str, threading.Lock] = {}
log = logging.getLogger(__name__)
SAY_WAIT_S = 120.0
"""A wait for the device longer than this is logged every as often, naming the processes that hold its lock."""


def holders(fd: int) -> list[str]:
    """The processes holding an flock on the file open as `fd` ("pid: command line"), from /proc/locks (empty where
    the kernel does not say)."""
    try:
        inode = os.fstat(fd).st_ino
        with open("/proc/locks") as f:
            rows = [line.split() for line in f]
    except OSError:
        return []
    pids = sorted({int(r[4]) for r in rows if len(r) > 5 and r[1] == "FLOCK" and r[5].rsplit(":", 1)[-1] == str(inode)
                   and r[4].isdigit()})
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:160]
        except OSError:
            cmd = "?"
        out.append(f"{pid}: {cmd}")
    return out


def acquire(fd: int, mode: int, what: str) -> None:
    """`flock(fd, mode)`, waiting as long as it takes; a wait past SAY_WAIT_S is logged (and again every as often)
    with the processes holding the lock: a judgement stuck behind another process is seen, not silent."""
    started = say = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(0.02)
        if time.monotonic() - say >= SAY_WAIT_S:
            say = time.monotonic()
            log.warning("waiting %.0f s for %s; held by %s", say - started, what, "; ".join(holders(fd)) or "unknown")


def lock_path(cache_dir: Path, key: str) -> Path:
    """The lock file of one device (`key`: its UUID where known, else its name, e.g. `cuda:0` or `cpu`)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return judge_dir(cache_dir) / "locks" / f"timing-{digest}.lock"


@contextlib.contextmanager
def timing_lock(cache_dir: Path, key: str, shared: bool = False) -> Iterator[float]:
    """Hold the device's timing lock (as one of several readers with `shared`); yields the seconds spent waiting."""
    path = lock_path(cache_dir, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _local:
        thread_lock = _by_path.setdefault(str(path), threading.Lock())
    started = time.perf_counter()
    # Exclusive holders of one process queue on the thread lock, processes on the flock; every holder opens the
    # file itself, so readers and writers of one process exclude each other through the flock too.
    with thread_lock if not shared else contextlib.nullcontext(), open(path, "a+") as f:
        acquire(f.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX, f"the device's timing lock ({key})")
        try:
            yield round(time.perf_counter() - started, 3)
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


class TimingFirst:
    """Timing phases before shared holders, in one process: `timing()` marks one pending from before it asks for the
    lock until it lets it go; `turn()` blocks a shared holder until none is pending (at most `max_wait_s`, so a
    steady stream of timings from other clients delays a shared holder, never starves it)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending = 0

    @property
    def pending(self) -> int:
        with self._cond:
            return self._pending

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        with self._cond:
            self._pending += 1
        try:
            yield
        finally:
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    def turn(self, max_wait_s: float) -> float:
        """Wait until no timing phase is pending; returns the seconds waited."""
        started = time.perf_counter()
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0, timeout=max_wait_s)
        return round(time.perf_counter() - started, 3)


_gates: dict[str, TimingFirst] = {}


def timing_first(cache_dir: Path, key: str) -> TimingFirst:
    """The process-wide gate of one device's lock (`key` as for `timing_lock`): every Verifier of the process
    shares it."""
    with _local:
        return _gates.setdefault(str(lock_path(cache_dir, key)), TimingFirst())


class DeviceHold:
    """One judgement's hold on a device. `shared()` around each worker call that may run kernels (Worker.call
    takes it), so another judgement's timing waits at most for the calls in flight, not for whole judgements;
    `exclusive()` around a timing phase, inside which the calls take nothing more. A call about to take the device
    shared first waits for this process's pending timings (`TimingFirst`, at most `yield_to_timing_s`). Used by one
    thread at a time: the judgement's."""

    def __init__(self, cache_dir: Path, key: str, yield_to_timing_s: float) -> None:
        self.path = lock_path(cache_dir, key)
        self.gate = timing_first(cache_dir, key)
        self.max_wait_s = yield_to_timing_s
        self._file = None
        self._depth = 0
        self._alone = False
        self.waited = 0.0
        """Seconds spent waiting for the device, shared or alone, over every call so far (`device_lock_wait`)."""

    def __enter__(self) -> DeviceHold:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a+")  # noqa: SIM115 - held across the judgement, closed in __exit__
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            self._file.close()  # closing the file lets go of any lock still held through it
            self._file = None

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        if self._alone or self._depth:  # inside exclusive() or another shared(): already held
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        fd = self._fileno()
        started = time.perf_counter()
        self.gate.turn(self.max_wait_s)
        acquire(fd, fcntl.LOCK_SH, f"the device (shared, {self.path.name})")
        self.waited = round(self.waited + time.perf_counter() - started, 3)
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)

    @property
    def alone(self) -> bool:
        """The device is held alone now (inside `exclusive()`)."""
        return self._alone

    def lend(self) -> str | None:
        """The lock file, for a trusted worker to hold shared itself for one call that needs the device only for
        part of its length (`kmworker/compile_share.py`), after this process's pending timings (as `shared()`); None
        where this judgement already holds the device (alone, or shared): then the call is held here as any other."""
        if self._alone or self._depth:
            return None
        self._fileno()  # inside `with hold:`, so the file exists
        self.waited = round(self.waited + self.gate.turn(self.max_wait_s), 3)
        return str(self.path)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[float]:
        """The device alone; yields the seconds waited for it. Inside another `exclusive()` (a judgement that holds
        the device alone for its whole length, `verify/device_memory.py`) it holds nothing more and yields 0."""
        if self._alone:
            yield 0.0
            return
        if self._depth:
            raise RuntimeError("exclusive() inside shared(): the judgement would wait for itself")
        fd = self._fileno()
        started = time.perf_counter()
        with self.gate.timing():
            acquire(fd, fcntl.LOCK_EX, f"the device alone ({self.path.name})")
            waited = round(time.perf_counter() - started, 3)
            self.waited = round(self.waited + waited, 3)
            self._alone = True
            try:
                yield waited
            finally:
                self._alone = False
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _fileno(self) -> int:
        if self._file is None:
            raise RuntimeError("DeviceHold used outside `with hold:`")
        return self._file.fileno()


class CpuHold:
    """The CPU's hold: nothing around the calls (CPU batches stay parallel), the device's timing lock while it times
    or while a whole judgement holds the CPU device alone (`exclusive()`, reentrant like DeviceHold's)."""

    def __init__(self, cache_dir: Path, device: str) -> None:
        self.cache_dir, self.device, self.waited = cache_dir, device, 0.0
        self._alone = False

    def __enter__(self) -> CpuHold:
        return self

    def __exit__(self, *exc) -> None:
        return None

    @property
    def alone(self) -> bool:
        return self._alone

    def shared(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def lend(self) -> str | None:
        return None  # nothing to lend: the CPU's calls hold nothing

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[float]:
        if self._alone:
            yield 0.0
            return
        with timing_lock(self.cache_dir, self.device) as waited:
            self.waited = round(self.waited + waited, 3)
            self._alone = True
            try:
                yield waited
            finally:
                self._alone = False


def device_hold(device: str, config) -> DeviceHold | CpuHold:
    """A judgement's hold on its device (`DeviceHold`): on CUDA shared around each worker call and exclusive while
    it times, because another judgement's reference run, trials or probes on the same GPU would be seen by the
    device-wide end event as this candidate's escaped work and would skew its timing. The CPU's (`CpuHold`).
    `config`: the VerifyConfig (its cache folder and `yield_to_timing_s`)."""
    if not device.startswith("cuda"):
        return CpuHold(config.cache_dir, device)
    return DeviceHold(config.cache_dir, f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')}/{device}",
                      config.yield_to_timing_s)
