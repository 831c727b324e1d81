"""Child process for the crash test: append events forever, printing each seq once it is committed.

Usage: python crash_writer.py DB_URL RUN_ID TASK_ID. It resumes the episode, so a second run continues.
"""

from __future__ import annotations

import sys

from kernelmosaic.contracts.messages import Message, Usage
from kernelmosaic.contracts.trajectory import MessageEvent
from kernelmosaic.store import open_store


def main() -> None:
    url, run_id, task_id = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    store = open_store(url)
    episode = store.start_episode(run_id, task_id)
    seq = episode.next_seq
    while True:
        event = MessageEvent(step=seq, message=Message(role="assistant", content=f"step {seq}"), usage=Usage(prompt_tokens=1))
        store.append_event(episode.id, seq, event)
        # Only now is the event committed, so only now may the parent count on it.
        print(seq, flush=True)
        seq += 1


if __name__ == "__main__":
    main()
