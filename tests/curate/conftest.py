"""Fixtures for curation tests: tasks written here, one embedding model per session, an in-memory store."""

from __future__ import annotations

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
