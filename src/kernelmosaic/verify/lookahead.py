"""Compiles ahead of judgement: up to `lookahead` candidates build on CPU workers while the devices judge others.

Static rejects and build-cache hits never wait in the compile queue: they are settled when the job starts, a reject
is finished at once and a cache hit goes straight to the judges. Judges (two threads per device slot) take compiled
jobs in the order their compiles end. With several device slots, the batch's first problems (one per slot) are set
up ahead, while the first candidates compile: reference trials and the `torch.compile` baseline
(`Verifier.prepare`), which a slot's first judgement of a problem would otherwise do itself, 24-33 s on the H200 with
its candidate waiting. The candidates of the batch's most shared build start first and every other compile runs at a
higher niceness; a later candidate of a shared build waits for the first one's compile, with a compile worker loading
torch at that niceness meanwhile (for up to `lookahead` of them), and compiles in it when the build is
done (`build_order`). Verdicts come back as they are decided, each with its index.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.verify.build_order import Start, compile_plan
from kernelmosaic.verify.compile_stage import spare_compile_worker
from kernelmosaic.verify.job import Job, finish

if TYPE_CHECKING:
    from kernelmosaic.verify.config import VerifyConfig
    from kernelmosaic.verify.pool import Worker

__all__ = ["run_lookahead"]


class Judging(Protocol):
    """What the look-ahead drives (`Verifier`): start a job, compile it (in a compile worker launched ahead or a new
    one), prepare its problem on a slot, judge it."""

    config: VerifyConfig
    device_count: int

    def start(self, problem: Path, candidate: Path, **options) -> Job: ...

    def compile_job(self, job: Job, worker: Worker | None = None) -> None: ...

    def prepare(self, job: Job) -> None: ...

    def judge(self, job: Job) -> Verdict: ...

log = logging.getLogger(__name__)


def _log_failure(fut: Future) -> None:
    """A preparation decides nothing (its problem's judgements meet any failure again and report it): logged only."""
    if not fut.cancelled() and (exc := fut.exception()) is not None:
        log.warning("preparing a problem ahead of its judgements failed: %s: %s", type(exc).__name__, exc)


def _text(path: Path) -> str | None:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:  # `Verifier.start` reports it, in order with the verdicts
        return None


def run_lookahead(verifier: Judging, pairs: Sequence[tuple[Path, Path]], options: dict) -> Iterator[tuple[int, Verdict]]:
    """(index, verdict) for every pair, in the order they are decided. An exception of any stage (an unreadable
    input, a verifier that cannot start workers) is raised here, after the work in flight has stopped."""
    done: queue.Queue[tuple[int, Verdict | BaseException]] = queue.Queue()
    # more threads than the compile gate has places: a compile waiting on another's shared build lets its place go
    # (Verifier._gated_compile), and another candidate's compile takes it
    compiles = ThreadPoolExecutor(4 * verifier.config.lookahead_slots(), thread_name_prefix="km-compile")
    # twice the slots: a thread that sanitizes after its judgement has handed its slot back already
    judges = ThreadPoolExecutor(2 * verifier.device_count, thread_name_prefix="km-judge")

    def report(i: int, fut: Future) -> None:
        if fut.cancelled():  # the caller stopped early: nobody reads this
            return
        exc = fut.exception()
        done.put((i, exc if exc is not None else fut.result()))

    def judge(i: int, job: Job) -> None:
        judges.submit(verifier.judge, job).add_done_callback(lambda f: report(i, f))

    # followers (`Start.after`) wait here, off the compile pool, until their leader's compile is done
    followers: dict[int, list[tuple[int, Job, Worker | None, float]]] = defaultdict(list)
    released: set[int] = set()
    lock = threading.Lock()

    def compile_then_judge(i: int, job: Job, worker: Worker | None = None) -> None:
        try:
            verifier.compile_job(job, worker)
        finally:
            release(i)
        if job.stop is not None:  # a compile error needs no device
            done.put((i, finish(job)))
        else:
            judge(i, job)

    def submit_compile(i: int, job: Job, worker: Worker | None = None) -> None:
        def ended(f: Future) -> None:
            if f.cancelled():
                if worker is not None:  # never handed to a compile: nobody else stops it
                    worker.kill()
            elif f.exception() is not None:
                done.put((i, f.exception()))
        try:
            compiles.submit(compile_then_judge, i, job, worker).add_done_callback(ended)
        except RuntimeError:  # the batch is stopping (the pool is shut down): this compile never runs
            if worker is not None:
                worker.kill()

    def release(i: int) -> None:
        """`i`'s compile is settled (built, failed, cached or never started): its followers go to the compile pool."""
        with lock:
            released.add(i)
            waiting = followers.pop(i, [])
        for f, job, worker, since in waiting:
            job.out.phase_seconds["build_wait"] = time.perf_counter() - since
            submit_compile(f, job, worker)

    def follow(start: Start, job: Job, spare: bool) -> None:
        worker = spare_compile_worker(verifier.config, start.nice) if spare else None
        with lock:
            if start.after not in released:
                followers[start.after].append((start.index, job, worker, time.perf_counter()))
                return
        submit_compile(start.index, job, worker)

    prepared: set[str] = set()

    def prepare(job: Job) -> None:
        sha = job.verdict.problem_sha256
        if job.stop is None and sha not in prepared and len(prepared) < verifier.device_count:
            prepared.add(sha)  # submitted before any judgement of it: the judges take work first come, first served
            judges.submit(verifier.prepare, job).add_done_callback(_log_failure)

    plan = [Start(i, 0) for i in range(len(pairs))]  # one candidate (or none): nothing to put first
    if len(pairs) > 1:
        plan = compile_plan([_text(c) for _, c in pairs], verifier.config.compile_nice)
    spares = verifier.config.lookahead_slots()  # followers given a worker that loads torch while their build runs
    try:
        for start in plan:
            i = start.index
            problem, candidate = pairs[i]
            try:
                job = verifier.start(problem, candidate, **options)
            except Exception as exc:  # noqa: BLE001 - raised to the caller below, in order with the verdicts
                done.put((i, exc))
                release(i)
                continue
            job.compile_nice = start.nice
            if len(pairs) > 1 and verifier.device_count > 1:  # one slot: the first judgement sets up as soon
                prepare(job)
            if job.stop is not None:
                release(i)
                done.put((i, finish(job)))
            elif job.compiled:
                release(i)
                judge(i, job)
            elif start.after is not None:
                follow(start, job, spares > 0)
                spares -= 1
            else:
                submit_compile(i, job)
        for _ in range(len(pairs)):
            i, got = done.get()
            if isinstance(got, BaseException):
                raise got
            yield i, got
    finally:
        compiles.shutdown(wait=True, cancel_futures=True)
        judges.shutdown(wait=True, cancel_futures=True)
        with lock:  # stopped early: followers whose leader never finished
            left = [worker for waiting in followers.values() for _, _, worker, _ in waiting if worker is not None]
            followers.clear()
        for worker in left:
            worker.kill()
