"""Many episodes writing at once through one Store: no lost rows, no cross-talk."""

from __future__ import annotations

import asyncio
import threading

from sqlalchemy import func, select
from store_helpers import CANDIDATE, accepted_verdict

from kernelmosaic.contracts.messages import Message
from kernelmosaic.contracts.trajectory import MessageEvent, Solution, Totals
from kernelmosaic.store import Store
from kernelmosaic.store.schema import EventRow

THREADS = 16
EVENTS = 4


def _episode_work(store: Store, episode_id: int, errors: list[BaseException]) -> None:
    try:
        for seq in range(EVENTS):
            event = MessageEvent(step=seq, message=Message(role="assistant", content=f"{episode_id}:{seq}"))
            store.append_event(episode_id, seq, event)
            store.append_event(episode_id, seq, event)  # every write replayed once, as a retrying agent would
        source = f"{CANDIDATE}# episode {episode_id}\n"
        sha = store.record_candidate(episode_id, source)
        store.record_verdict(episode_id, sha, accepted_verdict(speedup=1.0 + episode_id / 10))
        best = Solution(source=source, candidate_sha256=sha, verdict=accepted_verdict(speedup=1.0 + episode_id / 10), step=1)
        store.finish_episode(episode_id, "submitted", Totals(turns=EVENTS), best=best)
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which fails the test
        errors.append(exc)


def test_sixteen_threads_lose_no_rows(store: Store) -> None:
    run_id = store.create_run("threads", "fake", "seed", {})
    episodes = [store.start_episode(run_id, f"task-{i}").id for i in range(THREADS)]
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_episode_work, args=(store, eid, errors)) for eid in episodes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    total = store._read(lambda s: s.scalar(select(func.count()).select_from(EventRow)))
    assert total == THREADS * EVENTS
    for episode_id in episodes:
        events = store.load_trajectory(episode_id).events
        assert [e.message.content for e in events] == [f"{episode_id}:{seq}" for seq in range(EVENTS)]
    summary = store.run_summary(run_id)
    assert (summary.done, summary.solved, summary.pass_rate) == (THREADS, THREADS, 1.0)
    assert summary.totals.turns == THREADS * EVENTS


def test_asyncio_episodes_share_one_store(store: Store) -> None:
    run_id = store.create_run("async", "fake", "seed", {})

    async def episode(task_id: str) -> int:
        opened = await asyncio.to_thread(store.start_episode, run_id, task_id)
        for seq in range(5):
            event = MessageEvent(step=seq, message=Message(role="user", content=task_id))
            await asyncio.to_thread(store.append_event, opened.id, seq, event)
        return opened.id

    async def main() -> list[int]:
        return await asyncio.gather(*(episode(f"t{i}") for i in range(8)))

    ids = asyncio.run(main())
    assert [len(store.get_episode(i).events) for i in ids] == [5] * 8
