"""nvcc with its host and device front ends side by side: what torch's ninja runs as nvcc for a candidate's CUDA unit
(`PYTORCH_NVCC`, set by `loader.BuildRecorder`). Standard library only.

nvcc compiles a `.cu` file as one sequence: the device preprocessing, the host preprocessing, `cudafe++` (the host
front end), `cicc` (the device front end and optimizer), `ptxas`, `fatbinary`, and the host compiler on cudafe++'s
output. Each front end parses every header the file includes; for a `load_inline` unit with `torch/extension.h` that
is ~13 s each on the H200 host (cudafe++ 13 s, cicc 14 s, host compiler 13 s). The two front ends do not need each
other: the one thing cicc reads from cudafe++ is the translation unit's module id (a name used in the mangled names
of internal symbols, the same on both sides). So this runs exactly the commands nvcc itself lists (`nvcc -dryrun`),
in nvcc's environment, with the module id written first for both (cudafe++ reads it instead of generating it), the
host chain beside the device chain, and the host compiler after both: the sequence's wall time falls from the sum of
the front ends to the longer of them, with no flag or source of the candidate's changed.

What the build reports is nvcc's: the output of each command in nvcc's order up to the first that failed (a command
that nvcc would not have reached is stopped and its output dropped), and that command's exit status; a tool killed by
a signal is reported as nvcc reports it. Anything but a plain single-file compile, or a dry run whose commands are
not of the expected shape, runs the real nvcc unchanged. `KM_NVCC_SPLIT=0` does too (the verify setting
`split_nvcc`). `-time FILE` is kept: the phases are appended to FILE in nvcc's own format.

Before any of that, a unit is first compiled as two (`unit_split.py`: its device code without torch's headers, its
host code against the torch declarations it names; phases `units host <phase>` and `units device <phase>` in FILE),
then, where that cannot be done or fails, in its lean form (`lean_unit.py`; phases `lean <phase>`): the first that
compiles gives the build's object and output; otherwise the unit as written is compiled as above and reported alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__:  # imported (the worker, tests)
    from . import lean_unit, unit_split
else:  # run by torch's ninja as `python -I nvcc_split.py` (isolated: its own folder is not on the path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import lean_unit
    import unit_split

__all__ = ["main", "plan", "Step"]

REAL_NVCC = "KM_REAL_NVCC"
"""The environment variable naming the nvcc this stands in for (torch's `CUDA_HOME/bin/nvcc`)."""
SWITCH = "KM_NVCC_SPLIT"
"""`0`: run the real nvcc unchanged."""

_HEADER = "source file name , phase name , phase input files , phase output file , arch , tool, metric , unit\n"
_ENV_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_QUOTED_OUT = re.compile(r'\s-o\s+"([^"]+)"')
_NOT_SPLIT = {"-E", "-M", "-MM", "--preprocess", "--generate-dependencies", "-dryrun", "--dryrun", "-run", "--run",
              "-link", "--link", "-lib", "--lib", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin",
              "-dlink", "--device-link", "-cuda", "--cuda", "-optix-ir", "-lto", "-dc", "--device-c",
              "-keep", "--keep", "-keep-dir", "--keep-dir", "-v", "--verbose", "-save-temps", "--save-temps"}


@dataclass
class Step:
    order: int
    """Its place in nvcc's own sequence (output and failures are reported in this order)."""
    phase: str
    """nvcc's name for it in `-time` tables (`cudafe++`, `cicc`, `gcc (preprocessing 4)`, ...)."""
    command: str
    """The shell command nvcc listed (run with nvcc's environment prelude)."""
    seconds: float = 0.0
    returncode: int | None = None
    output: tuple[bytes, bytes] = (b"", b"")


@dataclass
class Plan:
    env: dict[str, str]
    """The environment nvcc gives its commands: ours with nvcc's assignments (PATH, CICC_PATH, ...)."""
    host: list[Step]
    device: list[Step]
    final: Step
    module_id: tuple[Path, str]
    """(file, id): written before either chain starts."""
    source: str = ""
    steps: list[Step] = field(default_factory=list)


def main(argv: list[str]) -> int:
    real = os.environ.get(REAL_NVCC) or "nvcc"
    args, table = _without_time(argv)
    if unit_split.enabled() and _plain_compile(args):  # device code apart from torch's headers, host code lean
        done = unit_split.build(real, args, lean_unit.torch_ops(args) if os.environ.get(lean_unit.SWITCH, "1") != "0"
                                else None, lambda a, label: _compile(real, a, table, label))
        if done is not None:
            sys.stdout.buffer.write(done[1])
            sys.stderr.buffer.write(done[2])
            return 0
    lean = lean_unit.lean_args(args) if os.environ.get(lean_unit.SWITCH, "1") != "0" else None
    if lean is not None:  # the unit against the torch declarations it names; as written when that does not compile
        code, out, err = _compile(real, lean, table, label="lean ")
        if code == 0:
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(err)
            return 0
        lean_unit.keep_log(lean_unit.log_path(lean), out + err)
    if os.environ.get(SWITCH, "1") == "0" or not _plain_compile(args):
        os.execvp(real, [real, *argv])
    with tempfile.TemporaryDirectory(prefix="km-nvcc-") as keep:
        found = plan(real, args, Path(keep))
        if found is None:
            os.execvp(real, [real, *argv])
        code, out, err = _run(found, table)
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return code


def _compile(real: str, args: list[str], table: str | None, label: str) -> tuple[int, bytes, bytes]:
    """Exit status, stdout and stderr of compiling `args` (split where it can be, else the real nvcc), its phases
    appended to `table` named with `label` first."""
    with tempfile.TemporaryDirectory(prefix="km-nvcc-") as keep:
        own, inter = Path(keep) / "time.csv", Path(keep) / "i"
        inter.mkdir()
        found = plan(real, args, inter) if os.environ.get(SWITCH, "1") != "0" and _plain_compile(args) \
            else None
        if found is not None:
            result = _run(found, str(own))
        else:
            done = subprocess.run([real, *args, "-time", str(own)], capture_output=True)
            result = (done.returncode, done.stdout, done.stderr)
        if table and own.is_file():
            _append_rows(Path(table), own, label)
    return result


def _without_time(argv: list[str]) -> tuple[list[str], str | None]:
    """argv less nvcc's `-time FILE` (the dry run would not time anything), and FILE."""
    out, table, skip = [], None, False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a in ("-time", "--time") and i + 1 < len(argv):
            table, skip = argv[i + 1], True
        elif a.startswith(("-time=", "--time=")):
            table = a.split("=", 1)[1]
        else:
            out.append(a)
    return out, table


def _plain_compile(args: list[str]) -> bool:
    """One `.cu` file compiled to one object (`-c ... -o X`), nothing nvcc treats as another mode."""
    if not ({"-c", "--compile"} & set(args)) or "-o" not in args and "--output-file" not in args:
        return False
    if any(a in _NOT_SPLIT or a.split("=", 1)[0] in _NOT_SPLIT for a in args):
        return False
    return sum(a.endswith(".cu") and not a.startswith("-") for a in args) == 1


def plan(real: str, args: list[str], keep: Path) -> Plan | None:
    """The steps of nvcc's own sequence for `args` (from its dry run, intermediates in `keep`), split into the host
    chain, the device chain and the final host compile; None when the sequence is not the expected one."""
    try:
        dry = subprocess.run([real, "-dryrun", "-keep", "-keep-dir", str(keep), *args], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if dry.returncode != 0:
        return None
    lines = [ln[3:].strip() for ln in dry.stderr.splitlines() if ln.startswith("#$ ")]
    env, commands, depfile = dict(os.environ), [], None
    for ln in lines:
        if ln.startswith("-- Filter Dependencies --"):
            depfile = ln.split(">", 1)[1].strip() if ">" in ln else ""
        elif _ENV_LINE.match(ln) and not commands:
            name, value = ln.split("=", 1)
            try:
                words = shlex.split(value)
            except ValueError:
                return None
            env[name] = words[0] if len(words) == 1 else value.strip()
        else:
            commands.append(ln)
    steps = [Step(order=i, phase="", command=c) for i, c in enumerate(commands)]
    fronts = [s for s in steps if _tool(s.command) == "cudafe++"]
    if len(fronts) != 1 or "--gen_module_id_file" not in fronts[0].command or len(steps) < 5:
        return None
    front = fronts[0]
    id_file = re.search(r'--module_id_file_name\s+"([^"]+)"', front.command)
    c_file = re.search(r'--gen_c_file_name\s+"([^"]+)"', front.command)
    host_in = re.search(r'"([^"]+)"\s*$', front.command)
    if not (id_file and c_file and host_in):
        return None
    pre = [s for s in steps if _output(s.command) == host_in.group(1) and " -E " in f" {s.command} "]
    final = steps[-1]
    if len(pre) != 1 or pre[0].order > front.order or f'"{c_file.group(1)}"' not in final.command \
            or " -c " not in f" {final.command} ":
        return None
    device = [s for s in steps if s not in (pre[0], front, final)]
    if not device or any(_tool(s.command) not in ("cicc", "ptxas", "fatbinary") and " -E " not in f" {s.command} "
                         for s in device):
        return None
    if depfile is not None:  # nvcc filters the host preprocessor's dependencies into it: the preprocessor writes it
        target = _output(final.command)
        if not depfile or target is None:
            return None
        pre[0].command += f" -MD -MF {shlex.quote(depfile)} -MT {shlex.quote(target)}"
    front.command = front.command.replace("--gen_module_id_file", "", 1)
    for s in steps:
        s.phase = _phase(s, pre[0], final)
    source = next(a for a in args if a.endswith(".cu") and not a.startswith("-"))
    return Plan(env=env, host=[pre[0], front], device=device, final=final,
                module_id=(Path(id_file.group(1)), _module_id(source)), source=source, steps=steps)


def _tool(command: str) -> str:
    first = shlex.split(command)[0] if command else ""
    return os.path.basename(first.replace("$CICC_PATH/", ""))


def _output(command: str) -> str | None:
    m = _QUOTED_OUT.search(command)
    return m.group(1) if m else None


def _phase(step: Step, host_pre: Step, final: Step) -> str:
    tool = _tool(step.command)
    if step is final:
        return f"{tool} (compiling)"
    if " -E " in f" {step.command} ":
        return f"{tool} (preprocessing {4 if step is host_pre else 1})"
    return tool


def _module_id(source: str) -> str:
    """A module id of nvcc's shape (`_<8 hex>_<length>_<name>_<8 hex>`), from the source's absolute path and its
    bytes, so two translation units never share one and the same unit always gets the same."""
    path = Path(source).resolve()
    name = re.sub(r"[^A-Za-z0-9]", "_", path.name)
    try:
        content = path.read_bytes()
    except OSError:
        content = b""
    return (f"_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}_{len(path.name)}_{name}_"
            f"{hashlib.sha256(content).hexdigest()[:8]}")


class _Chains:
    """The two chains' processes, so that a failure stops the work nvcc would never have reached."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failed_at: int | None = None
        self.running: dict[int, subprocess.Popen] = {}

    def run(self, env: dict[str, str], chain: list[Step]) -> None:
        for step in chain:
            with self.lock:
                if self.failed_at is not None and step.order > self.failed_at:
                    return
                proc = subprocess.Popen(["/bin/sh", "-c", step.command], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
                self.running[step.order] = proc
            start = time.perf_counter()
            out = proc.communicate()
            step.seconds, step.returncode, step.output = time.perf_counter() - start, proc.returncode, out
            with self.lock:
                del self.running[step.order]
                if proc.returncode != 0 and (self.failed_at is None or step.order < self.failed_at):
                    self.failed_at = step.order
                    for order, other in self.running.items():
                        if order > step.order:
                            other.kill()
            if proc.returncode != 0:
                return


def _run(p: Plan, table: str | None) -> tuple[int, bytes, bytes]:
    """Exit status, stdout and stderr as nvcc would have them (each command's output in nvcc's order)."""
    p.module_id[0].write_text(p.module_id[1])
    chains = _Chains()
    device = threading.Thread(target=chains.run, args=(p.env, p.device), daemon=True)
    device.start()
    chains.run(p.env, p.host)
    device.join()
    if chains.failed_at is None:
        chains.run(p.env, [p.final])
    ran = [s for s in p.steps if s.returncode is not None and (chains.failed_at is None or s.order <= chains.failed_at)]
    out = b"".join(step.output[0] for step in ran)
    err = b"".join(step.output[1] for step in ran)
    if table:
        _append_times(Path(table), p.source, ran)
    last = ran[-1] if ran else None
    if last is None or last.returncode == 0:
        return (0 if last is not None else 1), out, err
    if last.returncode < 0:
        err += f"nvcc error   : '{_tool(last.command)}' died due to signal {-last.returncode}\n".encode()
    return (last.returncode if last.returncode > 0 else 2), out, err


def _append_rows(table: Path, rows: Path, label: str) -> None:
    """`rows`' timing rows (nvcc's `-time` format) appended to `table`, each phase name prefixed with `label`."""
    lines = rows.read_text(errors="replace").splitlines()[1:]
    new = not table.exists()
    with open(table, "a") as f:
        if new:
            f.write(_HEADER)
        for line in lines:
            cells = line.split(",")
            if len(cells) >= 8:
                cells[1] = f" {label}{cells[1].strip()} "
                f.write(",".join(cells) + "\n")


def _append_times(table: Path, source: str, ran: list[Step]) -> None:
    """Rows in nvcc's `-time` format (what `build_steps` reads), appended as nvcc appends."""
    new = not table.exists()
    with open(table, "a") as f:
        if new:
            f.write(_HEADER)
        for s in ran:
            f.write(f"{source} , {s.phase} ,  , {_output(s.command) or ''} ,  , nvcc , {s.seconds * 1e3:.4f} , ms\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
