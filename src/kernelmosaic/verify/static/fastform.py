"""The fast form: CUDA kernels compiled at import by NVRTC through CuPy and launched on torch tensors' pointers.

A fast-form candidate builds its kernels with `cupy.RawKernel` / `cupy.RawModule` (seconds instead of a
`load_inline` build) and launches them inside `with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)`,
so they run on the stream the verifier times. Only those kernels are the candidate's own: the rest of CuPy is
library compute (`cupy-compute`, judged as torch-compute is) or reaches past the launch API (`fastform-api`: the
CUDA runtime and driver, memory pools, private modules). Streams other than torch's current one are `streams-python`.
The kernels' CUDA source goes through the same C++/CUDA rules as a `load_inline` source.
"""

from __future__ import annotations

import ast
import re

from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.sources import Extension, Opaque, resolve_source

__all__ = ["RAW_KERNEL", "RAW_MODULE", "EXTERNAL_STREAM", "find_raw_sources", "check_cupy", "on_current_stream",
           "is_current_stream_handle"]

RAW_KERNEL, RAW_MODULE, EXTERNAL_STREAM = "cupy.RawKernel", "cupy.RawModule", "cupy.cuda.ExternalStream"
_SCALARS = {f"cupy.{t}" for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                                  "float32", "float64", "intp", "uintp", "bool_")}
LAUNCH_API = {RAW_KERNEL, RAW_MODULE, EXTERNAL_STREAM} | _SCALARS
"""Everything of CuPy a fast-form candidate may name."""
_STREAMS = ("cupy.cuda.Stream", "cupy.cuda.Event", "cupy.cuda.stream", "cupy.cuda.get_current_stream",
            "cupy.cuda.graph", "cupy.cuda.Graph")
_RAW_KERNEL_ARGS = ["code", "name", "options", "backend"]


def _rule(q: str) -> str | None:
    if q in LAUNCH_API:
        return None
    if q.startswith(_STREAMS):
        return "streams-python"
    if q in ("cupy", "cupyx") or q.startswith(("cupy.cuda", "cupyx")) or any(p.startswith("_") for p in q.split(".")):
        return "fastform-api"
    return "cupy-compute"


def _message(rule: str, q: str) -> str:
    return {"streams-python": f"`{q}` makes or switches CUDA streams, events or graphs",
            "fastform-api": f"`{q}` is beyond the fast form's launch API (RawKernel, RawModule, ExternalStream)"
            if q not in ("cupy", "cupyx") else f"the `{q}` module is passed around as a value",
            "cupy-compute": f"`{q}` is CuPy library compute, not the candidate's own kernel"}[rule]


def is_current_stream_handle(idx: ModuleIndex, node: ast.AST) -> bool:
    """`torch.cuda.current_stream(...).cuda_stream`: the handle of the stream the verifier times."""
    return isinstance(node, ast.Attribute) and node.attr == "cuda_stream" and isinstance(node.value, ast.Call) \
        and idx.resolve(node.value.func) == "torch.cuda.current_stream"


def _is_current_external(idx: ModuleIndex, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and idx.resolve(node.func) == EXTERNAL_STREAM and len(node.args) >= 1 \
        and is_current_stream_handle(idx, node.args[0])


def check_cupy(idx: ModuleIndex, allow_streams: bool = False) -> list[Hit]:
    """Every name of CuPy the module uses, judged against the launch API; ExternalStream only over torch's stream.
    `allow_streams` (the policy's, for tasks about multi-stream overlap) accepts CuPy's streams and events as it
    accepts torch's; graphs stay rejected."""
    hits: list[Hit] = []
    for node in ast.walk(idx.tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("cupy", "cupyx"):
            for a in node.names:
                rule = _rule(f"{node.module}.{a.name}")
                if rule == "streams-python" and allow_streams and "graph" not in a.name.lower():
                    continue
                if rule:
                    hits.append(idx.hit(rule, node, _message(rule, f"{node.module}.{a.name}")))
            continue
        if not isinstance(node, ast.Attribute | ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        parent = idx.parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            continue  # judged as part of the longer dotted name
        q = idx.resolve(node) or ""
        if q.split(".")[0] not in ("cupy", "cupyx"):
            continue
        rule = _rule(q)
        if rule == "streams-python" and allow_streams and "graph" not in q.lower():
            continue
        if rule:
            hits.append(idx.hit(rule, node, _message(rule, q)))
        elif q == EXTERNAL_STREAM and isinstance(parent, ast.Call) and parent.func is node \
                and not allow_streams and not _is_current_external(idx, parent):
            hits.append(idx.hit("streams-python", parent, "an ExternalStream over something other than "
                                                          "`torch.cuda.current_stream().cuda_stream`"))
    return hits


def on_current_stream(idx: ModuleIndex, fn: ast.AST, launch: ast.Call) -> bool:
    """A fast-form launch runs on torch's current stream: inside `with ExternalStream(current handle)` (directly or
    through a name bound to one in the same function), or with such a `stream=` argument."""
    bound = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and _is_current_external(idx, n.value)
             for t in n.targets if isinstance(t, ast.Name)}

    def current(expr: ast.AST) -> bool:
        return _is_current_external(idx, expr) or (isinstance(expr, ast.Name) and expr.id in bound)

    for kw in launch.keywords:
        if kw.arg == "stream":
            return current(kw.value)
    cur = idx.parent(launch)
    while cur is not None and cur is not fn:
        if isinstance(cur, ast.With | ast.AsyncWith) and any(current(item.context_expr) for item in cur.items):
            return True
        cur = idx.parent(cur)
    return False


def _literal(idx: ModuleIndex, at: ast.AST, node: ast.AST, ext: Extension, what: str) -> str | None:
    try:
        return resolve_source(idx, at, node).text
    except Opaque as e:
        ext.opaque.append(f"{what}: {e}")
        return None


def find_raw_sources(idx: ModuleIndex) -> list[Extension]:
    """Every `cupy.RawKernel` / `cupy.RawModule` with its CUDA source resolved and the kernels Python launches."""
    fetched = sorted({re.sub(r"<.*", "", n.args[0].value) for n in ast.walk(idx.tree)
                      if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get_function"
                      and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)})
    out = []
    for node in ast.walk(idx.tree):
        if not isinstance(node, ast.Call):
            continue
        q = idx.resolve(node.func)
        if q not in (RAW_KERNEL, RAW_MODULE):
            continue
        ext = Extension(call=node, scope=idx.tree, name=q)
        args = dict(zip(_RAW_KERNEL_ARGS if q == RAW_KERNEL else [], node.args, strict=False))
        args.update({k.arg: k.value for k in node.keywords if k.arg})
        if "path" in args:
            ext.opaque.append(f"line {node.lineno}: RawModule(path=...) loads a prebuilt binary the analysis cannot see")
        if "code" in args:
            try:
                ext.cuda = resolve_source(idx, node, args["code"])
            except Opaque as e:
                ext.opaque.append(str(e))
        if "options" in args:
            ext.flags = (_literal(idx, node, args["options"], ext, "options") or "").split()
        if q == RAW_KERNEL:
            name = _literal(idx, node, args["name"], ext, "kernel name") if "name" in args else None
            ext.launched = [name.strip()] if name else []
        else:
            ext.launched = list(fetched)
        out.append(ext)
    return out
