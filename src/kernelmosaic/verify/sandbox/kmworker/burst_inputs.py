"""The wall-clock burst's inputs: every call its own values, and every call's result fingerprinted in the loop.

The burst is the parent's check on the worker's clock: back-to-back calls timed by the parent. A candidate that can
tell the burst from the timed calls (no flush, no pause between calls) could answer it from a memo of earlier
results, or compute only the call the parent checks, and so look fast on the parent's clock while its timed calls
lie. Two things take that away:

- **No two calls share their inputs.** Each argument whose elements are drawn independently of their position (an
  input with no zeros pattern, symmetry or normalised slices; integer, index and bool inputs) is a window of one
  buffer twice its size (at least 4096 window positions; past a gigabyte, an eighth more or a gigabyte), at an
  offset of its own per call, aligned to 256 bytes. Windows of one argument overlap (by a third of their length on
  average), but two calls share no input tuple, so no memo keyed on addresses or content answers one. What a
  result of an overlapping window offers is a part: an op whose result rows follow its input's rows (a product with
  a fixed weight) could re-use the rows of a window that moved by whole rows, at most the overlap; re-using a
  shifted elementwise result costs a read and a write of it, about what the op costs. Arguments with a positional
  structure take their values from `sets` draws in turn; a problem whose every tensor argument is of that kind has
  repeating calls (`BurstInputs.distinct` is False, and the verdict says so).
- **Every call answers for itself.** Each call's outputs are projected onto the timed calls' fingerprint weights
  (`CallPrinter`: on the device, no host synchronisation) right after it, inside the timed loop; the parent picks
  calls at random after the reply and the reference recomputes them from the same windows. A memo, a skipped call
  or work left for later gives a wrong projection for the calls picked. The projections cost eager's bursts the
  same, and the reference measures what they add (`print_cost`), which the bounds set aside.

Standard library and torch only (the worker side).
"""

from __future__ import annotations

import math
import time

import torch

from .fingerprint import CHUNK, Fingerprinter, flat_view

__all__ = ["BurstInputs", "CallPrinter", "burst_seed", "windowable"]

STEP_BYTES = 256
"""Window offsets are multiples of this many bytes: every window as aligned as a fresh allocation needs for vector
loads (16 bytes) and then some."""
MIN_POSITIONS = 4096
"""Window positions per argument at least (a tiny input's buffer gets this many steps beyond its size)."""
EXTRA_BYTES = 1 << 30
"""A buffer holds its input twice up to this much extra (windows overlap by a third of their length on average);
beyond it, an eighth of the input or this much, whichever is more (KernelBench's largest inputs take gigabytes)."""
MAX_OUTPUTS = 16
"""Columns (outputs) per call a burst row holds: a call with more outputs has the projections of its outputs from
the last column's on summed into that column (every output answers for itself in every call; a row stays bounded,
and a reply holds up to `call_checks.MAX_BURST_CALLS` of them)."""
SPLIT = 4
"""Columns per output of a split projection (`CallPrinter`): finite part, NaN, +inf and -inf counts."""


def burst_seed(seed: int, call: int, sets: int) -> int:
    """The seed of the draw that call `call` of a burst drawn from `seed` over `sets` sets takes its positional
    arguments from."""
    return seed + call % sets


def windowable(spec: tuple) -> bool:
    """Whether an argument (an `InputTemplate` spec) can be drawn as a flat buffer and cut into windows: its
    elements are independent of their position (no zeros pattern, symmetry or normalised slices) and it has some."""
    kind = spec[0]
    if kind == "const":
        return False
    shape = spec[1]
    if math.prod(shape) == 0:
        return False
    if kind in ("bool", "int"):
        return True
    s = spec[8]
    return not (s.symmetric or s.antisymmetric or s.unit_sum is not None or s.unit_norm is not None
                or s.zeros is not None)


