"""A candidate's CUDA unit compiled as two: its device code by nvcc without any torch header, its host code against
the lean torch prelude, joined into one object. Standard library only.

A lean unit (`lean_unit.py`) still makes three front ends (cudafe++, cicc and the host compiler) parse ATen's tensor
headers (~4 s each on two cores), although only the host functions use them: the kernels see pointers and sizes.
`split` cuts the unit, by its top-level declarations, into
- a device unit: the includes that are not torch's, macros, types, constants, `__device__` and `__host__ __device__`
  functions and the kernels, compiled by nvcc with the candidate's flags (plus `-static-global-template-stub=false`,
  so that a kernel template's host stub can be named from the other object);
- a host unit: the same includes, macros and types, torch's headers (lean where `lean_unit` can serve them), each
  kernel declared, the host functions, and every `kernel<<<grid, block, shared, stream>>>(args)` lowered as cudafe++
  lowers it: the configuration pushed, then a call of the kernel (its host stub, defined in the device object), which
  pops it and launches; the call deduces template arguments and converts the arguments as the launch does. nvcc
  compiles it as a `.cpp` (the host compiler with nvcc's flags and no `__CUDACC__`).
The host unit is compiled first; the kernel template instances its object needs (its undefined symbols) become
explicit instantiations at the end of the device unit; every kernel symbol the host object needs must then be
defined by the device object, and `ld -r` joins the two into the build's object.

`split` returns None for what it cannot cut (an anonymous namespace holding kernels, device or constant variables,
a launch inside a kernel, extended `__device__` lambdas, a macro that defines kernels, thrust or CUB in host code,
pybind11 or `TORCH_LIBRARY`); the host object must not define a kernel's name itself;
and any failure of the two compiles or the symbol check falls back to the unit compiled whole (`nvcc_split`): so
what a failed build prints is always nvcc's own output for the unit as written, never this module's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

if __package__:
    from . import lean_unit
else:  # loaded by nvcc_split run as a script
    import lean_unit  # type: ignore[no-redef]

__all__ = ["SWITCH", "Units", "split", "launches", "base_name", "instantiations", "device_source", "build", "enabled"]

SWITCH = "KM_NVCC_UNITS"
"""`0`: never split a unit (the lean unit, then the unit as written)."""
DEVICE_SUFFIX, HOST_SUFFIX = ".km-device.cu", ".km-host.cpp"

_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10|caffe2|pybind11)/')
_REFUSE = re.compile(r"\bthrust::|\bcub::|PYBIND11_|\bpybind11\b|TORCH_LIBRARY|__managed__|#\s*include\s*[<\"](thrust|cub)/")
_QUALIFIERS = ("__global__", "__device__", "__host__", "__constant__", "__shared__")
_LAUNCH_HELPER = """#include <cuda_runtime.h>
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim = 1, size_t sharedMem = 0,
                                                struct CUstream_st* stream = 0);
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __cluster_dims__
#define __cluster_dims__(...)
#endif
#ifndef __maxnreg__
#define __maxnreg__(...)
#endif
"""
"""What a launch is lowered to (as cudafe++ lowers it): the configuration pushed, then a call of the kernel's host
stub, which pops it and launches. The runtime exports the function; nvcc declares it only for its own output. The
kernels' declarations keep their launch qualifiers, which the CUDA headers define only for nvcc's front end."""


@dataclass
class Units:
    device: str
    host: str
    kernels: set[str] = field(default_factory=set)
    """Every kernel's name (unqualified)."""
    templates: set[str] = field(default_factory=set)
    """The kernels that are templates."""


@dataclass
class _Item:
    kind: str
    """`pp` (a preprocessor line), `open`/`close` (a named namespace), `function`, `other` (a declaration to `;`)."""
    start: int
    end: int


