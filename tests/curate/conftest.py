"""Fixtures for curation tests: tasks written here, one embedding model per session, an in-memory store."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kernelmosaic.store import Store, open_store
from kernelmosaic.tasks.schema import Forms, Shapes, Task

REFERENCE = '''"""{doc}"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = {batch}
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {arg}):
        return {body}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def reference(body: str, arg: str = "x", batch: int = 64, doc: str = "A task.") -> str:
    return REFERENCE.format(body=body.replace("{x}", arg), arg=arg, batch=batch, doc=doc)


def task(task_id: str, body: str, category: str = "activation", level: int = 1, spec: str = "", nl: str = "",
         dtype: str = "fp32", **kw: object) -> Task:
    return Task(id=task_id, title=task_id.replace("_", " "), level=level, category=category, dtype=dtype,
                forms=Forms(nl=nl or f"Compute {body.replace('{x}', 'x')} for a float32 (64, 1024) input.",
                            reference=reference(body, **kw), spec=spec),
                shapes=Shapes(small={"batch_size": 4, "dim": 64}))


@pytest.fixture(scope="session")
def embedder():
    from kernelmosaic.curate.embed import Embedder

    return Embedder()


@pytest.fixture
def store() -> Iterator[Store]:
    with open_store("sqlite://") as s:
        yield s


def review_tasks() -> list[Task]:
    spec = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0)\n"
    return [task("t1_relu", "torch.relu({x})", spec=spec), task("t2_sigmoid", "torch.sigmoid({x})"),
            task("t3_tanh", "torch.tanh({x})"), task("t4_row_sum", "{x}.sum(dim=1)", category="reduction")]


@contextlib.contextmanager
def running_server(app: object, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve `app` with uvicorn in a thread on a free port of `host`; yields the base URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the review server did not start on {host}:{port}")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
