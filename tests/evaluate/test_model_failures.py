"""A model that fails to answer is a failed sample: counted in every denominator, listed as a model failure, never
left out as an infrastructure error (docs/metrics.md, counted episodes). The operator's own configuration error and a
verifier that broke stay reported apart."""

from __future__ import annotations

import json
import re

import pytest
from eval_cli import invoke
from eval_kit import GOOD_RELU, write_call

from kernelmosaic.contracts.trajectory import Totals
from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.gates import MODEL_FAILED
from kernelmosaic.evaluate.records import TaskMeta
from kernelmosaic.evaluate.report.markdown import summary_markdown
from kernelmosaic.evaluate.summary import summarize_run
from kernelmosaic.models.base import BadResponse, ModelConfigError, Timeout
from kernelmosaic.models.scripted import register_script
from kernelmosaic.store import open_store


def _finish(store, run_id: int, task_id: str, reason: str, status: str, detail: str) -> None:
    episode = store.start_episode(run_id, task_id)
    store.finish_episode(episode.id, reason, Totals(prompt_tokens=10, wall_seconds=1.0), status=status, detail=detail)


def test_model_failures_count_in_every_denominator(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'km.db'}") as store:
        meta = {t: TaskMeta(level=1, category="elementwise") for t in "abcdef"}
        rid = store.create_run("evaluate", "scripted:x", "hand", EvalConfig(mode="agent", model="scripted:x",
                                                                           device="cpu", task_meta=meta))
        # agent/episode.py's exits: a timeout after the backend's retries, an unreachable endpoint, a reply that is
        # not a completion (prompt too long), a generic generation error (out of memory)
        _finish(store, rid, "a", "model_transient", "failed", "timeout: no answer within 600 s")
        _finish(store, rid, "b", "model_unusable", "failed", "unavailable HTTP 503: connection refused after 5 tries")
        _finish(store, rid, "c", "model_error", "done", "bad_response HTTP 400: prompt is too long (140000 tokens)")
        _finish(store, rid, "d", "model_error", "done", "model_error: CUDA out of memory while generating")
        # not the model: the operator's spec is unusable, and the verifier broke
        _finish(store, rid, "e", "model_unusable", "failed", "config: scripted:x takes no options")
        _finish(store, rid, "f", "infra_error", "failed", "WorkerDied: the reference worker crashed")
        summary = summarize_run(store, rid)

    counted = {t.task_id: t for t in summary.tasks}
    assert sorted(counted) == ["a", "b", "c", "d"]
    assert all(t.status == MODEL_FAILED and not t.gate1 and not t.correct for t in counted.values())
    assert counted["c"].model_failure.startswith("bad_response HTTP 400: prompt is too long")
    m = summary.overall
    assert (m.episodes, m.gate1_compile.denominator, m.correct.denominator) == (4, 4.0, 4.0)
    assert m.correct.numerator == 0.0 and m.gate1_compile.numerator == 0.0
    assert all(f.rate.denominator == 4.0 for f in m.fast_p if f.rate.measured)
    apart = {f.task_id: f.why for f in summary.flagged}
    assert sorted(apart) == ["e", "f"]
    assert apart["e"].startswith("infrastructure: the run's model configuration is unusable (config:")
    assert "not judged to the end" in apart["f"]
    text = summary_markdown([summary])
    assert "Model failures (counted as failed samples): 4" in text and "connection refused" in text


def _raises(exc):
    def reply(messages):
        raise exc
    return reply


def _by_task(messages):
    task_id = re.search(r"# Task (\S+):", messages[1].content).group(1)
    if task_id == "ev_relu":
        return write_call(GOOD_RELU, "call_relu")
    if task_id == "ev_scale":
        raise Timeout("the request did not finish within 300 s")
    if task_id == "ev_fused":
        raise BadResponse("prompt is too long: 140000 tokens > 131072", status_code=400)
    raise ModelConfigError("scripted model: no such option")


register_script("modelfail-oneshot", lambda: [_by_task])


@pytest.mark.slow
def test_one_shot_run_counts_a_raising_and_timing_out_model(session):
    """The real one-shot loop with a scripted model that answers one task, times out on one and raises on two."""
    run_id = session.evaluate("--model", "scripted:modelfail-oneshot", "--tasks", str(session.tasks))
    out = session.root / f"report-modelfail-{run_id}"
    invoke("report", str(run_id), "--db", session.db, "--out", str(out))
    s = json.loads((out / "summary.json").read_text())["runs"][0]
    rows = {t["task_id"]: t for t in s["tasks"]}
    # ev_tiny is a degenerate task (reported apart whatever the model does); the config error is the operator's
    assert {"ev_relu", "ev_scale", "ev_fused"} <= set(rows)
    assert rows["ev_scale"]["status"] == MODEL_FAILED and rows["ev_scale"]["model_failure"].startswith("timeout:")
    assert rows["ev_fused"]["model_failure"].startswith("bad_response")
    assert rows["ev_relu"]["model_failure"] == ""
    with open_store(session.db) as store:  # one classification with agent episodes (agent/episode.py)
        reasons = {e.task_id: e.exit_reason for e in store.list_episodes(run_id)}
    assert reasons["ev_scale"] == "model_transient" and reasons["ev_fused"] == "model_error", reasons
    counted = len(rows)
    assert s["overall"]["episodes"] == counted and s["overall"]["correct"]["denominator"] == counted
    assert s["overall"]["correct"]["numerator"] == sum(t["correct"] for t in rows.values())
    assert not any(f["task_id"] in ("ev_scale", "ev_fused") for f in s["flagged"])
