"""Decontamination: which tasks are too similar to an evaluation set (e.g. a KernelBench checkout).

Two views of each reference, both restricted to what defines the problem (the `Model` class and helpers,
without docstrings, `super().__init__()`, `get_inputs` or `get_init_inputs`, which every problem shares):
- normalized AST: a pre-order stream of node types where local names and `self.` attributes become one
  placeholder, API calls keep only their name (`torch.relu`, `F.relu` -> `.relu`) and keywords stay, so
  renaming variables or imports does not hide a copy;
- token n-grams of the unparsed source, names kept.
MinHash LSH (datasketch) proposes candidate pairs; exact Jaccard of the n-gram sets decides.
"""

from __future__ import annotations

import ast
import re

from datasketch import MinHash, MinHashLSH
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic import pysource
from kernelmosaic.tasks.schema import Task

__all__ = ["DecontamConfig", "Match", "DecontamReport", "fingerprint", "decontaminate"]

_KEEP_NAMES = {"torch", "nn", "F", "math", "self", "super", "forward", "__init__", "Model"}
_SKIP_FUNCS = {"get_inputs", "get_init_inputs"}
_MODULES = {"torch", "nn", "F", "math", "functional"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DecontamConfig(_Model):
    ast_threshold: float = Field(0.8, gt=0, le=1)
    """Normalized-AST n-gram Jaccard at or above which a pair is reported."""
    token_threshold: float = Field(0.8, gt=0, le=1)
    """Token n-gram Jaccard at or above which a pair is reported."""
    ast_ngram: int = 4
    token_ngram: int = 5
    num_perm: int = 128
    """MinHash permutations."""


class Match(_Model):
    task_id: str
    against_id: str
    against_origin: str = ""
    ast_similarity: float
    token_jaccard: float


class DecontamReport(_Model):
    against: str
    checked: int
    against_count: int
    matches: list[Match] = Field(default_factory=list)
    """Pairs at or above a threshold, most similar first."""


def _problem_nodes(tree: ast.Module) -> list[ast.stmt]:
    return [n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name not in _SKIP_FUNCS]


def _is_boilerplate(stmt: ast.stmt) -> bool:
    """Docstrings, `pass` and `super().__init__()`: shared by every problem, so they only add false overlap."""
    if isinstance(stmt, ast.Pass):
        return True
    if not isinstance(stmt, ast.Expr):
        return False
    value = stmt.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "__init__"
            and isinstance(value.func.value, ast.Call) and getattr(value.func.value.func, "id", "") == "super")


def _strip_boilerplate(nodes: list[ast.stmt]) -> None:
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.ClassDef | ast.FunctionDef):
                inner.body = [s for s in inner.body if not _is_boilerplate(s)] or [ast.Pass()]


def _module_root(node: ast.Attribute) -> bool:
    value = node.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and value.id in _MODULES


def _stream(node: ast.AST, out: list[str]) -> None:
    kind = type(node).__name__
    if isinstance(node, ast.Name | ast.arg):
        ident = node.id if isinstance(node, ast.Name) else node.arg
        out.append(ident if ident in _KEEP_NAMES else "v")
        return
    if isinstance(node, ast.Constant):
        out.append("num" if isinstance(node.value, int | float) else "const")
        return
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        # Attributes of self are names the author chose (self.fc vs self.linear): placeholders too.
        out.append("self.v")
        return
    if isinstance(node, ast.Attribute) and _module_root(node):
        # torch.relu, F.relu and torch.nn.functional.relu are one operator: keep only its name.
        out.append("." + node.attr)
        return
    if isinstance(node, ast.Attribute):
        out.append("." + node.attr)
    elif isinstance(node, ast.keyword):
        out.append(f"{node.arg}=")
    elif isinstance(node, ast.FunctionDef | ast.ClassDef):
        out.append(kind + (":" + node.name if node.name in _KEEP_NAMES else ""))
    elif not isinstance(node, ast.expr_context | ast.Load | ast.Store):
        out.append(kind)
    for child in ast.iter_child_nodes(node):
        _stream(child, out)


def _ngrams(seq: list[str], n: int) -> set[str]:
    if len(seq) < n:
        return {" ".join(seq)} if seq else set()
    return {" ".join(seq[i : i + n]) for i in range(len(seq) - n + 1)}


def fingerprint(source: str, config: DecontamConfig | None = None) -> tuple[set[str], set[str]]:
    """(normalized-AST n-grams, token n-grams) of the problem-defining part of a reference."""
    config = config or DecontamConfig()
    try:
        tree = pysource.parse(source)
        nodes = _problem_nodes(tree) or tree.body
        _strip_boilerplate(nodes)
        stream: list[str] = []
        for node in nodes:
            _stream(node, stream)
        text = "\n".join(ast.unparse(n) for n in nodes)
    except SyntaxError:
        stream, text = [], source
    tokens = re.findall(r"\w+|[^\s\w]", text)
    return _ngrams(stream, config.ast_ngram), _ngrams(tokens, config.token_ngram)


def _minhash(shingles: set[str], num_perm: int) -> MinHash:
    mh = MinHash(num_perm=num_perm, seed=1)
    mh.update_batch([s.encode("utf-8") for s in shingles])
    return mh


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def decontaminate(tasks: list[Task], against: list[Task], against_name: str = "",
                  config: DecontamConfig | None = None) -> DecontamReport:
    """Report every (task, evaluation problem) pair at or above either threshold."""
    config = config or DecontamConfig()
    # LSH retrieves candidates at a lower threshold than the report's, so MinHash noise costs no recall.
    lsh = {view: MinHashLSH(threshold=max(0.05, thr * 0.6), num_perm=config.num_perm)
           for view, thr in (("ast", config.ast_threshold), ("tok", config.token_threshold))}
    prints = {}
    for k, other in enumerate(against):
        prints[k] = fingerprint(other.forms.reference, config)
        for view, shingles in zip(("ast", "tok"), prints[k], strict=True):
            if shingles:
                lsh[view].insert(str(k), _minhash(shingles, config.num_perm))
    matches = []
    for task in tasks:
        mine = fingerprint(task.forms.reference, config)
        candidates = set()
        for view, shingles in zip(("ast", "tok"), mine, strict=True):
            if shingles:
                candidates |= set(lsh[view].query(_minhash(shingles, config.num_perm)))
        for key in sorted(candidates, key=int):
            theirs = prints[int(key)]
            ast_sim, tok_sim = _jaccard(mine[0], theirs[0]), _jaccard(mine[1], theirs[1])
            if ast_sim >= config.ast_threshold or tok_sim >= config.token_threshold:
                other = against[int(key)]
                matches.append(Match(task_id=task.id, against_id=other.id, against_origin=other.origin,
                                     ast_similarity=round(ast_sim, 4), token_jaccard=round(tok_sim, 4)))
    matches.sort(key=lambda m: (-max(m.ast_similarity, m.token_jaccard), m.task_id))
    return DecontamReport(against=against_name, checked=len(tasks), against_count=len(against), matches=matches)
