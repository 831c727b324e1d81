"""C++/CUDA side: parses each extension source with tree-sitter-cuda and judges identifiers, not text.

Comments and string literals are their own nodes in the tree, so `// at::matmul` or `"cublas"` never
trip a rule. Macro bodies are parsed on their own, since tree-sitter keeps them as raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter
import tree_sitter_cuda

from kernelmosaic.verify.static.aten_ops import names_operator, operator_names
from kernelmosaic.verify.static.cuda_tensors import TensorTyping, iter_nodes, strip_templates
from kernelmosaic.verify.static.cuda_vocab import LAUNCHERS, identifier_rule, qualified_rule
from kernelmosaic.verify.static.policy import StaticPolicy
from kernelmosaic.verify.static.pyscope import Hit
from kernelmosaic.verify.static.sources import Extension, Text
from kernelmosaic.verify.static.vocab import ATEN_ALLOWED, CPP_METHODS_ALLOWED, TENSOR_METHODS_COMPUTE

__all__ = ["check_extension"]

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
_SKIP = {"comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"}
_ARITH = {"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&", "|", "^"}
_COMPOUND = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="}
_STREAM_ONLY = {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "cudaEventCreate",
                "cudaEventCreateWithFlags", "cudaEventRecord", "cudaEventElapsedTime", "cudaStreamWaitEvent",
                "getStreamFromPool", "CUDAStreamGuard", "CUDAEvent"}


@dataclass
class _State:
    """What one extension's sources define and do, gathered across cpp and cuda sources."""

    hits: list[Hit] = field(default_factory=list)
    kernels: dict[str, tuple[int, str]] = field(default_factory=dict)
    """__global__ kernel name -> candidate line and text of its definition."""
    referenced: set[str] = field(default_factory=set)
    aten: bool = False
    ns_alias: dict[str, str] = field(default_factory=dict)
    open_ns: set[str] = field(default_factory=set)
    using: dict[str, str] = field(default_factory=dict)
    cuda: bool = False
    """The extension has CUDA sources: host threads there are `streams-cuda`, not `host-threads`."""
    defined: set[str] = field(default_factory=set)
    """Every function the extension's sources declare or define (an unqualified call of one is the candidate's own)."""


_PRAGMA = re.compile(rb"^[ \t]*#[ \t]*pragma\b(?:[^\n]*\\\n)*[^\n]*", re.M)
_ALIGN = re.compile(rb"\b__align__\s*\(\s*\w+\s*\)")


def _parseable(src: bytes) -> bytes:
    """The source as the grammar can read it, every byte at its place: `#pragma` lines (`#pragma unroll` as the body
    of a brace-less `for`, which nvcc takes and the grammar does not) and `__align__(N)` qualifiers blanked out. No
    rule reads either."""
    def blank(m: re.Match[bytes]) -> bytes:
        return re.sub(rb"[^\n]", b" ", m.group(0))

    return _ALIGN.sub(blank, _PRAGMA.sub(blank, src))


