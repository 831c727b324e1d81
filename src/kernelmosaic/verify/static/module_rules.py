"""Whole-module Python rules: imports, references and writes that are wrong wherever they appear.

These do not depend on what forward reaches: reading `sys.modules` in `__init__` or patching
`time.perf_counter` at import time is as much a hack as doing it in forward.
"""

from __future__ import annotations

import ast
import fnmatch

from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.pyscope import Hit, ModuleIndex
from kernelmosaic.verify.static.vocab import TRITON_WRAPPERS

__all__ = ["check_module", "classify_call", "NAMED_CALL_RULES"]

_MODULE_RULES = {
    "concurrency": {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess", "signal",
                    "sched", "torch.multiprocessing"},
    "dynamic-code": {"importlib", "ctypes", "cffi", "pickle", "marshal", "dill", "cloudpickle", "runpy", "code",
                     "codeop", "_ctypes", "types.FunctionType", "types.LambdaType", "types.CodeType",
                     "types.MethodType", "types.ModuleType", "types.new_class", "types.prepare_class",
                     "types.CellType", "types.FrameType", "types.TracebackType", "types.coroutine"},
    "reference-access": {"gc", "inspect", "__main__", "traceback", "kernelmosaic", "kernelbench", "pathlib",
                         "shutil", "glob", "io", "tempfile"},
    "monkeypatch": {"unittest.mock", "mock", "unittest", "torch.overrides", "torch.utils._python_dispatch"},
}
_REFERENCE_NAMES = {"Model", "get_inputs", "get_init_inputs"}

# Dotted-name patterns whose *call* (or, for modules, any use) is judged by a rule.
NAMED_CALL_RULES: list[tuple[str, list[str]]] = [
    ("reference-access", ["sys.modules*", "sys._getframe", "sys._current_frames", "sys.exc_info", "gc.*",
                          "inspect.*", "builtins.open", "io.*", "os.listdir", "os.scandir", "os.walk", "os.open",
                          "os.read", "os.fdopen", "builtins.__builtins__", "traceback.*", "pathlib.*",
                          "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.replace",
                          "os.symlink", "os.link", "os.chmod", "os.truncate", "os.write", "os.pwrite",
                          "os.mkfifo", "os.mknod", "os.ftruncate", "os.sendfile",
                          "os.copy_file_range", "os.chown", "os.utime",
                          # files through numpy and torch (a header written at import, then #included, would hide
                          # code from this analysis; a file read reaches what the reference wrote)
                          "numpy.fromfile", "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed",
                          "numpy.savetxt", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromregex", "numpy.memmap",
                          "numpy.lib.*", "numpy.DataSource", "torch.save", "torch.load", "torch.from_file",
                          "torch.UntypedStorage.from_file", "torch.TypedStorage.from_file", "torch.hub.*",
                          "torch.serialization.*"]),
    ("dynamic-code", ["builtins.exec", "builtins.eval", "builtins.compile", "builtins.__import__",
                      "builtins.globals", "builtins.vars", "builtins.locals", "builtins.breakpoint", "importlib*",
                      "ctypes*", "cffi*", "torch.ops.load_library", "torch.classes.load_library", "sys.settrace",
                      "sys.setprofile", "sys.addaudithook", "pickle.*", "marshal.*", "types.*"]),
    ("concurrency", ["os.fork", "os.forkpty", "os.system", "os.popen", "os.spawn*", "os.exec*", "os.kill",
                     "os.killpg", "os.posix_spawn*", "os.register_at_fork", "threading*", "multiprocessing*",
                     "concurrent*", "asyncio*", "subprocess*", "signal*", "torch.multiprocessing*"]),
    ("numerics-switch", ["torch.set_float32_matmul_precision", "torch.set_default_dtype",
                         "torch.set_default_tensor_type", "torch.set_flush_denormal",
                         "torch.use_deterministic_algorithms", "torch.backends.*", "torch.autocast",
                         "torch.cuda.amp.*", "torch.amp.*", "torch.set_default_device", "torch._C._set_*"]),
    ("streams-python", ["torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.Event", "torch.cuda.ExternalStream",
                        "torch.cuda.set_stream", "torch.cuda.set_per_process_memory_fraction",
                        "torch.cuda.memory.set_per_process_memory_fraction", "torch.cuda.set_device",
                        "torch.Stream", "torch.Event", "torch.cuda.StreamContext", "torch.cuda.streams.*",
                        # Allocator control: releasing cached blocks defeats poisoned-output checks.
                        "torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.cuda.caching_allocator_*",
                        "torch.cuda.memory.caching_allocator_*", "torch.cuda.memory._set_allocator_settings",
                        "torch.cuda.set_per_process_memory_fraction"]),
    ("cuda-graph", ["torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.make_graphed_callables",
                    "torch.cuda.graphs.*"]),
    ("rng-control", ["torch.manual_seed", "torch.seed", "torch.initial_seed", "torch.get_rng_state",
                     "torch.set_rng_state", "torch.random.*", "torch.cuda.manual_seed*", "torch.cuda.seed*",
                     "torch.cuda.get_rng_state*", "torch.cuda.set_rng_state*", "torch.cuda.random.*",
                     "torch.Generator", "numpy.random.seed", "numpy.random.set_state", "numpy.random.get_state",
                     "numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator",
                     "random.seed", "random.setstate", "random.getstate"]),
    ("timing-probe", ["time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.thread_time",
                      "time.*_ns", "time.clock_gettime", "datetime.datetime.now", "datetime.datetime.utcnow",
                      "torch.cuda.is_current_stream_capturing"]),
    ("env-tamper", ["os.putenv", "os.unsetenv", "os.chdir", "os.environ.update", "os.environ.setdefault", "os.environ.pop",
                    "os.environ.clear", "os.environ.popitem", "os.environ.__setitem__", "os.environ.__delitem__"]),
    ("monkeypatch", ["unittest.mock*", "mock.*", "torch.overrides.*", "torch.utils._python_dispatch.*",
                     "torch.nn.modules.module.register_module_*"]),
]
_STREAM_NAMES = {"Stream", "stream", "Event", "ExternalStream", "set_stream", "StreamContext"}
_FRAME_ATTRS = {"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame",
                "cr_frame", "ag_frame", "__globals__", "__subclasses__", "__builtins__", "__bases__", "__base__",
                "__mro__"}