def mask(source: str) -> str:
    """`source` with comments, string and character literals blanked (same length, newlines kept)."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and source.startswith('R"', i) and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', source[i:])
            if not m:
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = source.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
        elif c in "\"'":
            if c == "'" and i > 0 and source[i - 1].isalnum():  # a digit separator (1'000)
                i += 1
                continue
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        if c in "\"'":
            out[i] = out[j - 1] = c
        i = j
    return "".join(out)


def _items(masked: str) -> list[_Item] | None:
    """The top-level items of the unit (namespaces opened and closed as items of their own); None where the
    structure is not understood (unbalanced braces, an item that never ends)."""
    items: list[_Item] = []
    i, n, depth_ns = 0, len(masked), 0
    while i < n:
        if masked[i].isspace():
            i += 1
            continue
        if masked[i] == "#":  # a preprocessor line, with its continuations
            j = i
            while True:
                e = masked.find("\n", j)
                if e < 0:
                    e = n
                    break
                if masked[e - 1] != "\\":
                    break
                j = e + 1
            items.append(_Item("pp", i, e))
            i = e
            continue
        if masked[i] == "}":
            if depth_ns == 0:
                return None
            depth_ns -= 1
            items.append(_Item("close", i, i + 1))
            i += 1
            continue
        if masked[i] == ";":
            i += 1
            continue
        m = re.match(r"(?:inline\s+)?namespace\b\s*([A-Za-z_][\w:]*)?\s*\{", masked[i:])
        if m:
            items.append(_Item("open" if m.group(1) else "anon", i, i + m.end()))
            depth_ns += 1
            i += m.end()
            continue
        end, kind = _item_end(masked, i)
        if end is None:
            return None
        items.append(_Item(kind, i, end))
        i = end
    return items if depth_ns == 0 else None


def _item_end(masked: str, i: int) -> tuple[int | None, str]:
    """Where the declaration starting at `i` ends, and whether it is a function definition."""
    depth, j, n = 0, i, len(masked)
    while j < n:
        c = masked[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return j + 1, "other"
        elif c == "{" and depth == 0:
            close = _matching(masked, j)
            if close is None:
                return None, ""
            head = masked[i:j]
            if _is_function_head(head):
                return close + 1, "function"
            j = close + 1
            continue
        elif c == "#" and masked[j - 1] == "\n" and depth == 0:
            return None, ""  # a preprocessor line inside a declaration
        j += 1
    return None, ""


def _matching(masked: str, j: int) -> int | None:
    depth = 0
    for k in range(j, len(masked)):
        if masked[k] == "{":
            depth += 1
        elif masked[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return None


def _is_function_head(head: str) -> bool:
    body = re.sub(r"^\s*template\s*<.*?>\s*", "", head, flags=re.S)
    if "(" not in body or re.match(r"\s*(typedef\b|using\b|(struct|class|union|enum)\b)", body):
        return False
    depth = 0
    for c in body:  # an initializer (`int x[] = {...}`) has `=` outside parentheses
        depth += c in "(<"
        depth -= c in ")>"
        if c == "=" and depth == 0:
            return False
    return bool(re.search(r"\)\s*[\w\s:&*<>,()\-]*$", body))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\b\w+\b", text))


def _kernel_name(head: str) -> str | None:
    m = re.search(r"([A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(", re.sub(r"__launch_bounds__\s*\([^)]*\)", "", head))
    return m.group(1) if m else None


def split(source: str, name: str) -> Units | None:
    """The device and host units of `source` (the unit as written, file `name`), or None where it cannot be cut."""
    masked = mask(source)
    if _REFUSE.search(masked) or "<<<" not in masked:
        return None
    items = _items(masked)
    if items is None:
        return None
    device: list[str] = []
    host: list[str] = []
    kernels: set[str] = set()
    templates: set[str] = set()
    spaces: list[str] = []
    for it in items:
        text, m = source[it.start:it.end], masked[it.start:it.end]
        line = source.count("\n", 0, it.start) + 1
        where = lean_unit.line_directive(line, name)
        words = _words(m)
        if it.kind == "pp":
            if "__global__" in m:
                return None  # a macro that defines kernels: the host unit would compile their bodies as host code
            host.append(text + "\n")
            if not _TORCH_INCLUDE.match(m):
                device.append(text + "\n")
            continue
        if it.kind in ("open", "close", "anon"):
            if it.kind == "close":
                spaces.pop()
            else:
                spaces.append(it.kind)
            device.append(text + "\n")
            host.append(text + "\n")
            continue
        brace = m.find("{") if it.kind == "function" else -1
        head = m[:brace] if brace >= 0 else m
        qualifiers = {q for q in _QUALIFIERS if q in _words(head)}
        if it.kind == "function" and "<<<" in m and qualifiers & {"__global__", "__device__"}:
            return None  # a launch from device code
        if it.kind == "function" and re.search(r"\]\s*(\([^)]*\)\s*)?(mutable\s*)?__device__", m):
            return None  # an extended device lambda in host code
        if "__global__" in qualifiers:
            if "anon" in spaces:
                return None
            kernel = _kernel_name(head[head.find("__global__"):])
            if kernel is None:
                return None
            kernels.add(kernel)
            if re.match(r"\s*template\s*<", head):
                templates.add(kernel)
            own = re.sub(r"\bstatic\b", "", text[: len(head)])  # the host unit names the kernel: external linkage
            device.append(where + own + text[len(head):] + "\n")
            host.append(where + own.rstrip().rstrip(";") + ";\n")
        elif qualifiers & {"__constant__", "__shared__"} or ("__device__" in qualifiers and it.kind == "other"
                                                             and "(" not in head):
            return None  # a variable in device memory: the host unit could not name it
        elif "__device__" in qualifiers and "__host__" not in qualifiers and it.kind == "function":
            device.append(where + text + "\n")
        elif "__device__" in qualifiers:  # __host__ __device__ functions, device function declarations
            device.append(where + text + "\n")
            plain = it.kind == "function" and not words & {"static", "inline", "__forceinline__", "constexpr", "template"}
            host.append(where + ("static " if plain else "") + text + "\n")  # one external definition, the device
            # object's: the host unit's copy is its own (else `ld -r` finds the function defined twice)
        elif it.kind == "function":
            if "constexpr" in words:
                device.append(where + text + "\n")
            host.append(where + text + "\n")
        else:  # types, aliases, constants, declarations
            torchy = bool(words & {"torch", "at", "c10", "pybind11", "py"})
            constant = bool(words & {"const", "constexpr"}) or bool(re.match(
                r"\s*(template\s*<.*?>\s*)?(typedef|using|struct|class|union|enum)\b", m, re.S))
            if constant and not torchy:
                device.append(where + text + "\n")
            host.append(where + text + "\n")
    if not kernels:
        return None
    host_text = launches("".join(host))
    if host_text is None:
        return None
    return Units(device="".join(device), host=_LAUNCH_HELPER + host_text, kernels=kernels, templates=templates)


def launches(text: str) -> str | None:
    """`text` with every `callee<<<config>>>(args)` written as cudafe++ writes it, `((__cudaPushCallConfiguration(
    config)) ? (void)0 : callee(args))`: the same call of the kernel's host stub, with the same argument deduction and
    conversions; None where a launch cannot be delimited."""
    masked = mask(text)
    out, last = [], 0
    for m in re.finditer(r"<<<", masked):
        start = m.start()
        if start < last:
            return None
        callee_start = _callee_start(masked, start)
        close = masked.find(">>>", start + 3)
        if callee_start is None or close < 0:
            return None
        config = masked[start + 3:close]
        if config.count("(") != config.count(")") or not config.strip():
            return None
        k = close + 3
        while k < len(masked) and masked[k].isspace():
            k += 1
        if k >= len(masked) or masked[k] != "(":
            return None
        depth, end = 0, None
        for j in range(k, len(masked)):
            depth += masked[j] == "("
            depth -= masked[j] == ")"
            if depth == 0:
                end = j
                break
        if end is None:
            return None
        out.append(text[last:callee_start])
        out.append(f"((__cudaPushCallConfiguration({text[start + 3:close].strip()})) ? (void)0 : "
                   f"{text[callee_start:start].strip()}{text[k:end + 1]})")
        last = end + 1
    out.append(text[last:])
    return "".join(out)


def _callee_start(masked: str, at: int) -> int | None:
    """Where the launched expression before `<<<` at `at` starts: a name, `::`-qualified, with template arguments."""
    j = at
    while j > 0 and masked[j - 1].isspace():
        j -= 1
    while True:
        if j > 0 and masked[j - 1] == ">":  # template arguments
            depth, k = 0, j - 1
            while k >= 0:
                if masked[k] == ">":
                    depth += 1
                elif masked[k] == "<":
                    depth -= 1
                    if depth == 0:
                        break
                elif masked[k] in ";{}":
                    return None
                k -= 1
            if k < 0:
                return None
            j = k
            while j > 0 and masked[j - 1].isspace():
                j -= 1
        k = j
        while k > 0 and (masked[k - 1].isalnum() or masked[k - 1] == "_"):
            k -= 1
        if k == j:
            return None
        j = k
        if masked[max(j - 2, 0):j] == "::":
            j -= 2
            continue
        return j


def base_name(demangled: str) -> str:
    """A demangled function's own name: `void ns::k<float>(float*, int)` and `ns::k(float*)` give `k`."""
    depth, end = 0, len(demangled)
    for i, c in enumerate(demangled):
        depth += c == "<"
        depth -= c == ">"
        if c == "(" and depth == 0:
            end = i
            break
    name = re.sub(r"^void\s+", "", demangled[:end].strip())
    while name.endswith(">"):  # template arguments
        depth, k = 0, len(name) - 1
        while k >= 0:
            depth += name[k] == ">"
            depth -= name[k] == "<"
            if depth == 0:
                break
            k -= 1
        name = name[:k].rstrip()
    return name.split("::")[-1]


