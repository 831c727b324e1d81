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
from kernelmosaic.curate.review.auth import cookie_name, is_loopback, serving_token
from kernelmosaic.curate.review.build import build_board
from kernelmosaic.store import open_store
from kernelmosaic.store.reviews import FieldChange, ReviewLog
from kernelmosaic.tasks.folder import save_task_folder
from kernelmosaic.tasks.sources import load_tasks

from .conftest import review_tasks, running_server

HX = {"hx-request": "true"}
TOKEN = "review-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _client(store, config=None, headers=AUTH):
    board = build_board(review_tasks(), ReviewLog(store))
    return TestClient(create_app(board, config or ServeConfig(token=TOKEN)), base_url="http://127.0.0.1:8765",
                      headers=headers)


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


def test_serve_makes_a_token_unless_given_one():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7") and not is_loopback("example.org")
    made = {serving_token() for _ in range(3)}  # loopback or not: every server has one
    assert len(made) == 3 and all(len(t) >= 32 for t in made)
    assert serving_token(TOKEN) == TOKEN
    with pytest.raises(ValueError, match="at least 16 characters"):
        serving_token("abc")


def test_task_text_is_escaped(store):
    tasks = review_tasks()
    tasks[0] = tasks[0].model_copy(update={"forms": tasks[0].forms.model_copy(
        update={"nl": "<script>alert(1)</script> ReLU"})})
    client = TestClient(create_app(build_board(tasks, ReviewLog(store)), ServeConfig(token=TOKEN)),
                        base_url="http://127.0.0.1:8765", headers=AUTH)
    html = client.get("/tasks/t1_relu").text
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; ReLU" in html


def test_every_read_and_write_needs_the_token_on_loopback(store):
    with pytest.raises(ValueError, match="needs a token"):
        _client(store, ServeConfig())
    client = _client(store, headers={})
    for path in ("/", "/tasks/t1_relu", "/log", "/log.jsonl", "/static/review.js"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
    forged = {"decision": "reject", "reviewer": "alice", "reason": "posted by someone else"}
    assert client.post("/tasks/t1_relu/decision", data=forged).status_code == 401
    assert client.post(f"/tasks/t1_relu/decision?token={TOKEN}", data=forged).status_code == 401  # links are GETs
    assert client.post("/tasks/t1_relu/edit", data={"nl": "x", "reviewer": "alice"}).status_code == 401
    client.cookies.set(cookie_name(9999), TOKEN)  # another server's cookie on this host
    assert client.get("/").status_code == 401
    assert ReviewLog(store).events() == []
    link = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert link.status_code == 303 and "token" not in link.headers["location"]
    assert cookie_name(8765) in link.headers["set-cookie"] and "httponly" in link.headers["set-cookie"].lower()
    assert client.get("/").status_code == 200  # the cookie the link set
    assert client.post("/tasks/t1_relu/decision", data={"decision": "accept", "reviewer": "alice"}).status_code == 200
    assert [(e.task_id, e.decision) for e in ReviewLog(store).events()] == [("t1_relu", "accept")]


def test_client_ids_and_times_are_ignored(store):
    client = _client(store)
    sent = {"decision": "accept", "reviewer": "alice", "id": "1000", "created": "2020-01-01T00:00:00"}
    assert client.post("/tasks/t2_sigmoid/decision", data=sent).status_code == 200
    client.post("/tasks/t1_relu/decision", data={**sent, "id": "1"})
    events = ReviewLog(store).events()
    assert [(e.id, e.task_id) for e in events] == [(1, "t2_sigmoid"), (2, "t1_relu")]
    assert all(e.created.year >= 2026 for e in events)


def test_loopback_server_refuses_foreign_hosts_and_origins(store):
    client = _client(store)
    assert client.get("/", headers={"host": "evil.example:8765"}).status_code == 403
    cross = client.post("/tasks/t1_relu/decision", data={"decision": "accept", "reviewer": "mallory"},
                        headers={"origin": "http://evil.example"})
    assert cross.status_code == 403 and ReviewLog(store).events() == []


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_real_server_refuses_requests_without_the_token(store, host):
    board = build_board(review_tasks(), ReviewLog(store))
    token = serving_token()  # what `review serve` does when given none
    app = create_app(board, ServeConfig(host=host, token=token))
    with running_server(app, host) as url:
        for request in (urllib.request.Request(url + "/log.jsonl"),
                        urllib.request.Request(url + "/tasks/t1_relu/decision", method="POST",
                                               data=b"decision=accept&reviewer=mallory")):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
        request = urllib.request.Request(url + "/log.jsonl", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200 and reply.read() == b""


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


def _serve(monkeypatch, tmp_path, *args: str) -> tuple[str, dict]:
    """Run `review serve` up to the point it would listen, then stop it as Ctrl-C would; returns what it printed and
    what it would have served."""
    served: dict = {}

    def listen_then_stop(server):
        served.update(app=server.config.app, port=server.config.port)
        server.started = True
        raise KeyboardInterrupt  # what uvicorn raises after its graceful shutdown on Ctrl-C

    monkeypatch.setattr("uvicorn.Server.run", listen_then_stop)
    source = tmp_path / "tasks"
    if not source.exists():
        for t in review_tasks():
            save_task_folder(t, source)
    result = CliRunner().invoke(cli, ["review", "serve", "--tasks", str(source), "--db",
                                      f"sqlite:///{tmp_path / 'review.db'}", *args])
    assert result.exit_code == 130, result.output
    return result.output, served


def test_serve_prints_a_fresh_token_or_uses_the_settings_one(monkeypatch, tmp_path):
    monkeypatch.delenv("KERNELMOSAIC_REVIEW_TOKEN", raising=False)
    printed, served = _serve(monkeypatch, tmp_path)
    token = printed.split("?token=")[1].split()[0]
    assert len(token) >= 32
    client = TestClient(served["app"], base_url="http://127.0.0.1:8765")
    assert client.get("/log.jsonl").status_code == 401
    assert client.get("/log.jsonl", headers={"Authorization": f"Bearer {token}"}).status_code == 200

    settings = tmp_path / "settings.toml"
    settings.write_text(f'[review]\nport = 9123\ntoken = "{TOKEN}"\n', encoding="utf-8")
    settings.chmod(0o644)
    printed, served = _serve(monkeypatch, tmp_path, "--config", str(settings))
    assert TOKEN not in printed and "[review] token of" in printed and "chmod 600" in printed
    assert served["port"] == 9123
    client = TestClient(served["app"], base_url="http://127.0.0.1:9123")
    assert client.get("/", headers=AUTH).status_code == 200 and client.get("/").status_code == 401


def test_review_serve_stopped_by_ctrl_c_exits_130(tmp_path):
    """docs/cli.md: an interrupted command exits 130 (uvicorn alone would shut down gracefully and exit 0)."""
    import signal
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kernelmosaic.cli", "review", "serve", "--db", str(tmp_path / "r.db"),
                             "--tasks", "builtin", "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    assert "interrupted" in err and "r.db" in err
