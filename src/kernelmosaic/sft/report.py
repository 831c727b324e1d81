"""What an export did, as one typed object: saved beside the data (export.json) and rendered into the card."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.review.gate import ReviewExclusion
from kernelmosaic.sft.buckets import CountsTable
from kernelmosaic.sft.config import ExportConfig
from kernelmosaic.sft.filters import FilterResult
from kernelmosaic.tasks.decontam import DecontamReport

__all__ = ["RunSource", "ExportReport"]


class RunSource(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    run_id: int
    model: str
    task_source: str
    episodes: int
    """Episodes of this run in the exported dataset."""


class ExportReport(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    config: ExportConfig
    rows: dict[str, int] = Field(default_factory=dict)
    """Variant -> rows written."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Episodes never eligible, by reason: `not_finished`, `flagged_task`, `not_verified`, `no_tool_schemas`,
    `review_reject`, `review_needs-edit` (verified, but the review's latest decision turned the task away)."""
    review_excluded: list[ReviewExclusion] = Field(default_factory=list)
    """The review decisions that removed verified episodes, one per task."""
    left_out: dict[str, list[int]] = Field(default_factory=dict)
    """Variant -> episode ids it could not hold: `first_timed_pass` needs a tool result whose kernel is verified."""
    filters: FilterResult = Field(default_factory=FilterResult)
    decontamination: list[DecontamReport] = Field(default_factory=list)
    """One report per evaluation set checked."""
    overlapping_tasks: list[str] = Field(default_factory=list)
    """Task ids that overlap an evaluation set."""
    overlap_episodes: list[int] = Field(default_factory=list)
    """Episode ids whose task overlaps; dropped unless `keep_overlaps`."""
    counts: CountsTable = Field(default_factory=CountsTable)
    sources: list[RunSource] = Field(default_factory=list)
    task_licenses: dict[str, str] = Field(default_factory=dict)
    """Task provenance source -> its license(s), for the exported episodes' tasks."""
    tokens_exact: bool = False
    """Token counts came from the training tokenizer (else estimated)."""
