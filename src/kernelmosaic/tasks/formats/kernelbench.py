"""KernelBench as a task source: a checkout read in place (`PATH/KernelBench/level1..level4/*.py`) and its
HF schema (`code, level, name, problem_id`); also writes tasks back out in the checkout layout.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kernelmosaic import pysource
from kernelmosaic.tasks.errors import TaskFormatError
from kernelmosaic.tasks.schema import Forms, Provenance, Review, Task

__all__ = ["kernelbench_root", "read_kernelbench", "write_kernelbench", "task_from_kernelbench", "kernelbench_rows",
           "kernelbench_row", "categorize", "kernelbench_name"]

_FILE = re.compile(r"^(\d+)_(.+)\.py$")
# Checked in order: the first keyword found in the lower-cased problem name picks the category.
_CATEGORY_KEYWORDS = (
    ("attention", ("attention", "attn")), ("loss", ("loss",)), ("softmax", ("softmax",)),
    ("convolution", ("conv",)), ("pooling", ("pool",)), ("normalization", ("norm",)),
    ("scan", ("cumsum", "cumprod", "scan")), ("gemm", ("matmul", "gemm", "matrix", "bmm", "linear")),
    ("reduction", ("sum", "mean", "max", "min", "argmax", "argmin", "prod", "reduction")),
    ("activation", ("relu", "gelu", "sigmoid", "tanh", "swish", "silu", "elu", "softplus", "softsign",
                    "hardtanh", "mish", "hardsigmoid")),
)


def kernelbench_root(path: str | Path) -> Path:
    """The folder holding `level1`..`level4`: `PATH/KernelBench` in a checkout, or `PATH` itself."""
    path = Path(path)
    for candidate in (path / "KernelBench", path):
        if any((candidate / f"level{n}").is_dir() for n in range(1, 5)):
            return candidate
    raise TaskFormatError(path, "not a KernelBench checkout (no KernelBench/level1..level4 folders)")


def categorize(name: str, level: int) -> str:
    if level == 2:
        return "fused"
    if level >= 3:
        return "network"
    lowered = name.lower()
    for category, words in _CATEGORY_KEYWORDS:
        if any(w in lowered for w in words):
            return category
    return "elementwise"


def _slug(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", text.lower())).strip("_")


def _describe(code: str, name: str, level: int) -> str:
    """An nl form from the module's docstrings (KernelBench problems rarely carry more text than that)."""
    docs: list[str] = []
    try:
        tree = pysource.parse(code)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in ("Model", "forward"):
                doc = ast.get_docstring(node)
                if doc:
                    docs.append(doc.strip())
    except SyntaxError:
        pass
    head = f"KernelBench level {level} problem {name}: write a faster implementation of `Model.forward`."
    return "\n\n".join([head, *docs])


def task_from_kernelbench(code: str, level: int, name: str, problem_id: int, origin: str = "") -> Task:
    words = name.split("_", 1)[1] if "_" in name else name
    return Task(
        id=_slug(f"kb_l{level}_{name}"), title=words.replace("_", " "), level=level,
        category=categorize(words, level), tags=["kernelbench", f"level{level}"],
        forms=Forms(nl=_describe(code, name, level), reference=code),
        provenance=Provenance(source="kernelbench", license="MIT", original_name=name, problem_id=problem_id),
        review=Review(state="draft"), origin=origin)


def read_kernelbench(path: str | Path) -> list[Task]:
    """Every problem of a checkout, read in place, sorted by level then problem id."""
    root = kernelbench_root(path)
    tasks: list[Task] = []
    for level in range(1, 5):
        folder = root / f"level{level}"
        if not folder.is_dir():
            continue
        found = []
        for file in folder.glob("*.py"):
            match = _FILE.match(file.name)
            if match is None:
                continue  # helpers and __init__.py are not problems
            found.append((int(match.group(1)), file))
        for problem_id, file in sorted(found):
            try:
                code = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise TaskFormatError(file, f"cannot read: {exc}") from None
            tasks.append(task_from_kernelbench(code, level, file.stem, problem_id, str(file)))
    return tasks


def kernelbench_name(task: Task, problem_id: int) -> str:
    """`<problem_id>_<Name>`: the original name when the task came from KernelBench."""
    if task.provenance.source == "kernelbench" and task.provenance.original_name:
        return task.provenance.original_name
    words = re.sub(r"[^A-Za-z0-9]+", " ", task.title).split()
    return f"{problem_id}_{'_'.join(w[:1].upper() + w[1:] for w in words) or task.id}"


def _assign_ids(tasks: list[Task]) -> list[tuple[Task, int]]:
    used: dict[int, set[int]] = {}
    for task in tasks:
        if task.provenance.problem_id is not None:
            used.setdefault(task.level, set()).add(task.provenance.problem_id)
    out = []
    for task in tasks:
        pid = task.provenance.problem_id
        if pid is None:
            taken = used.setdefault(task.level, set())
            pid = max(taken, default=0) + 1
            taken.add(pid)
        out.append((task, pid))
    return out


def kernelbench_row(task: Task, problem_id: int) -> dict:
    """One row of KernelBench's HF schema."""
    return {"code": task.forms.reference, "level": task.level, "name": kernelbench_name(task, problem_id),
            "problem_id": problem_id}


def kernelbench_rows(tasks: list[Task]) -> list[dict]:
    return [kernelbench_row(t, pid) for t, pid in _assign_ids(tasks)]


def write_kernelbench(tasks: list[Task], out: str | Path) -> Path:
    """Write `OUT/KernelBench/level<N>/<id>_<Name>.py` for each task; returns the `KernelBench` folder."""
    root = Path(out) / "KernelBench"
    for row in kernelbench_rows(tasks):
        folder = root / f"level{row['level']}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{row['name']}.py").write_text(row["code"], encoding="utf-8")
    return root