_FILE_METHODS = {"tofile", "dump"}
"""Array methods that write a file (numpy's `ndarray.tofile`, `ndarray.dump`)."""
_DYNAMIC_ATTRS = {"__code__", "__dict__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__",
                  "__import__"}
_SIZE_NAMES = {"batch_size", "dim", "features", "in_features", "out_features", "in_channels", "out_channels",
               "seq_len", "hidden_size", "num_heads", "kernel_size", "M", "N", "K", "B", "L", "D", "H", "W"}


_READ_ONLY = {"is_available", "is_built", "version", "is_flash_attention_available", "get_device_name"}


_PLAIN_TYPES = {"types.SimpleNamespace", "types.MappingProxyType", "types.NoneType", "types.EllipsisType",
                "types.NotImplementedType", "types.GenericAlias", "types.UnionType"}
"""Names of `types` that make plain containers or name types: no code is made (blind round 12 held its kernels in a
`types.SimpleNamespace`); every other `types` name makes functions, code, modules or classes (`dynamic-code`)."""


def classify_call(q: str) -> str | None:
    """The rule a dotted callee belongs to, or None when no whole-module rule claims it."""
    if q.startswith("torch.backends.") and q.rsplit(".", 1)[-1] in _READ_ONLY:
        return None  # a query, not a switch
    if q in _PLAIN_TYPES:
        return None
    for rule, patterns in NAMED_CALL_RULES:
        if any(fnmatch.fnmatchcase(q, p) for p in patterns):
            return rule
    return None


def _import_rule(module: str) -> str | None:
    for rule, mods in _MODULE_RULES.items():
        if any(module == m or module.startswith(m + ".") for m in mods):
            return rule
    return None


