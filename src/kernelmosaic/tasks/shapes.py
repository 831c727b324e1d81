"""Reading and overriding a reference module's size constants without running it."""

from __future__ import annotations

import ast
import symtable
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kernelmosaic import pysource

__all__ = ["module_constants", "apply_shape_overrides", "ShapeOverrideError", "input_size_constants",
           "derive_alternatives", "small_size", "small_shapes", "small_model_shapes", "size_check_sizes", "SizeCheck",
           "Size"]

Size = int | tuple[int, ...]
"""A size constant's value: an integer (`batch_size = 4096`) or a tuple of integers (`input_shape = (4096,)`, as
KernelBench's losses and scans write theirs), moved element by element."""


class ShapeOverrideError(ValueError):
    """An override names a constant the reference does not define at module level."""


def _constant_statements(tree: ast.Module) -> dict[str, tuple[ast.stmt, ast.expr]]:
    """Module-level constants: name -> (the statement, the expression that gives its value). Besides `NAME = expr`,
    KernelBench writes `height = width = 128` and `height, width = 128, 128`: each name gets its own expression."""
    out: dict[str, tuple[ast.stmt, ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for t in node.targets:
                out[t.id] = (node, node.value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and isinstance(node.value, ast.Tuple) and len(node.targets[0].elts) == len(node.value.elts) \
                and all(isinstance(t, ast.Name) for t in node.targets[0].elts):
            for t, v in zip(node.targets[0].elts, node.value.elts, strict=True):
                out[t.id] = (node, v)  # type: ignore[attr-defined]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = (node, node.value)
    return out


def _constant_nodes(tree: ast.Module) -> dict[str, ast.expr]:
    return {name: value for name, (_, value) in _constant_statements(tree).items()}


def module_constants(source: str) -> dict[str, int | float | bool | str]:
    """Module-level `NAME = literal` assignments (literals and simple arithmetic of earlier constants)."""
    tree = pysource.parse(source)
    values: dict[str, int | float | bool | str] = {}
    for name, node in _constant_nodes(tree).items():
        try:
            value = _evaluate(node, values)
        except ValueError:
            continue
        values[name] = value
    return values


def _evaluate(node: ast.expr, env: dict) -> int | float | bool | str:
    # A tiny constant folder: enough for `dim = 2 * 1024` or `seq = block * 4`, never executes code.
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool | str):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, env)
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a**b,
               ast.LShift: lambda a, b: a << b}
        for kind, fn in ops.items():
            if isinstance(node.op, kind):
                return fn(left, right)
    raise ValueError("not a constant")


