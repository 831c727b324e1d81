"""The review server over HTTP: decisions, edits, refusals, access control, and `review export`."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kernelmosaic.cli import app as cli
from kernelmosaic.curate.review.app import ServeConfig, create_app
from kernelmosaic.curate.review.auth import is_loopback, serving_token
from kernelmosaic.curate.review.build import build_board
from kernelmosaic.store import open_store
from kernelmosaic.store.reviews import FieldChange, ReviewLog
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.sources import load_tasks

from .conftest import review_tasks, running_server

HX = {"hx-request": "true"}


def _client(store, config=None):
    board = build_board(review_tasks(), ReviewLog(store))
    return TestClient(create_app(board, config or ServeConfig()), base_url="http://127.0.0.1:8765")


def test_page_shows_queue_forms_and_checks(store):
    page = _client(store).get("/")
    assert page.status_code == 200
    html = page.text
    assert 'data-task-id="t1_relu"' in html and "t4_row_sum" in html
    assert "output y[b, d] = max(x[b, d], 0.0)" in html  # the spec, beside nl and reference
    assert "def forward(self, x):" in html
    for check in ("degeneracy", "spec = reference", "decontamination", "duplicates", "size"):
        assert f'data-check="{check}"' in html
    assert "/static/htmx.min.js" in html
    assert _client(store).get("/static/htmx.min.js").text.startswith("var htmx=")


def test_decisions_and_edits_reach_the_log(store):
    client = _client(store)
    reply = client.post("/tasks/t1_relu/decision", data={"decision": "accept", "reviewer": "alice"}, headers=HX)
    assert reply.status_code == 200 and 'data-task-id="t2_sigmoid"' in reply.text  # the next one in the queue
    assert 'hx-swap-oob="true"' in reply.text  # the queue is refreshed too
    refused = client.post("/tasks/t2_sigmoid/decision", data={"decision": "reject", "reviewer": "alice"})
    assert refused.status_code == 422 and "needs a reason" in refused.text
    edit = client.post("/tasks/t3_tanh/edit", data={"nl": "Tanh of x.", "tags": "tanh, activation",
                                                     "reviewer": "bob"}, headers=HX)
    assert edit.status_code == 200 and "Tanh of x." in edit.text
    events = ReviewLog(store).events()
    assert [(e.task_id, e.kind, e.decision, e.reviewer) for e in events] == [
        ("t1_relu", "decision", "accept", "alice"), ("t3_tanh", "edit", None, "bob")]
    assert events[1].changes["tags"].new == ["tanh", "activation"]
    assert client.get("/log").text.count('<tr class="') == 2
    assert len(client.get("/log.jsonl").text.splitlines()) == 2
    assert client.get("/tasks/nope").status_code == 404
    assert client.get("/?filter=bogus").status_code == 400


def test_serve_generates_a_token_beyond_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7") and not is_loopback("example.org")
    assert serving_token("127.0.0.1", "") == "" and serving_token("localhost", "") == ""
    assert serving_token("0.0.0.0", "mine") == "mine"
    assert serving_token("127.0.0.2", "")  # another address, even on loopback, gets a token
    made = {serving_token("0.0.0.0", "") for _ in range(3)}
    assert len(made) == 3 and all(len(t) >= 32 for t in made)


def test_task_text_is_escaped(store):
    tasks = review_tasks()
    tasks[0] = tasks[0].model_copy(update={"forms": tasks[0].forms.model_copy(
        update={"nl": "<script>alert(1)</script> ReLU"})})
    client = TestClient(create_app(build_board(tasks, ReviewLog(store)), ServeConfig()),
                        base_url="http://127.0.0.1:8765")
    html = client.get("/tasks/t1_relu").text
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; ReLU" in html


def test_non_loopback_binding_needs_a_token(store):
    with pytest.raises(ValueError, match="needs a token"):
        _client(store, ServeConfig(host="0.0.0.0"))
    client = _client(store, ServeConfig(host="0.0.0.0", token="s3cret"))
    assert client.get("/").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    link = client.get("/?token=s3cret", follow_redirects=False)
    assert link.status_code == 303 and "token" not in link.headers["location"]
    assert client.get("/").status_code == 200  # the cookie the link set


def test_loopback_server_refuses_foreign_hosts_and_origins(store):
    client = _client(store)
    assert client.get("/", headers={"host": "evil.example:8765"}).status_code == 403
    cross = client.post("/tasks/t1_relu/decision", data={"decision": "accept", "reviewer": "mallory"},
                        headers={"origin": "http://evil.example"})
    assert cross.status_code == 403 and ReviewLog(store).events() == []


def test_real_server_bound_elsewhere_refuses_requests_without_the_token(store):
    board = build_board(review_tasks(), ReviewLog(store))
    with pytest.raises(ValueError, match="needs a token"):
        create_app(board, ServeConfig(host="127.0.0.2"))
    token = serving_token("127.0.0.2", "")  # what `review serve --host 127.0.0.2` does
    app = create_app(board, ServeConfig(host="127.0.0.2", token=token))
    with running_server(app, "127.0.0.2") as url:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "/", timeout=10)
        assert refused.value.code == 401
        request = urllib.request.Request(url + "/log.jsonl", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200


def test_export_writes_accepted_tasks_with_edits_and_decisions(tmp_path):
    source = tmp_path / "tasks"
    for t in review_tasks():
        save_task_folder(t, source)
    db = f"sqlite:///{tmp_path / 'review.db'}"
    runner = CliRunner()
    nothing = runner.invoke(cli, ["review", "export", "--tasks", str(source), "--db", db, "--out", str(tmp_path / "x")])
    assert nothing.exit_code == 1 and "no task" in nothing.output
    with open_store(db) as store:
        log = ReviewLog(store)
        log.record_edit("t1_relu", {"tags": FieldChange(old=[], new=["relu"])}, "bob")
        log.record_decision("t1_relu", "accept", "alice")
        log.record_decision("t2_sigmoid", "reject", "alice", "too easy")
    out = tmp_path / "export"
    result = runner.invoke(cli, ["review", "export", "--tasks", str(source), "--db", db, "--out", str(out)])
    assert result.exit_code == 0, result.output
    exported = load_tasks(str(out))
    assert [t.id for t in exported] == ["t1_relu"]
    assert exported[0].tags == ["relu"] and exported[0].review.state == "approved"
    decisions = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    assert [d["task_id"] for d in decisions] == ["t1_relu", "t1_relu", "t2_sigmoid"]
    log_out = runner.invoke(cli, ["review", "log", "--db", db, "--json"])
    assert log_out.exit_code == 0 and len(log_out.output.splitlines()) == 3