class _Source(TensorTyping):
    """One parsed source text, with rows mapped back to candidate lines."""

    def __init__(self, text: Text, filename: str, st: _State, policy: StaticPolicy, base_row: int = 0,
                 raw: str | None = None):
        self.is_macro = raw is not None
        self.src = (raw if raw is not None else text.text).encode()
        self.rows = self.src.decode().splitlines()
        self.text, self.filename, self.st, self.policy, self.base_row = text, filename, st, policy, base_row
        starts, pos = [], 0
        for row in (text.text.splitlines(keepends=True) or [""]):
            starts.append(pos)
            pos += len(row)
        self.row_starts = starts
        self.tree = _PARSER.parse(_parseable(self.src))

    def t(self, node) -> str:
        return self.src[node.start_byte:node.end_byte].decode(errors="replace")

    def _line(self, node) -> int:
        r = node.start_point[0] + self.base_row
        return self.text.line_of(self.row_starts[max(0, min(r, len(self.row_starts) - 1))]) if self.text.pieces else 0

    def _snippet(self, node) -> str:
        row = node.start_point[0]
        return (self.rows[row].strip() if row < len(self.rows) else "")[:160]

    def hit(self, rule: str, node, message: str) -> None:
        self.st.hits.append(Hit(rule=rule, line=self._line(node), message=message, snippet=self._snippet(node)))

    def run(self) -> None:
        if self.tree.root_node.has_error and not self.is_macro:
            self.hit("cuda-parse-incomplete", self._first_error(self.tree.root_node),
                     "part of the extension source did not parse; it was analyzed only partly")
        stack = [(self.tree.root_node, False, set())]
        while stack:
            node, device, tensors = stack.pop()
            if node.type in _SKIP:
                continue
            tensors = self.scope_tensors(node, tensors)
            if node.type == "function_definition":
                device = any(c.type in ("__global__", "__device__") for c in node.children)
                self._library_impl(node)
                if any(c.type == "__global__" for c in node.children):
                    name = self._fn_name(node)
                    if name:
                        self.st.kernels[name] = (self._line(node), self._snippet(node))
            elif node.type == "ERROR":
                self._error_region(node)
            self._visit(node, device, tensors)
            stack.extend((c, device, tensors) for c in reversed(node.children))

    def _error_region(self, node) -> None:
        """Inside a region tree-sitter could not parse, `at :: matmul` arrives as loose tokens: rejoin them."""
        leaves = [n for n in iter_nodes(node) if not n.children and not _inside(n, _SKIP, node)]
        leaves.sort(key=lambda n: n.start_byte)
        i = 0
        while i < len(leaves):
            j = i
            while j + 2 < len(leaves) and leaves[j + 1].type == "::" and leaves[j + 2].type.endswith("identifier"):
                j += 2
            if j > i and leaves[i].type.endswith("identifier"):
                parts = [self.t(leaves[k]) for k in range(i, j + 1, 2)]
                name = self._expand("::".join(parts))
                rule = qualified_rule(name.split("::"))
                if rule:
                    self._rule(rule, leaves[i], name, name.split("::")[-1])
                elif name.split("::")[0] in ("at", "torch"):
                    self._aten_name(leaves[i], name.split("::"))
            i = j + 1

    def _first_error(self, node):
        for c in node.children:
            if c.type == "ERROR" or c.is_missing:
                return c
            if c.has_error:
                return self._first_error(c)
        return node

    def _macro_names(self, node, ty: str, body: str) -> None:
        """A macro that names a namespace (`#define NS at`) is an alias of it; a name pasted together behind an ATen
        namespace (`NS::kind##mm`) is an ATen call this analysis cannot name (`at::k##T`, a dtype, is allowed)."""
        name = node.child_by_field_name("name")
        if ty == "preproc_def" and name is not None and re.fullmatch(r"\s*[A-Za-z_][\w:]*\s*", body):
            self.st.ns_alias[self.t(name)] = body.strip()
        for m in re.finditer(r"([A-Za-z_]\w*(?:\s*::\s*\w+)*)\s*::\s*(\w*)\s*##", body):
            root = self._expand(re.sub(r"\s", "", m.group(1))).split("::")[0]
            if root in ("at", "torch") and m.group(2) != "k":
                self._aten(node, f"builds an ATen name by token pasting (`{m.group(0).strip()}`)")
        params = node.child_by_field_name("parameters") if ty == "preproc_function_def" else None
        names = set(re.findall(r"\w+", self.t(params))) if params is not None else set()
        for m in re.finditer(r"((?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*\w+)*)\s*::\s*(\w+)\b(?!\s*::)", body):
            root = self._expand(re.sub(r"\s", "", m.group(1))).split("::")[0]
            if root in ("at", "torch") and m.group(2) in names:
                self._aten(node, f"names an ATen function by a macro parameter (`{m.group(0).strip()}`)")

    def declared(self) -> set[str]:
        """Names of the functions and macros this source declares or defines (prototypes, definitions, templates)."""
        functions = {self.t(d) for n in iter_nodes(self.tree.root_node) if n.type == "function_declarator"
                     for d in n.children[:1] if d.type in ("identifier", "field_identifier")}
        macros = {self.t(n.child_by_field_name("name")) for n in iter_nodes(self.tree.root_node)
                  if n.type in ("preproc_def", "preproc_function_def") and n.child_by_field_name("name") is not None}
        return functions | macros

    def _fn_name(self, fn) -> str:
        for c in fn.children:
            if c.type == "function_declarator":
                for d in c.children:
                    if d.type in ("identifier", "field_identifier"):
                        return self.t(d)
        return ""

    def _visit(self, node, device: bool, tensors: set[str]) -> None:
        ty = node.type
        if ty == "namespace_alias_definition":
            m = re.match(r"namespace\s+(\w+)\s*=\s*([\w:\s]+);?", self.t(node))
            if m:
                self.st.ns_alias[m.group(1)] = re.sub(r"\s", "", m.group(2))
        elif ty == "using_declaration":
            text = self.t(node)
            m = re.match(r"using\s+namespace\s+([\w:]+)", text)
            if m:
                self.st.open_ns.add(self._expand(m.group(1)).split("::")[0])
            m = re.match(r"using\s+([\w:]+)::(\w+)\s*;", text)
            if m:
                self.st.using[m.group(2)] = self._expand(m.group(1))
        elif ty in ("preproc_def", "preproc_function_def"):
            body = next((c for c in node.children if c.type == "preproc_arg"), None)
            if body is not None:
                self._macro_names(node, ty, self.t(body))
                sub = _Source(self.text, self.filename, self.st, self.policy, base_row=node.start_point[0] + self.base_row,
                              raw="void __km_macro__() {\n" + self.t(body).replace("\\\n", " \n") + "\n;}")
                sub.base_row -= 1
                sub.run()
        elif ty == "declaration":
            self._stored_tensor(node)
        elif ty == "qualified_identifier" and node.parent is not None and node.parent.type != "qualified_identifier":
            self._qualified(node)
        elif ty in ("identifier", "type_identifier", "field_identifier"):
            self._identifier(node, device)
        elif ty == "call_expression":
            self._call(node, device, tensors)
        elif not device and ty == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and op.type in _ARITH and any(self._is_tensor(c, tensors) for c in node.children):
                self._aten(node, f"tensor arithmetic `{self.t(node)[:40]}` in host code")
        elif not device and ty == "assignment_expression":
            op = node.child_by_field_name("operator")
            left = node.child_by_field_name("left")
            if op is not None and op.type in _COMPOUND and left is not None and self.t(left) in tensors:
                self._aten(node, f"in-place tensor arithmetic `{self.t(node)[:40]}` in host code")
        elif not device and ty == "unary_expression":
            arg = node.child_by_field_name("argument")
            if arg is not None and self._is_tensor(arg, tensors) and self.t(node)[:1] == "-":
                self._aten(node, "tensor negation in host code")

    def _library_impl(self, fn) -> None:
        """TORCH_LIBRARY_IMPL(aten, ...) replaces ATen's kernels for every caller, the reference included."""
        if self._fn_name(fn) in ("TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT", "TORCH_LIBRARY"):
            decl = next((c for c in fn.children if c.type == "function_declarator"), None)
            params = decl.child_by_field_name("parameters") if decl is not None else None
            first = self.t(params).strip("()").split(",")[0].strip() if params is not None else ""
            if first in ("aten", "prim", "prims", "_"):
                self.hit("monkeypatch", fn, f"registers kernels into the `{first}` namespace")

    def _stored_tensor(self, node) -> None:
        """A static or file-scope tensor survives between calls: a place to keep old outputs."""
        typ = node.child_by_field_name("type")
        if typ is None or "Tensor" not in self.t(typ) or any(
                c.type == "function_declarator" for c in node.children):
            return
        static = any(c.type == "storage_class_specifier" and self.t(c) == "static" for c in node.children)
        global_scope = node.parent is not None and node.parent.type in ("translation_unit", "declaration_list")
        if static or global_scope:
            self.hit("caching", node, "a static or global tensor keeps state between calls")

    def _expand(self, name: str) -> str:
        parts = name.lstrip(":").split("::")  # `::at::mm` is `at::mm` qualified from the global namespace
        if parts[0] in self.st.ns_alias:
            parts = self.st.ns_alias[parts[0]].split("::") + parts[1:]
        return "::".join(parts)

    def _aten(self, node, what: str) -> None:
        self.st.aten = True
        if self.policy.action("aten-compute-in-extension") == "reject":
            tail = ("; write that step as a kernel of your own, or judge under `--policy kernelbench`, which allows "
                    "PyTorch compute and counts it in PyTorch's share of the time")
        else:
            tail = "; allowed under this policy, counted as PyTorch compute"
        self.hit("aten-compute-in-extension", node,
                 f"{what} (line {self._line(node)}): ATen does this work in the extension's host code{tail}")

    def _qualified(self, node) -> None:
        name = self._expand(strip_templates(self.t(node)))
        parts = name.split("::")
        rule = qualified_rule(parts)
        if rule:
            self._rule(rule, node, name, parts[-1])
            return
        if parts[:2] == ["torch", "nn"]:
            self._aten(node, f"uses `{name}`, a torch::nn module or function")
            return
        if parts[0] not in ("at", "torch"):
            return
        # Judged by name, not by node type: in ambiguous code tree-sitter may parse `at::matmul` as a type.
        self._aten_name(node, parts)

    def _aten_name(self, node, parts: list[str]) -> None:
        last = parts[-1]
        if re.match(r"k[A-Z]", last) or last[:1].isupper() or last in ATEN_ALLOWED \
                or "::".join(parts) in self.policy.allowed_torch_ops:
            return
        if len(parts) > 2 and parts[1] in ("cuda", "vec") and "native" not in parts:
            return
        if "numeric_limits" in parts:
            return
        if (ops := operator_names()) is not None and not names_operator(parts, ops):
            return  # ATen's utilities: shape arithmetic (`at::infer_size`), thread queries (`at::get_thread_num`)
        self._aten(node, f"calls `{'::'.join(parts)}`")

    def _rule(self, rule: str, node, name: str, last: str) -> None:
        if rule == "host-threads" and self.st.cuda:  # threads that can enqueue device work after a reply
            rule = "streams-cuda"
        if rule == "streams-cuda" and self.policy.allow_streams and last in _STREAM_ONLY:
            return
        if rule == "aten-compute-in-extension":
            self._aten(node, f"uses `{name}`")
            return
        self.hit(rule, node, f"uses `{name}`")

    def _identifier(self, node, device: bool) -> None:
        name = self.t(node)
        if node.parent is not None and node.parent.type in ("qualified_identifier", "function_declarator"):
            return
        self.st.referenced.add(name)
        rule = identifier_rule(name)
        if rule:
            self._rule(rule, node, name, name)

    def _tensor_argument(self, call, tensors: set[str]) -> bool:
        """Some argument of the call is a name declared as a tensor."""
        return any(a.type == "identifier" and self.t(a) in tensors
                   for a in (call.child_by_field_name("arguments") or call).children)

    def _call(self, node, device: bool, tensors: set[str]) -> None:
        fn = node.child_by_field_name("function")
        if fn is None:
            return
        if any(c.type == "kernel_call_syntax" for c in node.children):
            return
        if fn.type == "identifier":
            name = self.t(fn)
            if device and name == "printf":
                self.hit("printf-in-kernel", node, "printf in device code")
            elif not device and name in self.st.using:
                self._aten_name(node, self.st.using[name].split("::") + [name])
            elif not device and self.st.open_ns & {"at", "torch"} and name in TENSOR_METHODS_COMPUTE \
                    and self._tensor_argument(node, tensors):
                self._aten(node, f"calls `{name}` from an opened ATen namespace")
            elif not device and name not in self.st.defined and operator_names() is not None \
                    and self._tensor_argument(node, tensors):
                # argument-dependent lookup: an unqualified call with a tensor argument finds `at::<name>`
                self._aten_name(node, ["at", name])
            elif name in LAUNCHERS:
                self.st.referenced.update(self.t(i) for i in iter_nodes(node) if i.type == "identifier")
        elif fn.type == "field_expression" and not device:
            field = fn.child_by_field_name("field")
            if field is not None and field.type == "template_method":
                field = field.child_by_field_name("name") or field
            name = self.t(field) if field is not None else ""
            recv = fn.child_by_field_name("argument")
            if recv is not None and self.is_simd(recv, tensors):
                return  # a SIMD register's `.exp()`: eight floats in a register, no tensor
            if (name in TENSOR_METHODS_COMPUTE or name == "forward" or _operator_method(name)) \
                    and name not in CPP_METHODS_ALLOWED and name not in self.policy.allowed_torch_ops:
                self._aten(node, f"calls tensor method `.{name}()`")
            elif name == "attr":
                self.hit("dynamic-code", node, "reads a Python attribute from C++ (`.attr(...)`)")


