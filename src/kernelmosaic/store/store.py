"""The Store: the typed API the agent, sft and evaluate stages use to record and read runs.

Every write is one transaction, committed before the call returns, so a crash loses at most the
call in flight. One engine per store, one session per call; SQLite writes go through a lock
because SQLite has a single writer anyway and waiting in Python is kinder than SQLITE_BUSY.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from kernelmosaic.contracts.trajectory import TRAJECTORY_SCHEMA, Event, Solution, Totals, Trajectory
from kernelmosaic.contracts.verdict import Verdict
from kernelmosaic.store import episodes as ep
from kernelmosaic.store import results as res
from kernelmosaic.store.backends import default_url, make_engine, sqlite_file
from kernelmosaic.store.errors import StoreError
from kernelmosaic.store.migrate import migrate_v1
from kernelmosaic.store.records import Episode, EpisodeInfo, RunInfo, RunSummary
from kernelmosaic.store.schema import SCHEMA_VERSION, Base, EpisodeRow, MetaRow, RunRow, utcnow
from kernelmosaic.store.summary import episode_info, run_info, run_summary

__all__ = ["Store", "open_store"]

log = logging.getLogger(__name__)
T = TypeVar("T")


def open_store(url: str | None = None, create: bool = True) -> Store:
    """Open (creating tables if needed) the store at `url` (a URL or a SQLite file path); default:
    $KERNELMOSAIC_DB or ./kernelmosaic.db. With `create=False` a missing SQLite file is an error, not a new store."""
    url = url or default_url()
    path = sqlite_file(url)
    if not create and path is not None and not path.is_file():
        raise StoreError(f"no store at {path} (nothing recorded there yet; `kernelmosaic generate` creates it, "
                         "--db or $KERNELMOSAIC_DB points elsewhere)")
    return Store(make_engine(url))


class Store:
    """Runs, episodes, events, candidates, verdicts and solutions in one database; safe to share across threads."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.url = engine.url.render_as_string(hide_password=True)
        sqlite = engine.dialect.name == "sqlite"
        self._write_lock: contextlib.AbstractContextManager = threading.Lock() if sqlite else contextlib.nullcontext()
        # An in-memory database is one shared connection: reads must queue behind writes too.
        shared = isinstance(engine.pool, StaticPool)
        self._read_lock = self._write_lock if shared else contextlib.nullcontext()
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._create_schema()

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- transactions -------------------------------------------------------------------------

    def _write(self, operation: Callable[[Session], T]) -> T:
        for attempt in (1, 2):
            try:
                with self._write_lock, self._sessions.begin() as session:
                    return operation(session)
            except IntegrityError as exc:
                # Another process inserted the same unique key between our read and our write;
                # the retry reads its row and takes the idempotent path.
                if attempt == 2:
                    raise StoreError(f"store {self.url}: conflicting concurrent write: {exc.orig}") from exc
                log.debug("store %s: concurrent insert (%s); retrying once", self.url, exc.orig)
                continue
            except SQLAlchemyError as exc:
                raise StoreError(f"store {self.url}: {exc}") from exc
        raise AssertionError("unreachable")

    def _read(self, operation: Callable[[Session], T]) -> T:
        try:
            with self._read_lock, self._sessions() as session:
                return operation(session)
        except SQLAlchemyError as exc:
            raise StoreError(f"store {self.url}: {exc}") from exc

    def _create_schema(self) -> None:
        for attempt in (1, 2):
            try:
                with self._write_lock:
                    Base.metadata.create_all(self._engine)
                break
            except SQLAlchemyError as exc:
                # A second process creating the same tables at the same moment loses the race once;
                # on the retry the tables exist and create_all has nothing to do.
                if attempt == 2:
                    raise StoreError(f"store {self.url}: cannot create or open the tables: {exc}") from exc
                log.debug("store %s: creating tables failed once (%s); retrying", self.url, exc)
        self._write(self._check_version)

    def _check_version(self, session: Session) -> None:
        row = session.get(MetaRow, "schema_version")
        if row is None:
            session.add(MetaRow(key="schema_version", value=str(SCHEMA_VERSION)))
            session.add(MetaRow(key="trajectory_schema", value=TRAJECTORY_SCHEMA))
        elif row.value == "1":
            migrate_v1(session)
            row.value = str(SCHEMA_VERSION)
        elif row.value != str(SCHEMA_VERSION):
            raise StoreError(
                f"store {self.url} has schema version {row.value}; this KernelMosaic reads version {SCHEMA_VERSION}"
            )

    # -- runs ---------------------------------------------------------------------------------

    def create_run(self, name: str, model: str, task_source: str, config: dict[str, Any] | BaseModel) -> int:
        data = config.model_dump(mode="json") if isinstance(config, BaseModel) else dict(config)
        ep.check_json_clean(data, f"run {name!r} config")

        def create(session: Session) -> int:
            row = RunRow(name=name, model=model, task_source=task_source, config=data)
            session.add(row)
            session.flush()
            return row.id

        return self._write(create)

    def get_run(self, run_id: int) -> RunInfo:
        return self._read(lambda s: run_info(ep.get_run_row(s, run_id)))

    def finish_run(self, run_id: int, status: Literal["done", "failed", "interrupted"] = "done") -> None:
        def finish(session: Session) -> None:
            row = ep.get_run_row(session, run_id)
            row.status, row.finished = status, utcnow()

        self._write(finish)

    def reopen_run(self, run_id: int) -> None:
        """A resumed run is `running` again (it may have been left `interrupted`, or `failed` when nothing could run)."""
        def reopen(session: Session) -> None:
            row = ep.get_run_row(session, run_id)
            if row.status in ("interrupted", "failed"):
                row.status, row.finished = "running", None

        self._write(reopen)

    def list_runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        return self._read(lambda s: [run_info(r) for r in s.scalars(select(RunRow).order_by(RunRow.id.desc()))])

    def latest_run(self, name: str | None = None) -> RunInfo | None:
        """The newest run (with that name, when given); None when there is none."""
        query = select(RunRow).order_by(RunRow.id.desc())
        if name is not None:
            query = query.where(RunRow.name == name)
        return self._read(lambda s: next((run_info(r) for r in s.scalars(query.limit(1))), None))

    def find_resumable_run(self, name: str, model: str | None = None, task_source: str | None = None) -> RunInfo | None:
        """The newest unfinished (running or interrupted) run with this name (and model / task source, when given)."""
        query = select(RunRow).where(RunRow.name == name, RunRow.status.in_(["running", "interrupted"]))
        if model is not None:
            query = query.where(RunRow.model == model)
        if task_source is not None:
            query = query.where(RunRow.task_source == task_source)
        query = query.order_by(RunRow.id.desc()).limit(1)
        return self._read(lambda s: next((run_info(r) for r in s.scalars(query)), None))

    def run_summary(self, run_id: int) -> RunSummary:
        return self._read(lambda s: run_summary(s, run_id))

    def pending_tasks(self, run_id: int, task_ids: Sequence[str], final_failures: Sequence[str] = ()) -> list[str]:
        """The given task ids, in order, whose episode in the run is not finished yet.

        A `failed` episode is pending (a resume retries it) unless its exit reason is in `final_failures`.
        """

        def pending(session: Session) -> list[str]:
            ep.get_run_row(session, run_id)
            query = select(EpisodeRow.task_id).where(
                EpisodeRow.run_id == run_id,
                (EpisodeRow.status == "done")
                | ((EpisodeRow.status == "failed") & EpisodeRow.exit_reason.in_(list(final_failures))))
            closed = set(session.scalars(query))
            return [task_id for task_id in task_ids if task_id not in closed]

        return self._read(pending)

    # -- episodes and events ------------------------------------------------------------------

    def _episode(self, session: Session, row: EpisodeRow) -> Episode:
        events = ep.load_events(session, row.id)
        return Episode(**episode_info(session, row).model_dump(), events=events, next_seq=ep.next_seq(session, row.id))

    def start_episode(self, run_id: int, task_id: str, task_sha256: str = "", problem_sha256: str = "",
                      task_flags: Sequence[str] = (), header: dict[str, Any] | None = None) -> Episode:
        """The episode of this task in this run: new, or the existing one with its events (resume).

        `task_flags` are recorded on it (e.g. `task-audit-failed`); `header` holds trajectory header fields
        (`tools`, `origin_model`) and replaces the stored one when given.
        """

        def start(session: Session) -> Episode:
            row = ep.open_episode(session, run_id, task_id, task_sha256, problem_sha256)
            if header is not None:
                ep.check_json_clean(header, f"episode of {task_id!r} header")
                row.header = header
            res.add_task_flags(session, row, list(task_flags))
            return self._episode(session, row)

        return self._write(start)

    def get_episode(self, episode_id: int) -> Episode:
        return self._read(lambda s: self._episode(s, ep.get_episode_row(s, episode_id)))

    def list_episodes(self, run_id: int) -> list[EpisodeInfo]:
        def list_(session: Session) -> list[EpisodeInfo]:
            ep.get_run_row(session, run_id)
            rows = session.scalars(select(EpisodeRow).where(EpisodeRow.run_id == run_id).order_by(EpisodeRow.id))
            return [episode_info(session, row) for row in rows]

        return self._read(list_)

    def append_event(self, episode_id: int, seq: int, event: Event | dict[str, Any]) -> bool:
        """Commit one event at `seq` (0-based, in order). True if written, False if it was already there.

        Raises EventConflictError when `seq` holds a different event.
        """
        return self._write(lambda s: ep.append_event(s, episode_id, seq, event))

    def save_totals(self, episode_id: int, totals: Totals) -> None:
        """Checkpoint the running totals (wall time included) without finishing the episode."""
        data = totals.model_dump(mode="json")
        ep.check_json_clean(data, f"episode {episode_id} totals")

        def save(session: Session) -> None:
            ep.get_episode_row(session, episode_id).totals = data

        self._write(save)

    def finish_episode(
        self,
        episode_id: int,
        exit_reason: str,
        totals: Totals,
        best: Solution | None = None,
        status: Literal["done", "failed"] = "done",
        detail: str = "",
    ) -> EpisodeInfo:
        """Close the episode: `done` when the loop ended normally, `failed` for an infrastructure error."""

        def finish(session: Session) -> EpisodeInfo:
            row = ep.finish_episode_row(session, episode_id, status, exit_reason, totals.model_dump(mode="json"), detail)
            if best is not None:
                res.set_best(session, row, best)
            session.flush()
            return episode_info(session, row)

        return self._write(finish)

    # -- candidates, verdicts, solutions ------------------------------------------------------

    def record_candidate(self, episode_id: int, source: str) -> str:
        """Store the candidate's source (once per episode) and return its sha256."""
        return self._write(lambda s: res.record_candidate(s, episode_id, source).sha256)

    def record_verdict(self, episode_id: int, candidate_sha256: str, verdict: Verdict | dict[str, Any]) -> int:
        """Store a verdict (a `Verdict`, or its JSON form, validated) for a recorded candidate; returns its id.

        The candidate is then judged again (`contracts.verified`): its solution row is written, updated or
        dropped. Recording an identical verdict again (a replay after a crash) returns the existing id.
        """
        return self._write(lambda s: res.record_verdict(s, episode_id, candidate_sha256, verdict).id)

    def solutions(self, episode_id: int) -> list[Solution]:
        """Every candidate of the episode that passes on its own record, verified or flagged, oldest first."""
        return self._read(lambda s: res.load_solutions(s, ep.get_episode_row(s, episode_id)))

    # -- trajectories -------------------------------------------------------------------------

    def _trajectory(self, session: Session, row: EpisodeRow) -> Trajectory:
        run = ep.get_run_row(session, row.run_id)
        info = episode_info(session, row)
        header = row.header or {}
        return Trajectory(
            task_id=row.task_id,
            task_sha256=row.task_sha256,
            problem_sha256=row.problem_sha256,
            model=run.model,
            origin_model=header.get("origin_model", ""),
            tools=header.get("tools", []),
            config=run.config or {},
            events=ep.load_events(session, row.id),
            best=res.load_best(session, row),
            totals=info.totals,
            exit_reason=row.exit_reason,
        )

    def load_trajectory(self, episode_id: int) -> Trajectory:
        """The episode as a `kernelmosaic.trajectory/2`, rebuilt from the rows."""
        return self._read(lambda s: self._trajectory(s, ep.get_episode_row(s, episode_id)))

    def iter_trajectories(self, run_id: int, done_only: bool = False) -> Iterator[Trajectory]:
        """Every episode of the run as a trajectory, one read per episode (large runs stream)."""
        for info in self.list_episodes(run_id):
            if done_only and info.status != "done":
                continue
            yield self.load_trajectory(info.id)
