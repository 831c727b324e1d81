"""The Task: one kernel-writing problem in up to three forms (natural language, PyTorch reference, math spec).

Versioned as `kernelmosaic.task/1`; every other stage reads tasks through this type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from kernelmosaic.contracts.verdict import Finding
from kernelmosaic.tasks.hashing import source_hash, text_hash
from kernelmosaic.tasks.shapes import Size, apply_shape_overrides

__all__ = [
    "TASK_SCHEMA",
    "AUDIT_SCHEMA",
    "CATEGORIES",
    "Category",
    "Precision",
    "Forms",
    "Shapes",
    "Provenance",
    "Review",
    "Hashes",
    "AuditReport",
    "Task",
    "Finding",
]

TASK_SCHEMA = "kernelmosaic.task/1"
AUDIT_SCHEMA = "kernelmosaic.audit/1"

CATEGORIES = (
    "elementwise", "activation", "reduction", "scan", "normalization", "softmax", "attention",
    "gemm", "convolution", "pooling", "loss", "indexing", "fused", "network",
)
Category = Literal[
    "elementwise", "activation", "reduction", "scan", "normalization", "softmax", "attention",
    "gemm", "convolution", "pooling", "loss", "indexing", "fused", "network",
]
Precision = Literal["fp32", "fp16", "bf16"]
ShapeValue = int | float | bool


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Forms(_Model):
    nl: str
    """Natural-language statement: what to compute, the shapes and dtypes."""
    reference: str
    """KernelBench-format Python source: `Model(nn.Module)`, `get_inputs()`, `get_init_inputs()`."""
    spec: str = ""
    """Math spec in the tensor-index language (`spec.km`); empty when the task has none."""


class Shapes(_Model):
    small: dict[str, ShapeValue] = Field(default_factory=dict)
    """Overrides of the reference's module-level constants used for CPU audits and tests (required for builtin)."""
    alternatives: list[dict[str, ShapeValue]] = Field(default_factory=list)
    """Further override sets, only where the semantics are shape-generic."""


class Provenance(_Model):
    source: str = "unknown"
    """Where the task comes from, e.g. `kernelmosaic-seed`, `kernelmosaic-synth`, `kernelbench`."""
    author: str = ""
    license: str = ""
    url: str = ""
    """Link to the origin, when there is one."""
    original_name: str = ""
    """Name in the origin, e.g. KernelBench's `19_ReLU`."""
    problem_id: int | None = None
    """Numeric id in the origin (KernelBench `problem_id`); absent for own tasks."""
    synth_seed: int | None = None
    """Seed the synthesizer used; absent for tasks not synthesized."""


class Review(_Model):
    state: Literal["draft", "approved", "rejected"] = "draft"
    reviewer: str = ""
    notes: str = ""


class Hashes(_Model):
    reference: str
    """sha256 of the reference with comments and all whitespace removed (KernelBench's problem-hash idea)."""
    spec: str = ""
    """sha256 of the spec with comments and whitespace removed; empty without a spec."""
    nl: str
    """sha256 of the natural-language text with whitespace collapsed."""


class AuditReport(_Model):
    schema_: str = Field(default=AUDIT_SCHEMA, alias="schema")
    task_id: str
    passed: bool
    """True when no finding has severity `reject`."""
    findings: list[Finding] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)
    """Rule ids that were evaluated (a rule missing here was not run)."""
    devices: list[str] = Field(default_factory=list)
    """Devices the reference ran on."""
    shapes: dict[str, Size] = Field(default_factory=dict)
    """Size constants the audit derived and ran at, for a task without small shapes whose stated ones exceed the
    element budget (`AuditConfig.shapes`); empty: the reference as stated, or the task's declared small shapes."""
    reference_hash: str = ""
    """`Hashes.reference` of the audited reference, so a stale report can be recognized."""
    seconds: float = 0.0
    torch_version: str = ""

    @property
    def rejects(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "reject"]

    @property
    def flags(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "flag"]


class Task(_Model):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)

    schema_: str = Field(default=TASK_SCHEMA, alias="schema")
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    """Unique id, `[a-z0-9_]+`."""
    title: str
    level: int = Field(ge=1, le=4)
    """1 single op, 2 fused ops, 3 whole network (4: KernelBench's model-level problems, imported only)."""
    category: Category
    tags: list[str] = Field(default_factory=list)
    """Operator and topic tags, e.g. `relu`, `matmul`."""
    dtype: Precision = "fp32"
    """Precision the task asks for; sets tolerances."""
    forms: Forms
    shapes: Shapes = Field(default_factory=Shapes)
    provenance: Provenance = Field(default_factory=Provenance)
    review: Review = Field(default_factory=Review)
    audit: AuditReport | None = None
    """Latest audit report; absent until the task was audited."""
    origin: str = Field(default="", exclude=True)
    """Where this task was loaded from (a folder, `file.parquet#row`); for messages only, not serialized."""

    @model_validator(mode="before")
    @classmethod
    def _derived_hashes(cls, data: object) -> object:
        # `hashes` is derived, so a dumped task (which includes it) must validate again; a stale hash means the
        # reference was edited after the dump, which is refused rather than silently re-hashed.
        if isinstance(data, dict) and "hashes" in data:
            data = dict(data)
            stored = data.pop("hashes") or {}
            forms = data.get("forms")
            reference = forms.get("reference", "") if isinstance(forms, dict) else getattr(forms, "reference", "")
            if stored.get("reference") and stored["reference"] != source_hash(reference):
                raise ValueError("hashes.reference does not match the reference text")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hashes(self) -> Hashes:
        return Hashes(
            reference=source_hash(self.forms.reference),
            spec=source_hash(self.forms.spec, comment="#") if self.forms.spec.strip() else "",
            nl=text_hash(self.forms.nl),
        )

    @property
    def reference_source(self) -> str:
        return self.forms.reference

    @property
    def has_spec(self) -> bool:
        return bool(self.forms.spec.strip())

    def problem_source(self, shapes: Literal["default", "small"] | int = "default") -> str:
        """The reference with module constants set for `shapes`: `default`, `small`, or an alternative's index."""
        if shapes == "default":
            return self.forms.reference
        overrides = self.shapes.small if shapes == "small" else self.shapes.alternatives[shapes]
        return apply_shape_overrides(self.forms.reference, overrides)

    def write_problem(self, path: Path, shapes: Literal["default", "small"] | int = "default") -> Path:
        """Write the KernelBench-format problem file (for the `verify` command: `verify PROBLEM ...`) and return its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.problem_source(shapes), encoding="utf-8")
        return path

    def to_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