def _mix(x: int) -> int:
    """splitmix64: a window position from (seed, call, argument), the same in every process."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


class _Window:
    def __init__(self, buffer: torch.Tensor, shape: tuple, step: int, positions: int) -> None:
        self.buffer, self.shape, self.step, self.positions = buffer, shape, step, positions
        self.numel = math.prod(shape)

    def at(self, position: int) -> torch.Tensor:
        start = position * self.step
        return self.buffer[start:start + self.numel].view(self.shape)


class BurstInputs:
    """The inputs of every call of one burst, drawn from `seed` alone: the same in every process on one device
    (the reference rebuilds them to recompute the calls the parent picks)."""

    def __init__(self, template, device: str, seed: int, sets: int) -> None:
        self._base = _mix(seed)
        gen = torch.Generator(device=device)
        self.windows: dict[int, _Window] = {}
        for i, spec in enumerate(template.specs):
            if not windowable(spec):
                continue
            numel = math.prod(spec[1])
            itemsize = torch.empty((), dtype=torch.bool if spec[0] == "bool" else spec[2]).element_size()
            step = max(STEP_BYTES // itemsize, 1)
            extra = numel if numel * itemsize <= EXTRA_BYTES else max(numel // 8, EXTRA_BYTES // itemsize)
            positions = max(extra // step, MIN_POSITIONS)
            flat = (spec[0], (numel + positions * step,), *spec[2:])
            self.windows[i] = _Window(template.draw_one(flat, gen.manual_seed(_mix(seed * 1_000_003 + i))),
                                      tuple(spec[1]), step, positions)
        self.sets = [template.draw(gen.manual_seed(burst_seed(seed, k, sets)), skip=self.windows) for k in range(sets)]

    @property
    def distinct(self) -> bool:
        """Whether no two calls share their inputs (some tensor argument moves window every call)."""
        return bool(self.windows)

    def call(self, k: int) -> list:
        """Call `k`'s arguments: views into the windowed buffers, the rest from the set it falls on."""
        args = list(self.sets[k % len(self.sets)])
        for i, w in self.windows.items():
            args[i] = w.at(_mix(self._base + 64 * k + i) % (w.positions + 1))
        return args


