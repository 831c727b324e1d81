"""Reading and overriding a reference module's size constants without running it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["module_constants", "apply_shape_overrides", "ShapeOverrideError", "input_size_constants",
           "derive_alternatives", "small_size", "small_shapes", "small_model_shapes", "size_check_sizes", "SizeCheck"]


class ShapeOverrideError(ValueError):
    """An override names a constant the reference does not define at module level."""


def _constant_nodes(tree: ast.Module) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def module_constants(source: str) -> dict[str, int | float | bool | str]:
    """Module-level `NAME = literal` assignments (literals and simple arithmetic of earlier constants)."""
    tree = ast.parse(source)
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


def apply_shape_overrides(source: str, overrides: dict[str, int | float | bool]) -> str:
    """Rewrite the right-hand side of each overridden module-level constant; other text is kept byte for byte."""
    if not overrides:
        return source
    tree = ast.parse(source)
    nodes = _constant_nodes(tree)
    missing = sorted(set(overrides) - set(nodes))
    if missing:
        raise ShapeOverrideError(f"no module-level constant named {', '.join(missing)} in the reference")
    lines = source.splitlines(keepends=True)
    # Edit from the bottom so earlier offsets stay valid.
    for name in sorted(overrides, key=lambda n: (nodes[n].lineno, nodes[n].col_offset), reverse=True):
        node = nodes[name]
        start, end = node.lineno - 1, node.end_lineno - 1
        prefix = lines[start].encode()[: node.col_offset].decode()
        suffix = lines[end].encode()[node.end_col_offset :].decode()
        lines[start : end + 1] = [prefix + repr(overrides[name]) + suffix]
    return "".join(lines)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def input_size_constants(source: str) -> list[str]:
    """Integer constants, set by a literal or by arithmetic of literals (`N = 2048 * 2`), that only `get_inputs()`
    reads (directly or through constants derived from them): changing one changes the inputs' sizes and nothing the
    model or its init arguments depend on."""
    tree = ast.parse(source)
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

    inputs: set[str] = set()
    elsewhere: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "get_inputs":
            inputs |= closure(_names(stmt))
        elif not _constant_assignment(stmt):
            elsewhere |= closure(_names(stmt))  # the Model, get_init_inputs, helpers: anything but get_inputs
    return [n for n in nodes if n in inputs and n not in elsewhere and (_literal_int(nodes[n]) or 0) >= 2]


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
    """`NAME = expr` at module level: a constant definition (what it reads is followed through `uses`)."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    return isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None


def _odd_size(value: int) -> int:
    """A nearby, different, mostly odd size no larger than about the original: 4096 -> 3583, 16 -> 13, 4 -> 5."""
    if value < 8:
        return value + 1
    new = value - value // 8 - 1
    return new - 1 if new % 2 == 0 else new


def derive_alternatives(source: str) -> list[dict[str, int]]:
    """One alternative shape set for a KernelBench-style reference: every constant that only sizes the inputs,
    moved to a nearby odd size. Empty when no constant qualifies. The reference must still be run at it (audits
    and the verifier do) before a candidate is judged there."""
    values = module_constants(source)
    names = input_size_constants(source)
    return [{n: _odd_size(int(values[n])) for n in names}] if names else []


def small_size(value: int) -> int:
    """A small size for a large one: sizes up to 64 stay; larger ones become odd and about a sixteenth (at least
    33), so a (4096, 4096) problem runs at (257, 257) and kernels meet tails that a power of two would hide."""
    if value <= 64:
        return value
    return max(33, value // 16) | 1


def small_shapes(source: str) -> dict[str, int]:
    """The input-only size constants of a reference and their small sizes (only those that shrink): the shapes the
    sanitizer runs a problem at, and an audit's derived shapes for a task that declares no small ones. Empty when
    nothing shrinks or the source does not parse."""
    try:
        values, names = module_constants(source), input_size_constants(source)
    except (SyntaxError, ValueError):
        return {}
    small = {n: small_size(int(values[n])) for n in names}
    return {n: v for n, v in small.items() if v < int(values[n])}


KEPT_FACTOR = 32
"""A size check keeps each size's power-of-two factor up to this: vectorised loads (float4), warp-wide steps and tiles
of 16 or 32 that a problem's own sizes divide stay valid, so only a size baked into the kernel fails there."""


@dataclass(frozen=True)
class SizeCheck:
    """The sizes a default size check runs a problem at (`overrides`), or, when empty, why none could be derived."""

    overrides: dict[str, int] = field(default_factory=dict)
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
        values, names = module_constants(source), input_size_constants(source)
    except (SyntaxError, ValueError) as exc:
        return SizeCheck(why=f"the problem's module constants cannot be read ({type(exc).__name__})")
    if not names:
        return SizeCheck(why="no module-level integer constant (a literal of at least 2) sizes only the inputs: every "
                             "size also reaches the model, its weights or its init arguments, or is computed at run "
                             "time")
    return SizeCheck(overrides={n: _check_size(int(values[n])) for n in names})


def small_model_shapes(source: str) -> dict[str, int]:
    """`small_shapes` and, besides, every other literal integer constant above 64 (the model's widths, which reach its
    weights and init arguments) shrunk to about a sixteenth that keeps its power-of-two factor up to `KEPT_FACTOR`
    (`_check_size`: 8192 -> 512, so heads, groups and tiles still divide it): the sanitizer's first shapes, since a
    GEMM whose weights keep KernelBench's 8192 x 8192 takes minutes under racecheck even with a sixteenth of its
    batch. Empty when nothing beyond `small_shapes` shrinks or the source does not parse."""
    try:
        tree = ast.parse(source)
        inputs = small_shapes(source)
    except SyntaxError:
        return {}
    model = {}
    for name, node in _constant_nodes(tree).items():
        value = _literal_int(node)
        if name not in inputs and value is not None and value > 64:
            model[name] = _check_size(value)
    return {**inputs, **model} if model else {}