def apply_shape_overrides(source: str, overrides: Mapping[str, int | float | bool | tuple[int, ...]]) -> str:
    """Rewrite the right-hand side of each overridden module-level constant; other text is kept byte for byte."""
    if not overrides:
        return source
    tree = pysource.parse(source)
    statements = _constant_statements(tree)
    missing = sorted(set(overrides) - set(statements))
    if missing:
        raise ShapeOverrideError(f"no module-level constant named {', '.join(missing)} in the reference")
    lines = source.splitlines(keepends=True)
    edits: dict[int, tuple[ast.AST, str]] = {}  # one edit per statement: (the span rewritten, its new text)
    for name in overrides:
        stmt, value = statements[name]
        names = [n for n, (s, _) in statements.items() if s is stmt]
        if len(names) == 1:
            edits[id(stmt)] = (value, repr(overrides[name]))
        else:  # `h = w = 128`, `h, w = 128, 128`: one assignment per name, on the statement's own line
            text = "; ".join(f"{n} = {repr(overrides[n]) if n in overrides else ast.get_source_segment(source, v)}"
                             for n, (_, v) in ((n, statements[n]) for n in names))
            edits[id(stmt)] = (stmt, text)
    # Edit from the bottom so earlier offsets stay valid.
    for node, text in sorted(edits.values(), key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[operator]
        prefix = lines[start].encode()[: node.col_offset].decode()  # type: ignore[attr-defined]
        suffix = lines[end].encode()[node.end_col_offset :].decode()  # type: ignore[attr-defined]
        lines[start : end + 1] = [prefix + text + suffix]
    return "".join(lines)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def input_size_constants(source: str) -> list[str]:
    """Integer constants, set by a literal or by arithmetic of literals (`N = 2048 * 2`), that only `get_inputs()`
    reads (directly or through constants derived from them): changing one changes the inputs' sizes and nothing the
    model or its init arguments depend on."""
    tree = pysource.parse(source)
    nodes = _constant_nodes(tree)
    uses: dict[str, set[str]] = {}  # constant -> the constants its expression reads, transitively below
    for name, node in nodes.items():
        uses[name] = _names(node) & set(nodes)

    def closure(names: set[str]) -> set[str]:
        out, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n in nodes and n not in out:
                out.add(n)
                todo.extend(uses[n])
        return out

    reads = _module_reads(source)
    inputs: set[str] = set()
    elsewhere: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "get_inputs":
            inputs |= closure(reads(stmt))
        elif not _constant_assignment(stmt):
            elsewhere |= closure(reads(stmt))  # the Model, get_init_inputs, helpers: anything but get_inputs
    return [n for n in nodes if n in inputs and n not in elsewhere and _sizes_something(_literal_size(nodes[n]))]


def _module_reads(source: str) -> Callable[[ast.stmt], set[str]]:
    """For a top-level statement, the module-level names it reads. A function or class counts only the names its
    scopes resolve to the module (Python's own symbol tables): a parameter or local that shares a constant's name
    (`def __init__(self, dim: int = 1)` beside `dim = 393216`) is not a read of the constant. Other statements, and
    what a definition evaluates at module level (decorators, defaults, bases), count every name they load."""
    scopes: dict[tuple[str, int], symtable.SymbolTable] = {}
    try:
        for child in pysource.symbols(source, "<reference>").get_children():
            scopes.setdefault((child.get_name(), child.get_lineno()), child)
    except SyntaxError:
        pass

    def global_reads(table: symtable.SymbolTable) -> set[str]:
        out = {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
        for child in table.get_children():
            out |= global_reads(child)
        return out

    def reads(stmt: ast.stmt) -> set[str]:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return _names(stmt)
        table = scopes.get((stmt.name, stmt.lineno))
        if table is None:
            return _names(stmt)
        if isinstance(stmt, ast.ClassDef):
            outer: list[ast.AST] = [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
        else:
            outer = [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            if stmt.returns is not None:
                outer.append(stmt.returns)
            outer.extend(a.annotation for a in (*stmt.args.posonlyargs, *stmt.args.args, *stmt.args.kwonlyargs)
                         if a.annotation is not None)
        return global_reads(table) | {n for node in outer for n in _names(node)}

    return reads


def _sizes_something(value: Size | None) -> bool:
    """An integer of at least 2, or a tuple of positive integers one of which is at least 2."""
    if isinstance(value, tuple):
        return all(v >= 1 for v in value) and any(v >= 2 for v in value)
    return value is not None and value >= 2


def _literal_size(node: ast.expr) -> Size | None:
    """`_literal_int`, or a tuple of them (`(4096,)`, `(128, 4096)`): a size constant's value, else None."""
    if isinstance(node, ast.Tuple) and node.elts:
        elements = [_literal_int(e) for e in node.elts]
        return tuple(e for e in elements if e is not None) if None not in elements else None
    return _literal_int(node)


def _moved(value: Size, move: Callable[[int], int]) -> Size:
    """`move` applied to an integer size, or to every element of a tuple of them but its 1s (a broadcast axis stays
    one)."""
    return tuple(move(v) if v >= 2 else v for v in value) if isinstance(value, tuple) else move(value)


def _size_values(source: str, names: list[str]) -> dict[str, Size]:
    """The literal values of the size constants `names` (each one qualified by `input_size_constants`)."""
    nodes = _constant_nodes(pysource.parse(source))
    return {n: v for n in names if (v := _literal_size(nodes[n])) is not None}


def _smaller(new: Size, old: Size) -> bool:
    """`new` is smaller than `old` somewhere and nowhere larger."""
    pairs = list(zip(new, old, strict=True)) if isinstance(new, tuple) and isinstance(old, tuple) else [(new, old)]
    return all(a <= b for a, b in pairs) and any(a < b for a, b in pairs)  # type: ignore[operator]


def _literal_int(node: ast.expr) -> int | None:
    """The integer a constant's expression folds to when it reads no other constant (`4096`, `2048 * 2`), else
    None: a constant computed from others follows them and is not itself a size to change."""
    if _names(node):
        return None
    try:
        value = _evaluate(node, {})
    except (ValueError, ArithmeticError):
        return None
    return value if type(value) is int else None


def _constant_assignment(stmt: ast.stmt) -> bool:
    """`NAME = expr` (or `A = B = expr`, `A, B = x, y`) at module level: a constant definition (what it reads is
    followed through `uses`)."""
    return any(s is stmt for s, _ in _constant_statements(ast.Module(body=[stmt], type_ignores=[])).values())


def _odd_size(value: int) -> int:
    """A nearby, different, mostly odd size no larger than about the original: 4096 -> 3583, 16 -> 13, 4 -> 5."""
    if value < 8:
        return value + 1
    new = value - value // 8 - 1
    return new - 1 if new % 2 == 0 else new


def derive_alternatives(source: str) -> list[dict[str, Size]]:
    """One alternative shape set for a KernelBench-style reference: every constant that only sizes the inputs,
    moved to a nearby odd size (each element of a tuple). Empty when no constant qualifies. The reference must still
    be run at it (audits and the verifier do) before a candidate is judged there."""
    values = _size_values(source, input_size_constants(source))
    return [{n: _moved(v, _odd_size) for n, v in values.items()}] if values else []


def small_size(value: int) -> int:
    """A small size for a large one: sizes up to 64 stay; larger ones become odd and about a sixteenth (at least
    33), so a (4096, 4096) problem runs at (257, 257) and kernels meet tails that a power of two would hide."""
    if value <= 64:
        return value
    return max(33, value // 16) | 1


def small_shapes(source: str) -> dict[str, Size]:
    """The input-only size constants of a reference and their small sizes (only those that shrink; a tuple's elements
    each by `small_size`): the shapes the sanitizer runs a problem at, and an audit's derived shapes for a task that
    declares no small ones. Empty when nothing shrinks or the source does not parse."""
    try:
        values = _size_values(source, input_size_constants(source))
    except (SyntaxError, ValueError):
        return {}
    small = {n: _moved(v, small_size) for n, v in values.items()}
    return {n: v for n, v in small.items() if _smaller(v, values[n])}


KEPT_FACTOR = 32
"""A size check keeps each size's power-of-two factor up to this: vectorised loads (float4), warp-wide steps and tiles
of 16 or 32 that a problem's own sizes divide stay valid, so only a size baked into the kernel fails there."""


@dataclass(frozen=True)
class SizeCheck:
    """The sizes a default size check runs a problem at (`overrides`), or, when empty, why none could be derived."""

    overrides: dict[str, Size] = field(default_factory=dict)
    why: str = ""


def _check_size(value: int) -> int:
    """A different size with the same power-of-two factor (up to `KEPT_FACTOR`): about a sixteenth of a size above 64
    (4096 -> 256), three quarters of a smaller one; a size too small to shrink grows by its factor (4 -> 8)."""
    factor = min(value & -value, KEPT_FACTOR)
    target = value // 16 if value > 64 else value - value // 4
    new = max(factor, target // factor * factor)
    return value + factor if new == value else new


def size_check_sizes(source: str) -> SizeCheck:
    """The sizes at which the verifier checks, by default, that a kernel does not have the problem's sizes baked in:
    every integer constant that only sizes the inputs (`input_size_constants`: nothing the model, its weights or its
    init arguments read, so the problem's own ties between sizes hold) moved to another size that keeps its
    power-of-two factor (`_check_size`). Small on purpose: any other size shows a baked-in one, and a small one
    costs little on a CPU and stays far from the large-output mode of KernelBench's largest problems on a GPU. The
    reference is run there before the candidate is judged; where it fails, the sizes break the problem's contract
    and are not used."""
    try:
        values = _size_values(source, input_size_constants(source))
    except (SyntaxError, ValueError) as exc:
        return SizeCheck(why=f"the problem's module constants cannot be read ({type(exc).__name__})")
    if not values:
        return SizeCheck(why="no module-level integer constant (a literal of at least 2, or a tuple of them) sizes "
                             "only the inputs: every size also reaches the model, its weights or its init arguments, "
                             "or is computed at run time")
    return SizeCheck(overrides={n: _moved(v, _check_size) for n, v in values.items()})


def small_model_shapes(source: str) -> dict[str, Size]:
    """`small_shapes` and, besides, every other literal integer constant above 64 (the model's widths, which reach its
    weights and init arguments) shrunk to about a sixteenth that keeps its power-of-two factor up to `KEPT_FACTOR`
    (`_check_size`: 8192 -> 512, so heads, groups and tiles still divide it): the sanitizer's first shapes, since a
    GEMM whose weights keep KernelBench's 8192 x 8192 takes minutes under racecheck even with a sixteenth of its
    batch. Empty when nothing beyond `small_shapes` shrinks or the source does not parse."""
    try:
        tree = pysource.parse(source)
        inputs = small_shapes(source)
    except SyntaxError:
        return {}
    model: dict[str, Size] = {}
    for name, node in _constant_nodes(tree).items():
        value = _literal_int(node)
        if name not in inputs and value is not None and value > 64:
            model[name] = _check_size(value)
    return {**inputs, **model} if model else {}
