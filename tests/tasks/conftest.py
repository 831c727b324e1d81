"""Small task fixtures written by the tests themselves (no builtin data needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmosaic.tasks.schema import Forms, Shapes, Task

REFERENCE = '''import torch
import torch.nn as nn

batch_size = {batch_size}
dim = 4096


class Model(nn.Module):
    def __init__(self{init_sig}):
        super().__init__()
{init_body}
    def forward(self, x):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return [{init_inputs}]
'''


def make_reference(body: str, inputs: str = "torch.randn(batch_size, dim)", init_sig: str = "",
                   init_body: str = "", init_inputs: str = "", batch_size: int = 64) -> str:
    return REFERENCE.format(body=body, inputs=inputs, init_sig=init_sig, init_body=init_body or "        pass\n",
                            init_inputs=init_inputs, batch_size=batch_size)


def make_task(task_id: str, body: str, spec: str = "", alternatives: list[dict] | None = None, **kw) -> Task:
    return Task(id=task_id, title=task_id.replace("_", " "), level=1, category="activation",
                forms=Forms(nl=f"Compute {body}.", reference=make_reference(body, **kw), spec=spec),
                shapes=Shapes(small={"batch_size": 4, "dim": 64}, alternatives=alternatives or []))


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every `tasks audit` writes the audit cache: tests keep theirs private. Returns the audit cache folder."""
    root = tmp_path_factory.mktemp("km-cache")
    monkeypatch.setenv("KERNELMOSAIC_CACHE", str(root / "build"))
    return root / "audits"


@pytest.fixture
def relu_task() -> Task:
    spec = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = max(x[b, d], 0.0)\n"
    return make_task("relu", "torch.relu(x)", spec)