def check_module(idx: ModuleIndex, policy: StaticPolicy) -> list[Hit]:
    hits: list[Hit] = []
    modelnew_methods = {id(n) for c in idx.classes.values() if c.name == "ModelNew" for n in c.body}
    for node in ast.walk(idx.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            hits.extend(_imports(idx, node, policy))
        elif isinstance(node, ast.Call):
            hits.extend(_call(idx, node, policy))
        elif isinstance(node, ast.Attribute):
            if node.attr in _FILE_METHODS and isinstance(idx.parent(node), ast.Call):
                hits.append(idx.hit("reference-access", node, f"`.{node.attr}()` writes an array to a file"))
            elif node.attr in _FRAME_ATTRS:
                hits.append(idx.hit("reference-access", node, f"`.{node.attr}` reaches frames, globals or classes"))
            elif node.attr in _DYNAMIC_ATTRS:
                hits.append(idx.hit("dynamic-code", node, f"`.{node.attr}` bypasses normal attribute access"))
            elif isinstance(node.ctx, ast.Load) and not isinstance(idx.parent(node), ast.Attribute | ast.Call):
                q = idx.resolve(node)
                if q and q.startswith("sys.modules"):
                    hits.append(idx.hit("reference-access", node, "`sys.modules` exposes every loaded module"))
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            hits.append(idx.hit("reference-access", node, "`__builtins__` lets code replace builtins"))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                hits.extend(_write(idx, t, policy))
        elif isinstance(node, ast.Global):
            hits.extend(_global(idx, node, id(_method_of(idx, node)) in modelnew_methods))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            hits.extend(_memoized(idx, node))
        elif isinstance(node, ast.ClassDef) and _intercepts_torch(idx, node):
            hits.append(idx.hit("monkeypatch", node, f"class `{node.name}` can intercept torch operations"))
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for base in node.bases:
                q = idx.resolve(base) or ""
                name = base.id if isinstance(base, ast.Name) else q
                if (name == "Model" and "Model" not in idx.classes) or q.endswith(".Model"):
                    hits.append(idx.hit("reference-access", base, "ModelNew inherits the reference Model"))
    if "ModelNew" not in idx.classes:
        for stmt in idx.tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew"
                                                    for t in stmt.targets):
                q = idx.resolve(stmt.value) or ""
                if q.endswith("Model") or (isinstance(stmt.value, ast.Name) and stmt.value.id == "Model"):
                    hits.append(idx.hit("reference-access", stmt, "ModelNew is bound to the reference Model"))
    return hits


def _imports(idx: ModuleIndex, node: ast.Import | ast.ImportFrom, policy: StaticPolicy) -> list[Hit]:
    if isinstance(node, ast.ImportFrom) and node.level:
        return [idx.hit("reference-access", node, "relative import reaches sibling modules, such as the problem")]
    hits = []
    if isinstance(node, ast.ImportFrom):
        mods = [node.module or ""]
        for a in node.names:
            if a.name in _REFERENCE_NAMES:
                hits.append(idx.hit("reference-access", node, f"imports `{a.name}` from `{node.module}`"))
            sub = _import_rule(f"{node.module}.{a.name}")
            if sub and not _import_rule(node.module or ""):
                hits.append(idx.hit(sub, node, f"imports `{node.module}.{a.name}`"))
    else:
        mods = [a.name for a in node.names]
    for mod in mods:
        rule = _import_rule(mod)
        if rule:
            hits.append(idx.hit(rule, node, f"imports `{mod}`"))
        elif mod.split(".")[0] not in policy.allowed_imports:
            hits.append(idx.hit("import-not-allowed", node, f"imports `{mod}`, which is not in the allow-list"))
    return hits