class CallPrinter:
    """Each call's outputs projected onto the fingerprint weights of `fp_seed`, written into a row of a device tensor
    without a host synchronisation (`dot(..., out=)` into preallocated rows): floating outputs in float32 (one
    `dot`, as cheap as a read of the output; the parent allows for its rounding, `call_checks.projection_mismatch`),
    integer and bool ones in float64 (exact), complex ones as their real and imaginary parts (`view_as_real`). A NaN
    or inf output gives a non-finite projection; an output missing, not a tensor or on another device leaves NaN.
    `Fingerprinter(fp_seed)` of the same output has the same `dot`, to that rounding, when it is finite.

    `split` (where the reference's outputs hold NaN or inf, which make a plain projection non-finite whatever else
    the output holds): each output takes `SPLIT` columns, the projection of its finite elements and its NaN, +inf
    and -inf counts, as `Fingerprinter` gives them; a call that writes one NaN and skips the rest no longer passes."""

    def __init__(self, fp_seed: int, device: str, calls: int, split: bool = False) -> None:
        self.fingerprint = Fingerprinter(fp_seed, device)
        self.device = torch.device(device)
        self.calls = calls
        self.split = split
        self.width = 0
        self.count = 0
        self.rows32 = self.rows64 = None
        self.rows: torch.Tensor | None = None
        self._w64: dict[tuple[int, int], torch.Tensor] = {}

    def _split_sums(self, j: int, flat) -> torch.Tensor:
        """Output `j`'s split projection, `SPLIT` float64 sums: the finite part projected as a floating output's plain
        projection is (float32 products, float64 sum over chunks), and the NaN, +inf and -inf counts; five passes
        over the output, no float64 copy of it."""
        acc = torch.zeros(SPLIT, dtype=torch.float64, device=self.device)
        if not flat.is_floating_point():  # integers and bools are finite: exact in float64, counts 0
            acc[0] = torch.dot(flat.to(torch.float64), self._weights64(j, flat.numel()))
            return acc
        w = self.fingerprint._w(j, flat.numel())
        v = flat if flat.dtype == torch.float32 else flat.float()
        finite = torch.isfinite(v)
        vals = torch.where(finite, v, torch.zeros((), dtype=v.dtype, device=v.device))
        for i in range(0, vals.numel(), CHUNK):
            acc[0] += torch.dot(vals[i:i + CHUNK], w[i:i + CHUNK])
        acc[1] = torch.isnan(v).sum()
        acc[2] = (v == float("inf")).sum()
        acc[3] = (v == float("-inf")).sum()
        return acc

    def _sums(self, j: int, flat) -> torch.Tensor:
        """Output `j`'s projection as float64 sums, one per column it takes: split (`_split_sums`), or one: float32
        products summed in float64 a chunk at a time (a floating output), exact in float64 (integers and bools)."""
        if self.split:
            return self._split_sums(j, flat)
        n = flat.numel()
        if not flat.is_floating_point():
            return torch.dot(flat.to(torch.float64), self._weights64(j, n)).reshape(1)
        w = self.fingerprint._w(j, n)
        acc = torch.zeros(1, dtype=torch.float64, device=self.device)
        for i in range(0, n, CHUNK):
            acc += torch.dot(flat[i:i + CHUNK].float(), w[i:i + CHUNK])
        return acc

    def _project(self, k: int, j: int, x) -> None:
        if type(x) is not torch.Tensor or x.device.type != self.device.type:
            return
        flat = flat_view(x)
        per, n = SPLIT if self.split else 1, flat.numel()
        if not self.split and flat.is_floating_point() and n <= CHUNK:  # one dot, written in place
            v = flat if flat.dtype == torch.float32 else flat.float()
            torch.dot(v, self.fingerprint._w(j, n), out=self.rows32[k, j])
        else:
            self.rows64[k, per * j:per * (j + 1)] = self._sums(j, flat)

    def _weights64(self, j: int, n: int) -> torch.Tensor:
        """Output `j`'s weights in float64 (integer and bool outputs are projected exactly), widened once."""
        key = (j, n)
        if key not in self._w64:
            self._w64[key] = self.fingerprint._w(j, n).double()
        return self._w64[key]

    def _folded(self, k: int, items: list) -> None:
        """Outputs `MAX_OUTPUTS - 1` on, summed into the last column(s): each projected as a column of its own would be
        (a value that is no tensor on this device adds nothing, as the parent skips it; a call with another output
        count than the first leaves NaN)."""
        last, per = self.width - 1, SPLIT if self.split else 1
        acc = torch.zeros(per, dtype=torch.float64, device=self.device)
        if len(items) != self.count:
            acc.fill_(float("nan"))
        for j in range(last, len(items)):
            x = items[j]
            if type(x) is torch.Tensor and x.device.type == self.device.type:
                acc += self._sums(j, flat_view(x))
        self.rows64[k, last * per:(last + 1) * per] = acc

    def __call__(self, k: int, out) -> None:
        items = list(out) if isinstance(out, (tuple, list)) else [out]
        if not self.width:  # sized by the first call; another count later leaves NaN, which no reference matches
            self.count = len(items)
            self.width = min(max(len(items), 1), MAX_OUTPUTS)
            cols = self.width * (SPLIT if self.split else 1)
            self.rows32 = torch.full((self.calls, cols), float("nan"), dtype=torch.float32, device=self.device)
            self.rows64 = torch.full((self.calls, cols), float("nan"), dtype=torch.float64, device=self.device)
        if self.count > MAX_OUTPUTS:
            for j in range(min(self.width - 1, len(items))):
                self._project(k, j, items[j])
            self._folded(k, items)
            return
        for j in range(min(self.width, len(items))):
            self._project(k, j, items[j])

    def finish(self) -> None:
        """`rows`: calls x outputs, float64, on the device (each entry from whichever precision wrote it)."""
        if self.width:
            self.rows = torch.where(torch.isnan(self.rows64), self.rows32.double(), self.rows64)

    def values(self) -> list[list[float]]:
        self.finish()
        return [] if self.rows is None else self.rows.tolist()


def print_cost(fn, inputs: BurstInputs, printer: CallPrinter, calls: int, device: str) -> float:
    """Milliseconds one call's projection adds to a burst of `fn` on `inputs` (`printer` has a row per call): the
    loop with projections less the loop without, each the quickest of three runs taken in turn (a busy host
    stretches some runs, rarely all), in the reference's process (the candidate's figure would be its own word). Within the burst's bounds an error here
    moves eager's ratio the same way (its bursts hold the projections too), which widens or narrows the bound."""
    cuda = device.startswith("cuda")

    def loop(project: bool) -> float:
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for k in range(calls):
            out = fn(*inputs.call(k))
            if project:
                printer(k, out)
            del out
        if project:
            printer.finish()
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    runs = [(loop(False), loop(True)) for _ in range(3)]
    bare, printed = min(r[0] for r in runs), min(r[1] for r in runs)
    return max(printed - bare, 0.0) * 1e3 / max(calls, 1)
