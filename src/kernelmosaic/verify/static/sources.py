"""Finds the candidate's kernels: `load_inline` extensions with their source text resolved, and Triton kernels.

Sources may be literals, names bound to literals, f-strings over constants, concatenations, `.format`,
`%`, `.replace`, `textwrap.dedent` and joins of those; anything else is reported as opaque.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from kernelmosaic.verify.static.pyscope import ModuleIndex

__all__ = ["Extension", "Opaque", "Text", "find_extensions", "resolve_source", "find_triton_kernels", "LOAD_INLINE", "LOAD_FILES"]

LOAD_INLINE = "torch.utils.cpp_extension.load_inline"
LOAD_FILES = "torch.utils.cpp_extension.load"
_POSITIONAL = ["name", "cpp_sources", "cuda_sources", "functions"]


class Opaque(Exception):
    """A source part could not be resolved statically; the message says which."""


@dataclass
class Text:
    """Resolved source text and, per piece, the candidate line where that piece starts."""

    pieces: list[tuple[str, int]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(p for p, _ in self.pieces)

    def __add__(self, other: Text) -> Text:
        return Text(self.pieces + other.pieces)

    def line_of(self, offset: int) -> int:
        """Candidate line of a character offset into `text`."""
        start = 0
        for piece, line in self.pieces:
            if offset < start + len(piece):
                return line + piece[: offset - start].count("\n")
            start += len(piece)
        return self.pieces[-1][1] if self.pieces else 0


@dataclass
class Extension:
    """One `load_inline` (or file-based `load`) call, or a CuPy RawKernel/RawModule (the fast form)."""

    call: ast.Call
    scope: ast.AST
    name: str = ""
    cpp: Text = field(default_factory=Text)
    cuda: Text = field(default_factory=Text)
    functions: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    """Why some source could not be resolved (empty when everything was literal)."""
    launched: list[str] = field(default_factory=list)
    """Kernels launched from Python by name (a CuPy RawKernel's name, RawModule.get_function names)."""


class _Resolver:
    def __init__(self, idx: ModuleIndex, scope: ast.AST):
        self.idx, self.scope, self.depth = idx, scope, 0

    def text(self, node: ast.AST) -> Text:
        self.depth += 1
        try:
            if self.depth > 40:
                raise Opaque("source definitions nest too deeply")
            return self._text(node)
        finally:
            self.depth -= 1

    def _text(self, node: ast.AST) -> Text:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float) \
                and not isinstance(node.value, bool):
            return Text([(str(node.value), line)])
        if isinstance(node, ast.JoinedStr):
            out = ""
            for part in node.values:
                out += self.text(part.value).text if isinstance(part, ast.FormattedValue) else str(part.value)
            return Text([(out, line)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.text(node.left) + self.text(node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            try:
                return Text([(self.text(node.left).text % tuple(self._value(a) for a in args), line)])
            except (TypeError, ValueError) as e:
                raise Opaque(f"line {line}: %-formatting failed ({e})") from e
        if isinstance(node, ast.List | ast.Tuple):
            out = Text()
            for elt in node.elts:
                out = out + self.text(elt) + Text([("\n", line)])
            return out
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            return self._class_attr(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise Opaque(f"line {line}: `{ast.unparse(node)[:60]}` is not a literal")

    def _value(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        return self.text(node).text

    def _call(self, node: ast.Call) -> Text:
        f, line = node.func, node.lineno
        q = self.idx.resolve(f) or ""
        if q in ("textwrap.dedent", "inspect.cleandoc", "builtins.str") and len(node.args) == 1:
            inner = self.text(node.args[0])
            return Text([(textwrap.dedent(inner.text), inner.pieces[0][1] if inner.pieces else line)])
        if isinstance(f, ast.Attribute) and f.attr in ("format", "replace", "join", "strip", "lstrip"):
            base = self.text(f.value).text
            if f.attr == "join" and len(node.args) == 1:
                items = node.args[0]
                parts = items.elts if isinstance(items, ast.List | ast.Tuple) else None
                if parts is None:
                    raise Opaque(f"line {line}: join over a non-literal sequence")
                return Text([(base.join(self.text(p).text for p in parts), line)])
            args = [self._value(a) for a in node.args]
            kwargs = {k.arg: self._value(k.value) for k in node.keywords if k.arg}
            try:
                return Text([(getattr(base, f.attr)(*args, **kwargs), line)])
            except (TypeError, ValueError, KeyError, IndexError) as e:
                raise Opaque(f"line {line}: .{f.attr}() could not be evaluated ({e})") from e
        raise Opaque(f"line {line}: `{ast.unparse(node)[:60]}` is computed at run time")

    def _class_attr(self, node: ast.Attribute) -> Text:
        """`self.SRC` / `Cls.SRC` where a class body binds SRC to a literal."""
        values = _class_attr_values(self.idx, node.attr)
        if len(values) != 1:
            raise Opaque(f"line {node.lineno}: `{ast.unparse(node)[:60]}` is not a class-level literal")
        return self.text(values[0])

    def _name(self, node: ast.Name) -> Text:
        for scope in (self.scope, self.idx.tree):
            found = _assignments(scope, node.id)
            if found:
                out = Text()
                for value, aug in found:
                    part = self.text(value)
                    # Plain re-assignments are alternatives; analyze all of them (joined) to stay conservative.
                    out = out + part if aug or not out.pieces else out + Text([("\n", 0)]) + part
                return out
        raise Opaque(f"line {node.lineno}: `{node.id}` is not bound to a literal in this module")


def _class_attr_values(idx: ModuleIndex, attr: str) -> list[ast.AST]:
    return [stmt.value for cls in idx.classes.values() for stmt in cls.body
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets)]


def _assignments(scope: ast.AST, name: str) -> list[tuple[ast.AST, bool]]:
    body = scope.body if isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) else []
    out: list[tuple[int, ast.AST, bool]] = []
    for stmt in body:
        for node in ast.walk(stmt) if not isinstance(stmt, ast.FunctionDef | ast.ClassDef) else [stmt]:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                out.append((node.lineno, node.value, False))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                out.append((node.lineno, node.value, False))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                out.append((node.lineno, node.value, True))
    return [(v, aug) for _, v, aug in sorted(out, key=lambda t: t[0])]


def _enclosing_function(idx: ModuleIndex, node: ast.AST) -> ast.AST:
    cur = idx.parent(node)
    while cur is not None and not isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef):
        cur = idx.parent(cur)
    return cur or idx.tree


def builds_after_import(source: str) -> bool:
    """Whether a `load_inline`/`load` call sits inside a function (a lazy loader, `__init__`): that build may run
    while the candidate is constructed or first called, where the compile stage did not make it ahead."""
    try:
        idx = ModuleIndex.build(source, "candidate.py")
    except (SyntaxError, ValueError):
        return False
    return any(not isinstance(e.scope, ast.Module) for e in find_extensions(idx))


def resolve_source(idx: ModuleIndex, at: ast.AST, node: ast.AST) -> Text:
    """The literal text an expression evaluates to, names looked up from the function around `at`; raises Opaque."""
    return _Resolver(idx, _enclosing_function(idx, at)).text(node)


def find_extensions(idx: ModuleIndex) -> list[Extension]:
    """Every `load_inline`/`load` call in the module with its sources resolved as far as possible."""
    exts = []
    for node in ast.walk(idx.tree):
        if not isinstance(node, ast.Call):
            continue
        q = idx.resolve(node.func)
        if q not in (LOAD_INLINE, LOAD_FILES):
            continue
        ext = Extension(call=node, scope=_enclosing_function(idx, node))
        if q == LOAD_FILES:
            ext.opaque.append(f"line {node.lineno}: cpp_extension.load builds from files the analysis cannot see "
                              "(pass the source text to load_inline as cpp_sources/cuda_sources instead)")
        args = dict(zip(_POSITIONAL, node.args, strict=False))
        args.update({k.arg: k.value for k in node.keywords if k.arg})
        res = _Resolver(idx, ext.scope)
        for key in ("cpp_sources", "cuda_sources"):
            if key in args and not (isinstance(args[key], ast.Constant) and args[key].value is None):
                try:
                    setattr(ext, key.split("_")[0], res.text(args[key]))
                except Opaque as e:
                    ext.opaque.append(str(e))
        for key in ("name", "functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                    "extra_include_paths"):
            if key not in args:
                continue
            try:
                text = res.text(args[key]).text
            except Opaque as e:
                # link flags decide which libraries do the work (`vendor-library`); computed compile flags and
                # include paths (`os.path.join(CUDA_HOME, "include")`) only reach headers already on disk, which
                # the candidate cannot write (file writes are rejected on their own), so its code stays in view
                if key == "extra_ldflags":
                    ext.opaque.append(str(e))
                continue
            if key == "name":
                ext.name = text
            elif key == "functions":
                ext.functions = re.findall(r"[A-Za-z_]\w*", text)
            else:
                ext.flags.extend(text.split())
        exts.append(ext)
    return exts


def find_triton_kernels(idx: ModuleIndex) -> dict[str, ast.FunctionDef]:
    """Module-level functions decorated with `triton.jit` (possibly under autotune/heuristics)."""
    out = {}
    for name, fn in idx.functions.items():
        for dec in fn.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if (idx.resolve(target) or "").startswith("triton.") and (idx.resolve(target) or "").endswith("jit"):
                out[name] = fn
    return out
