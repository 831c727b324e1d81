"""Greedy selection with quotas: deterministic, quotas met, caps held; the CLI writes coverage and a plot."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from kernelmosaic.cli import app
from kernelmosaic.curate.select import Quotas, SelectConfig, select_greedy
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.sources import load_tasks
from kernelmosaic.tasks.synth import synthesize

from .conftest import task

SPEC = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0)\n"


def _pool():
    """Twelve near-identical activations (one cluster), two reductions, one level-2 task with a spec."""
    acts = [task(f"act_{i:02d}", f"torch.clamp({{x}}, min={i / 10})") for i in range(12)]
    return acts + [task("row_sum", "{x}.sum(dim=1)", category="reduction"),
                   task("row_max", "{x}.amax(dim=1)", category="reduction"),
                   task("fused_relu", "torch.relu({x} * 2.0)", category="fused", level=2, spec=SPEC)]


def _sim(tasks):
    """Activations are all alike; everything else is alone."""
    n = len(tasks)
    sim = np.eye(n)
    for i in range(n):
        for j in range(n):
            if tasks[i].category == tasks[j].category == "activation" and i != j:
                sim[i, j] = 0.9
    return sim


def test_quotas_pull_in_rare_buckets():
    tasks = _pool()
    no_quota = Quotas(min_per_category=0, min_per_level=0, min_per_form=0, max_category_share=1.0)
    plain = select_greedy(tasks, _sim(tasks), SelectConfig(budget=3, quotas=no_quota))
    assert len(plain.ids) == 3
    quota = select_greedy(tasks, _sim(tasks), SelectConfig(budget=4))
    picked = {t.id: t for t in tasks if t.id in quota.ids}
    assert {t.category for t in picked.values()} == {"activation", "reduction", "fused"}
    assert {t.level for t in picked.values()} == {1, 2}
    assert any(t.has_spec for t in picked.values()) and not all(t.has_spec for t in picked.values())
    assert quota.shortfalls == []


def test_category_cap_and_explicit_minimum():
    tasks = _pool()
    config = SelectConfig(budget=10, quotas=Quotas(max_category_share=0.3, minimums={"category:reduction": 2}))
    selection = select_greedy(tasks, _sim(tasks), config)
    by_id = {t.id: t for t in tasks}
    cats = [by_id[i].category for i in selection.ids]
    assert cats.count("reduction") == 2
    # 3 activations fit the cap; the budget of 10 then cannot be filled without breaking it, and is filled anyway
    assert len(selection.ids) == 10 and len(set(selection.ids)) == 10


def test_unmeetable_quota_is_reported():
    tasks = _pool()
    selection = select_greedy(tasks, _sim(tasks), SelectConfig(budget=2, quotas=Quotas(min_per_category=1)))
    assert len(selection.ids) == 2
    assert any("category:" in s for s in selection.shortfalls)


@pytest.mark.parametrize("method", ["facility", "kcenter"])
def test_selection_is_deterministic_and_order_independent(method):
    tasks = _pool()
    sim = _sim(tasks)
    first = select_greedy(tasks, sim, SelectConfig(budget=6, method=method))
    order = list(range(len(tasks)))[::-1]
    shuffled = select_greedy([tasks[i] for i in order], sim[np.ix_(order, order)], SelectConfig(budget=6, method=method))
    assert first.ids == shuffled.ids
    assert 0 < first.objective <= 1


def test_kcenter_spreads_over_the_clusters():
    tasks = _pool()
    no_quota = Quotas(min_per_category=0, min_per_level=0, min_per_form=0, max_category_share=1.0)
    picked = select_greedy(tasks, _sim(tasks), SelectConfig(budget=4, method="kcenter", quotas=no_quota)).ids
    assert sum(i.startswith("act_") for i in picked) == 1


def test_cli_select_on_seed_and_synthesized_tasks(tmp_path, embedder, monkeypatch):
    import kernelmosaic.curate.embed as embed_module

    monkeypatch.setattr(embed_module, "Embedder", lambda: embedder)  # one model load per test session
    pool = tmp_path / "pool"
    for t in load_tasks("builtin")[::7] + synthesize(10, seed=3):
        save_task_folder(t, pool)
    relu = next(t for t in load_tasks(str(pool)) if t.id == "l1_relu" or t.category == "activation")
    copy = relu.model_copy(update={"id": relu.id + "_copy"})  # a planted exact copy
    save_task_folder(copy, pool)
    out = tmp_path / "out"
    args = ["curate", "select", "--tasks", str(pool), "--budget", "20", "--cache-dir", str(tmp_path / "cache")]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    # piped, each phase is a line on stderr (a spinner only on a terminal): never silent while it embeds
    phases = re.findall(r"^curate select: (.+) \(\d+ s\)$", result.stderr, re.M)
    assert phases[0] == "loading the embedding model" and phases[-1].startswith("writing the selection"), result.stderr
    record = json.loads((out / "selection.json").read_text())
    assert len(record["ids"]) == 20 and record["dropped_duplicates"] == [relu.id + "_copy"]
    assert len(list((out / "tasks").rglob("task.toml"))) == 20
    coverage = json.loads((out / "coverage.json").read_text())
    assert coverage["pool"] == len(load_tasks(str(pool))) and coverage["selected"] == 20
    assert coverage["cover_selected"]["mean"] < coverage["cover_random"]["mean"]
    assert coverage["nn_selected"]["mean"] > coverage["nn_pool"]["mean"]
    assert (out / "coverage.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| category:fused |" in (out / "coverage.md").read_text()
    again = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "again")])  # embeddings from the cache
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "again" / "selection.json").read_text())["ids"] == record["ids"]


def test_cli_select_refuses_bad_config(tmp_path):
    bad = tmp_path / "select.toml"
    bad.write_text("[select]\nbudget = 5\nmethod = 'random'\n")
    result = CliRunner().invoke(app, ["curate", "select", "--config", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "select.toml: [select] method" in result.output
    result = CliRunner().invoke(app, ["curate", "select", "--config", str(bad), "--set", "select.method=kcenter",
                                      "--set", "select.quotas.max_category_share=2", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "[select] quotas.max_category_share" in result.output
    result = CliRunner().invoke(app, ["curate", "select", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "budget" in result.output