def _call(idx: ModuleIndex, node: ast.Call, policy: StaticPolicy) -> list[Hit]:
    q = idx.resolve(node.func)
    hits = []
    if q in ("builtins.setattr", "builtins.delattr") and node.args:
        target = idx.resolve(node.args[0])
        if target and not target.startswith("builtins."):  # `builtins` itself (the module) counts
            hits.append(idx.hit("monkeypatch", node, f"{q[9:]}() on module `{target}`"))
    elif q and q.startswith("torch.library."):
        if q not in TRITON_WRAPPERS and _library_targets_aten(node):  # a wrapped kernel names no operator
            hits.append(idx.hit("monkeypatch", node, f"`{q}` registers kernels for ATen operators"))
    elif q == "builtins.getattr" and node.args and idx.resolve(node.args[0]):
        hits.append(idx.hit("dynamic-code", node, "getattr() on a module with a computed name"))
    elif q:
        rule = classify_call(q)
        if rule == "env-tamper" and _env_key_ok(node, policy):
            rule = None
        if rule == "streams-python" and policy.allow_streams and q.rsplit(".", 1)[-1] in _STREAM_NAMES:
            rule = None
        if rule:
            hits.append(idx.hit(rule, node, f"calls `{q.removeprefix('builtins.')}`"))
    return hits


def _env_key_ok(node: ast.Call, policy: StaticPolicy) -> bool:
    keys = [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
    return bool(keys) and keys[0] in policy.allowed_env_writes


def _write(idx: ModuleIndex, target: ast.AST, policy: StaticPolicy) -> list[Hit]:
    if isinstance(target, ast.Tuple | ast.List):
        return [h for t in target.elts for h in _write(idx, t, policy)]
    if isinstance(target, ast.Subscript):
        q = idx.resolve(target.value) or ""
        if q == "os.environ":
            key = target.slice
            if isinstance(key, ast.Constant) and key.value in policy.allowed_env_writes:
                return []
            return [idx.hit("env-tamper", target, "writes os.environ")]
        if isinstance(target.value, ast.Call) and idx.resolve(target.value.func) in (
                "builtins.globals", "builtins.vars", "builtins.locals"):
            return [idx.hit("dynamic-code", target, "writes module globals through a dict")]
        return []
    if isinstance(target, ast.Attribute):
        q = idx.resolve(target)
        if not q:
            return []
        if q.startswith("torch.backends."):
            return [idx.hit("numerics-switch", target, f"sets `{q}`")]
        if q.startswith("os.environ"):
            return [idx.hit("env-tamper", target, f"sets `{q}`")]
        return [idx.hit("monkeypatch", target, f"assigns `{q}`, an attribute of another module")]
    return []


def _method_of(idx: ModuleIndex, node: ast.AST) -> ast.AST | None:
    cur = idx.parent(node)
    while cur is not None and not isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef):
        cur = idx.parent(cur)
    return cur


def _global(idx: ModuleIndex, node: ast.Global, in_modelnew: bool) -> list[Hit]:
    hits = []
    consts = {t.id for s in idx.tree.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)
              and isinstance(s.value.value, int | float) for t in s.targets if isinstance(t, ast.Name)}
    for name in node.names:
        if in_modelnew or name in consts or name in _SIZE_NAMES or name in _REFERENCE_NAMES:
            where = "a ModelNew method" if in_modelnew else "a function"
            hits.append(idx.hit("problem-globals-write", node, f"`global {name}` in {where}"))
    return hits


def _memoized(idx: ModuleIndex, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Hit]:
    params = [a for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs if a.arg not in ("self", "cls")]
    if not params and not fn.args.vararg:
        return []
    for dec in fn.decorator_list:
        q = idx.resolve(dec.func if isinstance(dec, ast.Call) else dec) or ""
        if q in ("functools.lru_cache", "functools.cache"):
            return [idx.hit("caching", dec, f"`{fn.name}` memoizes on its arguments (tensors hash by identity)")]
    return []


def _library_targets_aten(node: ast.Call) -> bool:
    """torch.library registrations are fine for the candidate's own namespace, not for aten/prims or unknown ones."""
    first = node.args[0] if node.args else next((k.value for k in node.keywords), None)
    if first is None:
        return False
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return True
    return first.value.split("::")[0] in ("aten", "prim", "prims", "_", "")


def _intercepts_torch(idx: ModuleIndex, cls: ast.ClassDef) -> bool:
    """Tensor subclasses and __torch_function__/__torch_dispatch__ hooks see (and can fake) every torch op."""
    if any((idx.resolve(b) or "") == "torch.Tensor" for b in cls.bases):
        return True
    return any(isinstance(s, ast.FunctionDef) and s.name in ("__torch_function__", "__torch_dispatch__")
               for s in cls.body)
