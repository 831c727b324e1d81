"""Name resolution for the Python side: imports, aliases and `getattr(x, "lit")` turned into dotted names.

`T.matmul`, `mm` after `from torch import matmul as mm`, and `getattr(torch, "matmul")` all resolve to
`torch.matmul`, so every rule matches on one canonical spelling.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from kernelmosaic import pysource
from kernelmosaic.verify.static.unroll import constant_loops_unrolled

__all__ = ["ModuleIndex", "Hit", "literal_getattr_to_attribute"]

_BUILTINS = set(dir(builtins))
_DANGEROUS = {"exec", "eval", "compile", "__import__", "open", "globals", "vars", "locals", "getattr", "setattr",
              "delattr", "breakpoint"}


@dataclass(frozen=True)
class Hit:
    """One raw observation before policy is applied: rule id, line in the candidate, message."""

    rule: str
    line: int
    message: str
    snippet: str = ""


def literal_getattr_to_attribute(tree: ast.AST) -> ast.AST:
    """Rewrite `getattr(obj, "name"[, default])` as `obj.name` so literal lookups are judged like attributes."""

    class _T(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) in (2, 3) and not node.keywords
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                    and node.args[1].value.isidentifier()):
                new = ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
                return ast.copy_location(new, node)
            return node

    return ast.fix_missing_locations(_T().visit(tree))


def without_main_block(tree: ast.Module) -> ast.Module:
    """Drop the module's `if __name__ == "__main__":` blocks (their `else` stays): a self-test a model appends never
    runs when the verifier imports the candidate under a module name of its own. Kept whenever the module could make
    the test true on import: any store to `__name__` (assignment, `global __name__`, walrus); writes through
    `globals()` are rejected on their own (`dynamic-code`)."""
    rebinds = any((isinstance(n, ast.Name) and n.id == "__name__" and not isinstance(n.ctx, ast.Load))
                  or (isinstance(n, ast.Global | ast.Nonlocal) and "__name__" in n.names) for n in ast.walk(tree))
    if rebinds:
        return tree
    body: list[ast.stmt] = []
    for stmt in tree.body:
        body.extend(stmt.orelse if isinstance(stmt, ast.If) and _is_main_test(stmt.test) else [stmt])
    tree.body = body
    return tree


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def class_attributes_through_self(tree: ast.AST) -> ast.AST:
    """In a method of a class, rewrite the class attribute `X` reached as `type(self).X`, `self.__class__.X`,
    `<the class>.X` or, in a classmethod, `cls.X` as `self.X` (what it also reads), so that an extension compiled
    once into `ModelNew._ext` and called as `type(self)._ext.op(x)` is followed like `self._ext`. Methods of the class
    stay as written (an explicit `ModelNew.helper(self, x)` passes `self` itself)."""

    class _T(ast.NodeTransformer):
        def __init__(self) -> None:
            self.stack: list[tuple[str, set[str]]] = []  # (class name, its methods) of the enclosing classes
            self.cls_names: list[str] = []  # the class parameter of the enclosing classmethods (`cls`)

        def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
            methods = {s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
            self.stack.append((node.name, methods))
            self.generic_visit(node)
            self.stack.pop()
            return node

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
            classmethod = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)
            first = (node.args.posonlyargs + node.args.args)[:1]
            self.cls_names.append(first[0].arg if classmethod and first and self.stack else "")
            self.generic_visit(node)
            self.cls_names.pop()
            return node

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            self.generic_visit(node)
            if not self.stack:
                return node
            name, methods = self.stack[-1]
            v = node.value
            cls_param = self.cls_names[-1] if self.cls_names else ""
            through = (isinstance(v, ast.Name) and (v.id == name or (cls_param and v.id == cls_param))) or (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "type" and len(v.args) == 1
                and not v.keywords and isinstance(v.args[0], ast.Name) and v.args[0].id == "self") or (
                isinstance(v, ast.Attribute) and v.attr == "__class__" and isinstance(v.value, ast.Name)
                and v.value.id == "self")
            if through and node.attr not in methods:
                return ast.copy_location(ast.Attribute(value=ast.copy_location(ast.Name(id="self", ctx=ast.Load()), v),
                                                       attr=node.attr, ctx=node.ctx), node)
            return node

    return ast.fix_missing_locations(_T().visit(tree))


def _lambda_def(name: str, lam: ast.Lambda) -> ast.FunctionDef:
    fn = ast.FunctionDef(name=name, args=lam.args, body=[ast.copy_location(ast.Return(value=lam.body), lam)],
                         decorator_list=[], returns=None, type_params=[])
    return ast.fix_missing_locations(ast.copy_location(fn, lam))


_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.For, ast.While)


def _conditional_functions(tree: ast.Module, functions: dict[str, ast.FunctionDef], classes: dict) -> None:
    """Functions and classes defined inside module-level `if`/`try`/`with`/loop blocks, which of them run being
    unknown here: one defined only there is taken as it is; a name with several definitions, one of them in such a
    block, becomes a stand-in that calls every definition (renamed `<name>__km_def<i>`), so whatever any of them
    reaches is judged."""
    found: dict[str, list] = {}

    def walk(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.setdefault(stmt.name, []).append(stmt)
            elif isinstance(stmt, _BLOCKS):
                for name in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, name, []))
                for handler in getattr(stmt, "handlers", []):
                    walk(handler.body)

    for stmt in tree.body:
        if isinstance(stmt, _BLOCKS):
            walk([stmt])
    for name, defs in found.items():
        if all(isinstance(d, ast.ClassDef) for d in defs):
            classes.setdefault(name, defs[-1])
            continue
        fns = [d for d in defs if not isinstance(d, ast.ClassDef)]
        if name in functions:
            fns.insert(0, functions[name])
        if len(fns) == 1:
            functions[name] = fns[0]
            continue
        calls = []
        for i, fn in enumerate(fns):
            functions[f"{name}__km_def{i}"] = fn
            calls.append(ast.Call(func=ast.Name(id=f"{name}__km_def{i}", ctx=ast.Load()),
                                  args=[ast.Starred(value=ast.Name(id="args", ctx=ast.Load()), ctx=ast.Load())],
                                  keywords=[ast.keyword(arg=None, value=ast.Name(id="kwargs", ctx=ast.Load()))]))
        stand_in = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[], vararg=ast.arg(arg="args"), kwonlyargs=[],
                                          kw_defaults=[], kwarg=ast.arg(arg="kwargs"), defaults=[]),
            body=[ast.Return(value=ast.BoolOp(op=ast.Or(), values=calls))], decorator_list=[], returns=None,
            type_params=[])
        functions[name] = ast.fix_missing_locations(ast.copy_location(stand_in, fns[-1]))


@dataclass
class ModuleIndex:
    """Imports, module-level definitions and assignments of one candidate module."""

    tree: ast.Module
    filename: str
    lines: list[str]
    imports: dict[str, str] = field(default_factory=dict)
    star: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    bound: set[str] = field(default_factory=set)
    parents: dict[int, ast.AST] = field(default_factory=dict)
    values: dict[str, ast.AST] = field(default_factory=dict)
    """Module-level name -> the expression last assigned to it."""
    lambda_defs: dict[int, ast.FunctionDef] = field(default_factory=dict)
    """id of a lambda anywhere in the module -> the def standing for it (one per lambda, so walks dedupe)."""

    @classmethod
    def build(cls, source: str, filename: str) -> ModuleIndex:
        tree = class_attributes_through_self(literal_getattr_to_attribute(
            constant_loops_unrolled(without_main_block(pysource.parse(source, filename=filename)))))
        assert isinstance(tree, ast.Module)
        idx = cls(tree=tree, filename=filename, lines=source.splitlines())
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                idx.parents[id(child)] = node
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        idx.imports[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        idx.imports[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name == "*":
                        idx.star.append(node.module)
                    else:
                        idx.imports[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                idx.bound.add(node.id)
            elif isinstance(node, ast.arg):
                idx.bound.add(node.arg)
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                idx.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
                # `mm = lambda a, b: a @ b` is a function too; give it a def so reachability follows it.
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        idx.functions[t.id] = _lambda_def(t.id, stmt.value)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    if isinstance(t, ast.Name):
                        idx.values[t.id] = stmt.value
            elif isinstance(stmt, ast.ClassDef):
                idx.classes[stmt.name] = stmt
        _conditional_functions(tree, idx.functions, idx.classes)
        idx.aliases = idx.scope_aliases(tree.body, {})
        return idx

    def scope_aliases(self, body: list[ast.stmt], outer: dict[str, str]) -> dict[str, str]:
        """Names bound by plain assignment to a resolvable dotted name (`mm = torch.matmul`) in this body."""
        found = dict(outer)
        for stmt in body:
            for node in ast.walk(stmt):
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)):
                    q = self.resolve(node.value, found)
                    if q and not isinstance(node.value, ast.Call):
                        found[node.targets[0].id] = q
        return found

    def resolve(self, node: ast.AST, local: dict[str, str] | None = None) -> str | None:
        """Dotted name an expression refers to (`torch.nn.functional.relu`), or None when it is not a name."""
        if isinstance(node, ast.Name):
            if local and node.id in local:
                return local[node.id]
            if node.id in self.aliases:
                return self.aliases[node.id]
            if node.id in self.imports:
                return self.imports[node.id]
            if node.id in self.functions or node.id in self.classes:
                return None
            if node.id in _BUILTINS and (node.id not in self.bound or node.id in _DANGEROUS):
                # Dangerous builtins resolve even when the name is also bound somewhere: `exec = exec` or a
                # same-named variable elsewhere must not hide them.
                return f"builtins.{node.id}"
            if self.star and node.id not in self.bound:
                return f"{self.star[0]}.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value, local)
            return f"{base}.{node.attr}" if base else None
        return None

    def lambda_def(self, lam: ast.Lambda) -> ast.FunctionDef:
        """A def for a lambda met as a value (`self.op = lambda t: ...`), so reachability can follow it."""
        if id(lam) not in self.lambda_defs:
            fn = _lambda_def("<lambda>", lam)
            self.parents[id(fn)] = self.parent(lam) or self.tree
            self.lambda_defs[id(lam)] = fn
        return self.lambda_defs[id(lam)]

    def snippet(self, line: int) -> str:
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        return text if len(text) <= 160 else text[:157] + "..."

    def hit(self, rule: str, node: ast.AST | int, message: str) -> Hit:
        line = node if isinstance(node, int) else getattr(node, "lineno", 0)
        return Hit(rule=rule, line=line, message=message, snippet=self.snippet(line))

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))
