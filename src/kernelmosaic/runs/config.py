"""What every run of episodes is configured with, whichever solver runs them (`generate`'s agent, `evaluate`'s
one-shot, agent or given generations): the task source and selection, the model and its options, how many at once,
where files go, and the verifier's settings, with one precedence rule for the last.

`GenerateConfig` (agent/runner.py) and `EvalConfig` (evaluate/config.py) extend `RunConfig`; each is stored with its
run, so `--resume` continues with the same settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernelmosaic.runs.task_meta import TaskMeta
from kernelmosaic.verify.config import VerifyConfig

__all__ = ["RunConfig", "owned_setting", "without_secrets"]


def without_secrets(options: dict[str, Any]) -> dict[str, Any]:
    """Model options as stored with a run: an API key among them is refused, as it would be stored too."""
    if "api_key" in options:
        raise ValueError("the API key is not a setting (it would be stored with the run): set OPENAI_API_KEY")
    return options


class RunConfig(BaseModel):
    """The settings every run shares. A subclass says which device the run is on (`judged_on`) and which other
    verifier settings the run owns (`owned_verify_settings`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    tasks: str = "builtin"
    """Task source: `builtin`, a folder, a Parquet file, `kernelbench:PATH` (read in place)."""
    model: str = ""
    """Model spec: `openai:NAME`, `hf:PATH`, `replay:FILE`, `scripted:NAME`."""
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Options of the model backend (the config file's `[model]` section): `temperature`, `max_tokens`,
    `max_new_tokens` for `hf:`, prices, `base_url`, ... Stored with the run, so `--resume` samples the same way. The
    API key never goes here (it would be stored): it comes from `OPENAI_API_KEY`."""
    task_ids: list[str] = Field(default_factory=list)
    """Only these tasks (empty: all)."""
    limit: int = Field(0, ge=0)
    """At most this many tasks, after filtering (0: no limit)."""
    concurrency: int = Field(4, ge=1)
    """Episodes (or candidates) running at once."""
    out_dir: Path = Path("runs")
    """Run folders (problem and candidate files, trajectory JSON) go under it."""
    compile_baseline: bool = True
    """Time a torch.compile build of each reference beside eager."""
    task_meta: dict[str, TaskMeta] = Field(default_factory=dict)
    """Level, category and title of every task of the run, set when the run is created, so its report and metrics
    group without reading the task source again."""
    verify: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the verifier's settings (the config file's `[verify]` section and `--set verify.KEY=VALUE`, any
    `VerifyConfig` field, e.g. `trials` or `timing_profile`); stored with the run. The run's own settings (its
    device, `compile_baseline`, and what the command owns, e.g. evaluate's `policy`) win over the same keys here."""

    @field_validator("model_options")
    @classmethod
    def _no_secrets(cls, options: dict[str, Any]) -> dict[str, Any]:
        return without_secrets(options)

    def judged_on(self) -> str:
        """The device the run's candidates are written for and judged on."""
        raise NotImplementedError

    def owned_verify_settings(self) -> dict[str, Any]:
        """Verifier settings the command sets itself, beyond device and `compile_baseline` (none by default)."""
        return {}

    def verify_config(self) -> VerifyConfig:
        """The verifier's settings, one rule for every run: the defaults (the device's timing plan among them,
        `verify.config.CPU_TIMING`), then `verify`'s overrides, then what the run itself owns (its device,
        `compile_baseline`, `owned_verify_settings`)."""
        device = self.judged_on()
        return VerifyConfig.model_validate({**self.verify, "device": device,
                                            "compile_baseline": self.compile_baseline, **self.owned_verify_settings()})


def owned_setting(flag: Any, verify: dict[str, Any], key: str, default: Any) -> Any:
    """A verifier setting a run owns (its `compile_baseline`, evaluate's `policy`): the command-line flag when given,
    else the settings' `[verify]` value (file or `--set`), else the command's default. The one precedence (flag >
    settings > default) for every such setting of every run; the run then records the value and `verify_config`
    applies it over `[verify]`."""
    if flag is not None:
        return flag
    return verify.get(key, default)
