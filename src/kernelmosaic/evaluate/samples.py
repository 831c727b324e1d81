"""Samples of one task: K episodes per task in one run, told apart by a suffix on the episode's task id."""

from __future__ import annotations

import re

from kernelmosaic.tasks.schema import Task

__all__ = ["SAMPLE_SUFFIX", "sample_id", "split_sample", "sample_tasks"]

SAMPLE_SUFFIX = "__s"
"""Episode task id of sample k (k >= 1) of task T: `T__s<k>`; sample 0 keeps the task's own id."""
_SUFFIX = re.compile(r"^(.*)__s(\d+)$")


def sample_id(task_id: str, sample: int) -> str:
    return task_id if sample == 0 else f"{task_id}{SAMPLE_SUFFIX}{sample}"


def split_sample(episode_task_id: str) -> tuple[str, int]:
    """(task id, sample) of an episode's task id."""
    match = _SUFFIX.match(episode_task_id)
    return (match.group(1), int(match.group(2))) if match else (episode_task_id, 0)


def sample_tasks(tasks: list[Task], samples: int) -> list[Task]:
    """Each task once per sample (sample 0 first for every task, then sample 1, ...), as its own episode."""
    return [t if k == 0 else t.model_copy(update={"id": sample_id(t.id, k)}) for k in range(samples) for t in tasks]
