"""docs/configuration.md documents every field of every config section and every environment variable the code
reads; `scripts/config-tables --write` regenerates its tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelmosaic.agent.config import AgentConfig, Budgets
from kernelmosaic.agent.runner import GenerateConfig
from kernelmosaic.curate.review.app import ServeConfig
from kernelmosaic.curate.select import Quotas, SelectConfig
from kernelmosaic.models.hf_backend import HFConfig
from kernelmosaic.models.openai_config import OpenAIConfig
from kernelmosaic.sft.config import BalanceConfig, ExportConfig, FilterConfig
from kernelmosaic.sft.train_config import LoraSettings, TrainConfig
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.ray.config import ScaleConfig
from kernelmosaic.verify.static.policy import StaticPolicy

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def _section(heading: str) -> str:
    start = DOC.index(f"### {heading}:")
    end = DOC.find("\n### ", start + 1)
    return DOC[start:end if end > 0 else len(DOC)]


@pytest.mark.parametrize(("heading", "model"), [
    ("[verify]", VerifyConfig), ("[verify.static]", StaticPolicy), ("[generate]", GenerateConfig),
    ("[generate.agent]", AgentConfig), ("[generate.agent.budgets]", Budgets),
    ("[model] for `openai:NAME`", OpenAIConfig), ("[model] for `hf:PATH`", HFConfig),
    ("[scale]", ScaleConfig), ("[select]", SelectConfig), ("[select.quotas]", Quotas), ("[sft.export]", ExportConfig),
    ("[sft.export.filters]", FilterConfig), ("[sft.export.balance]", BalanceConfig), ("[sft.train]", TrainConfig),
    ("[sft.train.lora]", LoraSettings), ("[review]", ServeConfig),
])
def test_every_field_has_a_row(heading, model):
    rows = set(re.findall(r"^\| `([a-z_0-9]+)` \|", _section(heading), flags=re.M))
    missing = sorted(set(model.model_fields) - rows)
    assert not missing, f"docs/configuration.md {heading} lacks {missing}: run scripts/config-tables --write"


def test_every_environment_variable_the_code_reads_is_documented():
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "kernelmosaic").rglob("*.py"))
    named = set(re.findall(r"\b(KERNELMOSAIC_[A-Z_]+|OPENAI_[A-Z_]+)\b", source))
    assert named >= {"KERNELMOSAIC_DB", "KERNELMOSAIC_CACHE", "KERNELMOSAIC_OPENAI_BASE_URL", "OPENAI_API_KEY"}
    table = DOC[DOC.index("## Environment variables"):DOC.index("## The `verify-batch` manifest")]
    assert not sorted(v for v in named if f"`{v}`" not in table)
