"""The export's typed configuration: which runs, filters, buckets and target ratios, decontamination, variants.

It is the `[sft.export]` section of the project's configuration file (`kernelmosaic.config`): `--set
sft.export.KEY=VALUE` and the command's own options override single fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kernelmosaic.sft.variants import VARIANTS, Variant

__all__ = ["Dimension", "DIMENSIONS", "FilterConfig", "BalanceConfig", "ExportConfig"]

Dimension = Literal["category", "spec_source", "failure_type", "gain", "difficulty"]
DIMENSIONS: tuple[Dimension, ...] = ("category", "spec_source", "failure_type", "gain", "difficulty")


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
    """Views written, each in its own folder: `full`, `final_answer`, `first_timed_pass`."""
    against: list[str] = Field(default_factory=list)
    """Evaluation task sources to decontaminate against, e.g. `kernelbench:PATH`."""
    keep_overlaps: bool = False
    """Keep episodes whose task overlaps an evaluation set (still listed in the card); default: drop them."""
    filters: FilterConfig = Field(default_factory=FilterConfig)
    """Which verified episodes are kept (`[sft.export.filters]`)."""
    balance: BalanceConfig = Field(default_factory=BalanceConfig)
    """Sampling to target ratios per bucket (`[sft.export.balance]`)."""
    name: str = "KernelMosaic SFT trajectories"
    """Dataset name, for the card."""
    license: str = "Apache-2.0"
    """License of the dataset as a whole; task licenses are listed per source in the card."""

    @field_validator("variants", mode="before")
    @classmethod
    def _renamed(cls, variants: Any) -> Any:
        if isinstance(variants, list) and "first_verified" in variants:
            raise ValueError("`first_verified` is now `first_timed_pass` (verified means final-checked at submit(), so "
                             "a cut there was the whole episode; the cut is now the first verdict that passed with timing)")
        return variants
