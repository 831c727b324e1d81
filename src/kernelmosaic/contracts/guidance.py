"""A guidance item: versioned CUDA advice the agent is shown (loaded by `agent.guidance.library`, recorded by id and
version in trajectories)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AppliesWhen", "GuidanceItem"]


class AppliesWhen(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    categories: list[str] = Field(default_factory=list)
    """Task categories the item helps with; `*` for every category."""
    statuses: list[str] = Field(default_factory=list)
    """Verdict statuses (failure types) the item helps repair."""
    devices: list[str] = Field(default_factory=lambda: ["cuda", "cpu"])
    """Devices the advice is about."""


class GuidanceItem(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    """Stable id, recorded in GuidanceEvents."""
    version: int = Field(ge=1)
    """Bumped whenever the text changes, so trajectories can name the exact advice they saw."""
    topic: str
    """Short title, shown in the topic list."""
    keywords: list[str] = Field(default_factory=list)
    """Words a free-text query may match."""
    rank: int = Field(50, ge=0)
    """Lower is shown first when several items apply to a task category (foundations before refinements)."""
    applies_when: AppliesWhen = Field(default_factory=AppliesWhen)
    text: str
    """The advice itself (Markdown body)."""

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def render(self) -> str:
        return f"[guidance {self.ref}: {self.topic}]\n{self.text.strip()}"