_STD_MEMBERS = {"data", "size", "empty", "fill", "real", "imag", "detach", "copy", "set", "resize", "index", "conj",
                "to", "view", "item", "swap", "wait", "count", "lock", "load", "store", "reset", "get"}
"""Member functions of the standard library's types (containers, `std::complex`, `std::thread`, atomics) whose names
are also ATen operators: on an object of unknown type they are not taken for tensor compute."""


def _operator_method(name: str) -> bool:
    """A method named like an ATen operator (`.inner()`, `.nansum()`, `.clamp_min_()`): tensor compute on whatever
    receiver, unless the name is also a standard library member (`_STD_MEMBERS`)."""
    ops = operator_names()
    base = name[:-1] if name.endswith("_") else name
    return ops is not None and (name in ops or base in ops) and name not in _STD_MEMBERS and base not in _STD_MEMBERS


def _inside(node, types: set[str], stop) -> bool:
    """Whether a node lies within a node of one of `types` (a comment or string), looking up to `stop`."""
    cur = node
    while cur is not None and cur != stop:
        if cur.type in types:
            return True
        cur = cur.parent
    return False


def check_extension(ext: Extension, filename: str, policy: StaticPolicy) -> list[Hit]:
    """Hits for one extension's cpp and cuda sources (line numbers are candidate lines)."""
    st = _State(cuda=bool(ext.cuda.text.strip()))
    sources = [_Source(text, filename, st, policy) for text in (ext.cpp, ext.cuda) if text.text.strip()]
    for source in sources:
        st.defined.update(source.declared())
    for source in sources:
        source.run()
    st.referenced.update(ext.launched)
    unlaunched = {k: line for k, line in st.kernels.items() if k not in st.referenced}
    if len(unlaunched) < len(st.kernels):
        return st.hits  # an unused kernel beside launched ones is dead code; the run-time census sees what ran
    for name, (line, snippet) in unlaunched.items():
        st.hits.append(Hit(rule="kernel-defined-not-launched", line=line, snippet=snippet, message=(
            f"kernel-defined-not-launched (line {line}): __global__ `{name}` is never launched and the extension "
            f"launches no kernel of its own{' (ATen does the work)' if st.aten else ''}; launch it from the bound "
            f"function (`{name}<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(...)`)")))
    return st.hits
