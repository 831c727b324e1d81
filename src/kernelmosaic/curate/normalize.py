"""Normalized views of a task's code, so that renaming, reformatting or re-importing does not hide a copy.

The reference is only parsed (`ast`), never imported or run. Module aliases are resolved (`F.relu`, `torch.relu`,
`torch.nn.functional.relu` and `from torch.nn.functional import relu` are one name), docstrings and
imports are dropped, and names the author chose (locals, arguments, helpers, `self.` attributes) become
placeholders numbered by first use.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import re
import tokenize

from kernelmosaic import pysource
from kernelmosaic.tasks.spec import SpecError, parse_spec
from kernelmosaic.tasks.spec.compiler import forward_source

__all__ = ["normalized_tree", "ast_hash", "problem_tokens", "spec_tokens", "shingles"]

_FIXED = {"Model", "forward", "__init__", "get_inputs", "get_init_inputs", "self", "super"} | set(dir(builtins))
_SHARED_FUNCS = {"get_inputs", "get_init_inputs"}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class _Normalizer(ast.NodeTransformer):
    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.names: dict[str, str] = {}
        self.attrs: dict[str, str] = {}
        self.methods: set[int] = set()

    def _local(self, name: str) -> str:
        if name in _FIXED:
            return name
        return self.names.setdefault(name, f"_{len(self.names)}")

    def visit_Import(self, node: ast.Import) -> None:
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a docstring or a bare string: prose, not code
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        dotted = _dotted(node)
        root = dotted.split(".", 1)[0] if dotted else ""
        if dotted and root in self.aliases:
            full = self.aliases[root] + dotted[len(root):]
            # torch.nn.functional.relu and torch.relu compute the same: one name
            return ast.Name(id=full.replace("torch.nn.functional.", "torch."), ctx=node.ctx)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            node.attr = self.attrs.setdefault(node.attr, f"a{len(self.attrs)}")
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.aliases:
            node.id = self.aliases[node.id].replace("torch.nn.functional.", "torch.")
        else:
            node.id = self._local(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg, node.annotation = self._local(node.arg), None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if id(node) not in self.methods:
            node.name = self._local(node.name)
        node.returns = None
        self.generic_visit(node)
        node.body = node.body or [ast.Pass()]
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._local(node.name)
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name not in _FIXED:
                # Methods are called as `self.name(...)`: they share the `self.` attribute numbering.
                item.name = self.attrs.setdefault(item.name, f"a{len(self.attrs)}")
                self.methods.add(id(item))
        self.generic_visit(node)
        node.body = node.body or [ast.Pass()]
        return node


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> full dotted module or object path, from the module's imports."""
    aliases = {"torch": "torch"}  # the spec compiler's code uses torch without importing it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def normalized_tree(source: str, problem_only: bool = False) -> ast.Module:
    """The normalized AST; `problem_only` keeps just the classes and helpers that define the computation
    (no module constants, no `get_inputs` / `get_init_inputs`, no `super().__init__()`). Raises SyntaxError."""
    tree = pysource.parse(source)
    aliases = _aliases(tree)
    if problem_only:
        tree.body = [n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)
                     and n.name not in _SHARED_FUNCS]
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                node.body = [s for s in node.body if "super()" not in ast.unparse(s)]
    return ast.fix_missing_locations(_Normalizer(aliases).visit(tree))


def ast_hash(source: str) -> str:
    """sha256 of the whole normalized reference (constants kept: other shapes are another problem here);
    falls back to the whitespace-free text when the source does not parse."""
    try:
        body = ast.dump(normalized_tree(source), annotate_fields=False, include_attributes=False)
    except SyntaxError:
        body = "unparsed:" + re.sub(r"\s+", "", source)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _tokens(text: str) -> list[str]:
    try:
        toks = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        toks = re.findall(r"\w+|[^\s\w]", text)
    # Numbers stay (ord=1 vs ord=2 is another problem); sizes live in module constants, outside this view.
    return toks


def problem_tokens(source: str) -> list[str]:
    """Tokens of the normalized problem-defining code (see `normalized_tree(problem_only=True)`)."""
    try:
        return _tokens(ast.unparse(normalized_tree(source, problem_only=True)))
    except SyntaxError:
        return _tokens(source)


def spec_tokens(spec: str) -> list[str]:
    """Tokens of the spec's canonical form (its compiled `forward` body, names numbered); [] without a spec."""
    if not spec.strip():
        return []
    try:
        body = "def f():\n" + "\n".join("    " + line for line in forward_source(parse_spec(spec)))
        return ["spec:" + t for t in _tokens(ast.unparse(normalized_tree(body)))]
    except (SpecError, SyntaxError):
        return ["spec:" + t for t in _tokens(spec)]


def shingles(tokens: list[str], k: int) -> set[str]:
    """Sets of `k` consecutive tokens (the whole sequence when shorter)."""
    if len(tokens) <= k:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}
