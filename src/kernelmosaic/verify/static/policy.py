"""What the static analysis tolerates: one typed policy, every field documented, defaults strict."""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernelmosaic import pysource
from kernelmosaic.verify.static.rules import RULES

__all__ = ["StaticPolicy", "Action", "LIBRARY_COMPUTE"]

Action = Literal["reject", "flag", "allow"]
LIBRARY_COMPUTE = ("torch-compute", "aten-compute-in-extension", "cupy-compute", "vendor-library")
"""Rules about library compute (PyTorch's, CuPy's, or a vendor library's such as cuBLAS called from the extension),
governed together by `torch_compute`: at::matmul in an extension and cublasSgemm there run the same kernels."""

DEFAULT_IMPORTS = [
    "torch", "triton", "math", "numpy", "typing", "functools", "dataclasses", "itertools", "collections",
    "operator", "os", "sys", "time", "datetime", "textwrap", "__future__", "enum", "warnings", "logging", "abc",
    "string", "contextlib", "hashlib", "copy", "re", "numbers", "cupy", "types",
]


class StaticPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    torch_compute: Action = "reject"
    """What to do with library compute: PyTorch reached from forward (`torch-compute`), ATen called from an
    extension's host code (`aten-compute-in-extension`), CuPy's array library (`cupy-compute`) and vendor libraries
    the extension calls or links (`vendor-library`: cuBLAS, cuDNN, ...)."""
    allowed_torch_ops: list[str] = Field(default_factory=list)
    """Extra names not counted as compute: dotted (`torch.cumsum`, `torch.nn.functional.pad`) or bare method
    names (`sort`). Adds to the built-in allocation/layout allow-list."""
    allow_triton: bool = True
    """Triton kernels count as custom kernels; when false they are rejected (`triton-not-allowed`)."""
    allow_streams: bool = False
    """Accept new CUDA streams and events (Python and C++); for tasks that are about multi-stream overlap."""
    allowed_imports: list[str] = Field(default_factory=lambda: list(DEFAULT_IMPORTS))
    """Top-level modules a candidate may import; anything else is `import-not-allowed`."""
    allowed_env_writes: list[str] = Field(default_factory=lambda: ["TORCH_CUDA_ARCH_LIST", "MAX_JOBS"])
    """Environment variables a candidate may set (build knobs that do not change how it is judged)."""
    severity: dict[str, Action] = Field(default_factory=dict)
    """Per-rule overrides, rule id -> reject/flag/allow; applied after `torch_compute`."""

    @field_validator("severity")
    @classmethod
    def _known_rules(cls, value: dict[str, Action]) -> dict[str, Action]:
        unknown = sorted(set(value) - set(RULES))
        if unknown:
            raise ValueError(f"unknown static rule id(s) {unknown}; known: {sorted(RULES)}")
        return value

    def with_problem_imports(self, problem_src: str) -> StaticPolicy:
        """This policy with the top-level modules the problem's own source imports added to `allowed_imports`: a
        candidate may import what its reference does (KernelBench's Mamba problems use `einops`; an answer that
        keeps the reference's code keeps the import). Modules some rule owns (ctypes, subprocess, ...) stay that
        rule's; what the imported code computes is judged where it runs (PyTorch compute, under `strict`)."""
        try:
            tree = pysource.parse(problem_src)
        except (SyntaxError, ValueError):
            return self
        mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        mods |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        extra = sorted(mods - set(self.allowed_imports))
        return self.model_copy(update={"allowed_imports": [*self.allowed_imports, *extra]}) if extra else self

    def action(self, rule: str) -> Action:
        """The effective action for a rule id under this policy."""
        if rule in self.severity:
            return self.severity[rule]
        if rule in LIBRARY_COMPUTE:
            return self.torch_compute
        return RULES[rule].severity
