"""One task-selection rule for every run (`runs.selection.select_tasks`): `generate` and `evaluate` both use it."""

from __future__ import annotations

import pytest

from kernelmosaic.runs.selection import select_tasks
from kernelmosaic.tasks.sources import load_tasks


def test_levels_then_ids_in_the_order_given_then_the_limit():
    tasks = load_tasks("builtin")
    by_level = {t.level for t in tasks}
    assert len(by_level) > 1
    level = min(by_level)
    kept = select_tasks(tasks, levels=[level])
    assert kept and {t.level for t in kept} == {level} and len(kept) < len(tasks)
    ids = [kept[-1].id, kept[0].id]
    assert [t.id for t in select_tasks(tasks, ids, levels=[level])] == ids
    assert len(select_tasks(tasks, limit=2)) == 2 and select_tasks(tasks) == list(tasks)


def test_an_unknown_id_is_named_and_says_when_levels_hid_it():
    tasks = load_tasks("builtin")
    other = next(t for t in tasks if t.level != tasks[0].level)
    with pytest.raises(ValueError, match="unknown task id\\(s\\): no_such_task"):
        select_tasks(tasks, ["no_such_task"])
    with pytest.raises(ValueError, match=f"unknown task id\\(s\\) \\(after --levels\\): {other.id}"):
        select_tasks(tasks, [other.id], levels=[tasks[0].level])
