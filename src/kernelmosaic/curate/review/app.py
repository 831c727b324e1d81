"""The review web page (FastAPI + Jinja2 + htmx): a queue, one task at a time with its forms side by side,
its checks, and decisions by button or key. Every decision and edit goes to the store's append-only log.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict

from kernelmosaic.curate.review.auth import AccessMiddleware, cookie_name, is_loopback
from kernelmosaic.curate.review.board import FILTERS, ReviewBoard
from kernelmosaic.store.errors import StoreError

__all__ = ["ServeConfig", "create_app"]

_HERE = Path(__file__).resolve().parent


class ServeConfig(BaseModel):
    """`[review]` of the settings file: how `kernelmosaic review serve` serves the page."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Address to bind. Beyond loopback, put a TLS proxy in front: the token travels in every request."""
    port: int = 8765
    """Port to listen on; the token's cookie is kept per port."""
    token: str = ""
    """Shared secret every request must carry (16+ characters); empty: `review serve` generates one and prints
    the link. A token kept here makes the settings file a secret: keep it readable by its owner only."""
    title: str = "KernelMosaic review"
    """Shown in the page header; `review serve` puts the task source there unless this is set."""


def _split_tags(text: str) -> list[str]:
    return [t for t in (s.strip() for s in re.split(r"[,\s]+", text)) if t]


def create_app(board: ReviewBoard, config: ServeConfig) -> FastAPI:
    """The ASGI app; refuses to build without a token (`auth.serving_token` gives one)."""
    if not config.token:
        raise ValueError("the review server needs a token on every address (auth.serving_token makes one)")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    templates = Jinja2Templates(env=env)
    app = FastAPI(title=config.title, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(AccessMiddleware, token=config.token, loopback_only=is_loopback(config.host),
                       cookie=cookie_name(config.port))
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")

    def check_filter(which: str) -> str:
        if which not in FILTERS:
            raise HTTPException(400, f"unknown filter {which!r} (one of {', '.join(FILTERS)})")
        return which

    def render(request: Request, name: str, task_id: str | None, which: str, status: int = 200,
               **extra: object) -> HTMLResponse:
        states = board.states()
        queue = board.queue(states, which)
        if task_id is None:
            task_id = queue[0] if queue else None
        context = {"config": config, "filter": which, "filters": FILTERS, "counts": board.counts(states),
                   "queue": queue, "states": states, "tasks": board.tasks, "current": task_id,
                   "task": board.task(task_id, states) if task_id else None,
                   "state": states[task_id] if task_id else None,
                   "checks": board.checks.get(task_id) if task_id else None,
                   "nav": board.neighbours(states, which, task_id) if task_id else (None, None),
                   "oob": name == "panel.html", "error": "", "decided": "", "reason_draft": "", **extra}
        return templates.TemplateResponse(request, name, context, status_code=status)

    def known(task_id: str) -> str:
        if task_id not in board.tasks:
            raise HTTPException(404, f"no task {task_id!r} in this review")
        return task_id

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request, filter: str = "pending") -> HTMLResponse:
        return render(request, "index.html", None, check_filter(filter))

    @app.get("/tasks/{task_id}", response_class=HTMLResponse)
    def show(request: Request, task_id: str, filter: str = "pending") -> HTMLResponse:
        page = "panel.html" if request.headers.get("hx-request") else "index.html"
        return render(request, page, known(task_id), check_filter(filter))

    @app.post("/tasks/{task_id}/decision", response_class=HTMLResponse)
    def decide(request: Request, task_id: str, decision: str = Form(...), reviewer: str = Form(""),
               reason: str = Form(""), filter: str = Form("pending")) -> Response:
        which = check_filter(filter)
        known(task_id)
        try:
            board.decide(task_id, decision, reviewer, reason)
        except StoreError as exc:
            return render(request, "panel.html", task_id, which, status=422, error=str(exc), reason_draft=reason)
        after = board.neighbours(board.states(), which, task_id)[1]
        return render(request, "panel.html", after, which, decided=f"{decision} recorded for {task_id}")

    @app.post("/tasks/{task_id}/edit", response_class=HTMLResponse)
    def edit(request: Request, task_id: str, nl: str = Form(""), tags: str = Form(""), reviewer: str = Form(""),
             filter: str = Form("pending")) -> Response:
        which = check_filter(filter)
        known(task_id)
        try:
            board.edit(task_id, nl, _split_tags(tags), reviewer)
        except StoreError as exc:
            return render(request, "panel.html", task_id, which, status=422, error=str(exc))
        return render(request, "panel.html", task_id, which)

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/log", response_class=HTMLResponse)
    def log_page(request: Request, task: str = "") -> HTMLResponse:
        events = [e for e in board.log.events() if not task or e.task_id == task]
        return templates.TemplateResponse(request, "log.html", {"config": config, "events": events[::-1],
                                                                "task_filter": task})

    @app.get("/log.jsonl", response_class=PlainTextResponse)
    def log_jsonl() -> str:
        return "".join(e.model_dump_json() + "\n" for e in board.log.events())

    return app