def instantiations(undefined: list[tuple[str, str]], templates: set[str]) -> list[str] | None:
    """Explicit instantiations for the kernel template instances a host object needs: `undefined` is its undefined
    symbols, (mangled, demangled). None where a demangled name cannot be written back as C++ (a lambda's type, an
    anonymous namespace)."""
    out = []
    for _mangled, text in undefined:
        if base_name(text) not in templates or "<" not in text.split("(", 1)[0]:
            continue
        if "{lambda" in text or "(anonymous namespace)" in text or "{unnamed" in text:
            return None
        if not text.startswith("void "):
            text = "void " + text
        out.append(f"template __global__ {text};")
    return out


_LEAN_MISSES = re.compile(r"no match for .operator|is not a member of .(torch|at|c10)|has no member named|"
                          r"was not declared in this scope|does not name a type|incomplete type")
"""Host compile errors that can come from what the lean prelude leaves out (then the host unit is compiled again
with torch's headers as the unit includes them)."""

_DEVICE_HEADERS = (
    (re.compile(r"\bHalf\b"), "c10/util/Half.h"),
    (re.compile(r"\bBFloat16\b"), "c10/util/BFloat16.h"),
    (re.compile(r"\b(Generic)?(Packed)?TensorAccessor(32|64)?\b|\b(Restrict|Default)PtrTraits\b"),
     "ATen/core/TensorAccessor.h"),
    (re.compile(r"\bC10_[A-Z0-9_]+"), "c10/macros/Macros.h"),
)
"""The light torch headers a device unit gets when its kernels, or their instances, name what they declare."""


