"""The export's typed configuration: which runs, filters, buckets and target ratios, decontamination, variants.

One TOML file (`[export]` table) feeds it; command-line options override single fields.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kernelmosaic.sft.variants import VARIANTS, Variant

__all__ = ["Dimension", "DIMENSIONS", "FilterConfig", "BalanceConfig", "ExportConfig", "ConfigError", "load_config"]

Dimension = Literal["category", "spec_source", "failure_type", "gain", "difficulty"]
DIMENSIONS: tuple[Dimension, ...] = ("category", "spec_source", "failure_type", "gain", "difficulty")


class ConfigError(ValueError):
    """A configuration file or override is unusable; the message names the file and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class FilterConfig(_Model):
    min_speedup: float = Field(0.0, ge=0)
    """Drop episodes whose final solution is slower than this, vs eager PyTorch (0: keep all, untimed included)."""
    max_tokens: int = Field(0, ge=0)
    """Drop episodes whose full trajectory is longer than this many tokens (0: no limit)."""
    tokenizer: str = ""
    """Folder of the tokenizer whose chat template counts tokens; empty: estimate at 4 characters a token."""
    near_duplicate_threshold: float = Field(0.9, gt=0, le=1)
    """Assistant-side word 5-gram Jaccard at or above which two trajectories count as near-duplicates (the faster
    one is kept)."""
    drop_near_duplicates: bool = True
    """Drop near-duplicate trajectories."""


class BalanceConfig(_Model):
    by: Dimension | None = None
    """The bucket dimension to sample to target ratios; none: keep every episode that passed the filters."""
    ratios: dict[str, float] = Field(default_factory=dict)
    """Target share per bucket of `by` (normalized to sum 1); buckets not named are left out."""
    max_rows: int = Field(0, ge=0)
    """At most this many episodes after sampling (0: as many as the ratios allow)."""
    seed: int = 0
    """Seed of the sample drawn within each bucket."""
    gain_edges: list[float] = Field(default_factory=lambda: [1.0, 1.5, 3.0])
    """Speedup-vs-eager edges of the `gain` buckets, ascending (e.g. `<1x`, `1-1.5x`, `1.5-3x`, `>=3x`)."""

    @model_validator(mode="after")
    def _check(self) -> BalanceConfig:
        if self.by is not None and (not self.ratios or any(r < 0 for r in self.ratios.values())
                                    or sum(self.ratios.values()) <= 0):
            raise ValueError("balance.by needs balance.ratios: non-negative shares with a positive sum")
        if self.gain_edges != sorted(self.gain_edges):
            raise ValueError("balance.gain_edges must be ascending")
        return self


class ExportConfig(_Model):
    runs: list[int] = Field(default_factory=list)
    """Store run ids to export (empty: every run in the store)."""
    tasks: str = ""
    """Task source holding the runs' tasks (level, category, forms); empty: each run's own task source."""
    variants: list[Variant] = Field(default_factory=lambda: list(VARIANTS))
    """Views written, each in its own folder: `full`, `final_answer`, `first_verified`."""
    against: list[str] = Field(default_factory=list)
    """Evaluation task sources to decontaminate against, e.g. `kernelbench:PATH`."""
    keep_overlaps: bool = False
    """Keep episodes whose task overlaps an evaluation set (still listed in the card); default: drop them."""
    filters: FilterConfig = Field(default_factory=FilterConfig)
    balance: BalanceConfig = Field(default_factory=BalanceConfig)
    name: str = "KernelMosaic SFT trajectories"
    """Dataset name, for the card."""
    license: str = "Apache-2.0"
    """License of the dataset as a whole; task licenses are listed per source in the card."""


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        data = data.setdefault(p, {})
    data[leaf] = value


def load_config(path: Path | None, overrides: dict[str, Any] | None = None, table: str = "export",
                model: type[BaseModel] = ExportConfig) -> Any:
    """`model` from the `[table]` of a TOML file (when given), with dotted-key overrides on top (None: not given)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8")).get(table, {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    for key, value in (overrides or {}).items():
        if value is not None:
            _set(data, key, value)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = f"{path} [{table}]" if path else "options"
        field = ".".join(str(p) for p in first["loc"]) or "(table)"
        raise ConfigError(f"{where}: {field}: {first['msg']}") from None