def device_source(units: Units, extra: list[str]) -> str:
    """The device unit as compiled: the torch types its kernels name (`at::Half`, a packed accessor), the unit, and
    the explicit instantiations `extra`."""
    text = units.device + "".join(f"{line}\n" for line in extra)
    headers = [h for pattern, h in _DEVICE_HEADERS if pattern.search(mask(text))]
    if not headers:
        return text
    return "".join(f"#include <{h}>\n" for h in headers) + "namespace torch { using namespace at; }\n" + text


def _nm(obj: Path, *flags: str) -> list[str]:
    done = subprocess.run(["nm", *flags, str(obj)], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"nm {obj} failed")
    return [ln.split()[-1] for ln in done.stdout.splitlines() if ln.strip()]


def _demangled(symbols: list[str]) -> list[str]:
    if not symbols:
        return []
    done = subprocess.run(["c++filt"], input="\n".join(symbols), capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != len(symbols):
        raise OSError("c++filt failed")
    return lines


def _arg(args: list[str], *names: str) -> int | None:
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return i
    return None


def build(real: str, args: list[str], ops: frozenset[str] | None, run) -> tuple[int, bytes, bytes] | None:
    """Compile the unit nvcc's `args` name as two and join them into the object `-o` names: (0, stdout, stderr)
    when that worked, None when the unit cannot be cut or any step failed (why is kept in `<stem>.km-units.log`).
    `run(argv, label)` runs one nvcc command with its phases timed under `label` and returns (code, out, err)."""
    sources = [i for i, a in enumerate(args) if a.endswith(".cu") and not a.startswith("-")]
    out_at = _arg(args, "-o", "--output-file")
    if len(sources) != 1 or out_at is None:
        return None
    where = Path(args[sources[0]])
    target = args[out_at + 1]
    try:
        text = where.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    units = split(text, str(where))
    if units is None:
        return None
    host_text = (lean_unit.rewrite(units.host, ops, str(where)) if ops else None) or units.host
    stem = where.name[: -len(".cu")]
    device_src, host_src = where.with_name(stem + DEVICE_SUFFIX), where.with_name(stem + HOST_SUFFIX)
    log = where.with_name(stem + ".km-units.log")
    log.unlink(missing_ok=True)
    dep_at = _arg(args, "--dependency-output", "-MF")
    plain = [a for i, a in enumerate(args) if a != "--generate-dependencies-with-compile"
             and (dep_at is None or i not in (dep_at, dep_at + 1))]
    src_at = plain.index(args[sources[0]])
    tgt_at = plain.index(target, _arg(plain, "-o", "--output-file") or 0)
    with tempfile.TemporaryDirectory(prefix="km-units-") as keep:
        host_o, device_o, deps = Path(keep) / "host.o", Path(keep) / "device.o", Path(keep) / "host.d"
        host_args = list(plain)
        host_args[src_at], host_args[tgt_at] = str(host_src), str(host_o)
        host_args += ["-Xcompiler", "-Wno-attributes", "-MD", "-MF", str(deps)]
        try:
            host_src.write_text(host_text)
            code, out, err = run(host_args, "units host ")
            if code != 0 and host_text != units.host and _LEAN_MISSES.search((out + err).decode(errors="replace")):
                host_src.write_text(units.host)  # the lean prelude lacks something: torch's headers as written
                code, out, err = run(host_args, "units host full ")
            if code != 0:
                lean_unit.keep_log(log, out + err)
                return None
            own = _nm(host_o, "--defined-only")
            if any(base_name(d) in units.kernels for d in _demangled(own)):
                log.write_text("the host object defines a kernel's name itself\n")
                return None
            undefined = _nm(host_o, "-u")
            pairs = [(m, d) for m, d in zip(undefined, _demangled(undefined), strict=True)
                     if base_name(d) in units.kernels]
            needed = [m for m, _ in pairs]
            extra = instantiations(pairs, units.templates)
            if extra is None:
                log.write_text("a kernel template instance the host unit needs cannot be named\n")
                return None
            device_src.write_text(device_source(units, extra))
            dev_args = list(plain)
            dev_args[src_at], dev_args[tgt_at] = str(device_src), str(device_o)
            dev_args += ["-static-global-template-stub=false"]
            code, dout, derr = run(dev_args, "units device ")
            if code != 0:
                lean_unit.keep_log(log, dout + derr)
                return None
            defined = set(_nm(device_o, "--defined-only"))
            missing = [s for s in needed if s not in defined]
            if missing:
                log.write_text("kernels the host unit launches that the device unit does not define: "
                               + " ".join(missing) + "\n")
                return None
            joined = subprocess.run(["ld", "-r", "-o", target, str(device_o), str(host_o)], capture_output=True,
                                    timeout=120)
            if joined.returncode != 0:
                lean_unit.keep_log(log, joined.stderr)
                return None
            if dep_at is not None:
                _write_deps(Path(args[dep_at + 1]), target, where, host_src, deps)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            try:
                log.write_text(f"{type(exc).__name__}: {exc}\n")
            except OSError:
                pass
            return None
    return 0, out + dout, err + derr


def _write_deps(path: Path, target: str, source: Path, host_src: Path, host_deps: Path) -> None:
    """The build's dependency file: the object depends on the unit as written and every header the host unit read."""
    words = shlex.split(host_deps.read_text().replace("\\\n", " "))
    headers = [w for w in words[1:] if w != str(host_src) and not w.endswith(":")]
    path.write_text(f"{target}: " + " \\\n  ".join([str(source), *headers]) + "\n")


def enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0"
