"""The candidate role: imports the untrusted candidate, builds `ModelNew` with the reference's weights, runs it.

Everything it returns is data (tensors, numbers, strings); the judging happens in the trusted parent.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import torch

from . import integrity
from .burst_inputs import BurstInputs, CallPrinter
from .census import kernel_census, quiet_compiler_threads
from .common import package_outputs, seed_all
from .fastform import watch_cupy
from .fingerprint import Fingerprinter
from .inputs import InputTemplate, cast_model, to_device
from .intercept import INTERCEPT
from .loader import BuildRecorder, load_module
from .memory import forward_peak_bytes
from .shared import export_tensors, package_in_place, release, written_inputs
from .shared_runs import SharedRuns
from .timing import BURST_SETS, Timer, burst

__all__ = ["CandidateRole"]


@contextlib.contextmanager
def _fresh_allocations_nan():
    """Every fresh ATen allocation NaN-filled (ints: their max) while inside: PyTorch's deterministic mode fills
    uninitialised memory itself (`warn_only`, so no op is refused)."""
    was, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)

def _storages(out) -> set[int]:
    """Addresses of the memory every tensor in `out` (a tensor, or a tuple/list of them) lives in."""
    items = out if isinstance(out, (tuple, list)) else [out]
    return {t.untyped_storage().data_ptr() for t in items if isinstance(t, torch.Tensor) and t.numel() > 0}


class CandidateRole(SharedRuns):  # run_shared, refill_shared: the large-output mode (kmworker/shared_runs.py)
    def __init__(self, device: str) -> None:
        self.device = device
        self.model = None
        self.recorder: BuildRecorder | None = None
        quiet_compiler_threads()  # torch.compile's progress bars start no thread the count below would miss
        self.before = integrity.snapshot()
        self.threads = integrity.thread_count()

    def load(self, candidate: str, cache_dir: str) -> dict:
        # kept for construction and the first calls too: a `load_inline` in `__init__` or a lazy loader is built as
        # the import's are (privately, with the precompiled header) and its functions are seen by the probes
        self.recorder = recorder = BuildRecorder(cache_dir)
        if "cupy" in Path(candidate).read_text(errors="replace"):
            INTERCEPT.cupy = watch_cupy(INTERCEPT)  # before the candidate binds cupy.RawKernel
        with recorder:
            self.module = load_module(candidate, "km_candidate")
        if not hasattr(self.module, "ModelNew"):
            raise AttributeError("candidate defines no `ModelNew`")
        INTERCEPT.wrap_triton(self.module)
        return {"builds": recorder.builds, "integrity": integrity.diff(self.before)}

    def init(self, init_inputs: list, state_dict: dict, seed: int, precision: str) -> dict:
        seed_all(seed)
        with self.recorder or contextlib.nullcontext():
            model = self.module.ModelNew(*init_inputs)
        own = model.state_dict()
        copied, skipped = [], []
        for name, value in own.items():
            ref = state_dict.get(name)
            if ref is not None and tuple(ref.shape) == tuple(value.shape):
                copied.append(name)
            else:
                skipped.append(name)
        if copied:
            model.load_state_dict({k: state_dict[k].to(own[k].dtype) for k in copied}, strict=False)
        model = model.eval()
        model = cast_model(model, precision)
        self.model = model.to(self.device)
        return {"copied": copied, "skipped": skipped, "integrity": integrity.diff(self.before)}

    def _poison(self, sizes: list[int]) -> None:
        """Fill and free blocks of the outputs' sizes, so the allocator hands exactly those NaN-filled blocks to
        the candidate's outputs and an element it never writes reads NaN instead of a lucky earlier result."""
        blocks = [torch.empty(max(n, 1), dtype=torch.float32, device=self.device) for n in (sizes or [1 << 20])]
        for b in blocks:
            b.fill_(float("nan"))
        del blocks

    @contextlib.contextmanager
    def _uninitialised_reads_nan(self):
        """On the CPU, make every fresh ATen allocation NaN-filled (ints: their max) while the candidate runs.

        glibc does not reliably hand the freed poison blocks back to the outputs, so CPU poisoning alone is a
        coin toss; PyTorch's deterministic mode fills uninitialised memory itself (`warn_only`, so no op is
        refused). On CUDA block poisoning is the only layer: the H200 checks verify it catches uninitialised reads.
        """
        if self.device != "cpu":
            yield
            return
        with _fresh_allocations_nan():
            yield

    @torch.no_grad()
    def run(self, trials: list[list], poison_sizes: list[int], repeat_first: bool = True) -> dict:
        """Every trial's outputs, and `aliased`: the trials whose outputs share memory with the previous trial's,
        which is kept alive until then as a caller would keep a result (a module-held buffer returned on every call
        overwrites the result the caller holds)."""
        results = []
        aliased: list[int] = []
        last: set[int] = set()
        held = None
        for k, host_inputs in enumerate(trials):
            inputs = to_device(host_inputs, self.device)
            before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            again = [x.clone() if isinstance(x, torch.Tensor) else x for x in before] if k == 0 and repeat_first else None
            self._poison(poison_sizes)  # last allocation before the call, so the outputs get the poisoned blocks
            with self._uninitialised_reads_nan(), self.recorder or contextlib.nullcontext():
                out = self.model(*inputs)
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            mine = _storages(out)
            if mine & last:
                aliased.append(k)
            held, last = out, mine  # noqa: F841 - alive until the next trial, as a caller's result would be
            item = {"outputs": package_outputs(out), "mutated": written_inputs(before, inputs)}
            if again is not None:
                del out
                self._poison(poison_sizes)
                with self._uninitialised_reads_nan():
                    item["repeat"] = package_outputs(self.model(*again))
            results.append(item)
            if k == 0:
                self.template = InputTemplate(before)
        del held
        return {"trials": results, "aliased": aliased, "integrity": integrity.diff(self.before),
                "extra_threads": integrity.thread_count() - self.threads}

    @torch.no_grad()
    def probe(self, host_inputs: list, perturb: list[str], seed: int, shared: bool = False,
              record_ops: bool = False) -> dict:
        """One forward with the candidate's own kernel calls counted and timed, and the outputs of those named in
        `perturb` replaced by noise. A forward that raises is reported, not raised: under noise that is an answer.
        `shared` (large-output mode): the outputs are handed out in place (`shared_runs.SharedRuns._export`), for the
        reference worker to compare there, instead of copied into the reply; the previous probe's go first.
        `record_ops`: count the dispatcher operators forward calls outside its kernel calls (`torch_ops`) and inside
        them (`kernel_ops`)."""
        if shared:
            release()
        inputs = self._inputs(host_inputs)
        sync = torch.cuda.synchronize if self.device.startswith("cuda") else (lambda: None)
        INTERCEPT.reset(set(perturb), seed, sync, record=record_ops)
        INTERCEPT.active = True
        error = ""
        out = None
        start = time.perf_counter()
        try:
            # Fresh buffers read NaN, on every device: a kernel that writes into one is seen writing even when the
            # caching allocator hands back the previous forward's block, which holds the very same values.
            with _fresh_allocations_nan(), INTERCEPT.op_mode(), INTERCEPT.recording(self.model, inputs):
                out = self.model(*inputs)
            sync()
        except Exception as exc:  # noqa: BLE001 - reported to the parent as data
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
        finally:
            INTERCEPT.active = INTERCEPT.record = False
            INTERCEPT.known = []
        return {"calls": dict(INTERCEPT.calls), "host_s": dict(INTERCEPT.host_s), "noised": dict(INTERCEPT.noised),
                "torch_ops": dict(INTERCEPT.torch_ops), "kernel_ops": dict(INTERCEPT.kernel_ops),
                "forward_s": time.perf_counter() - start, "error": error,
                "outputs": None if out is None else self._export(out) if shared else package_outputs(out),
                "integrity": integrity.diff(self.before)}

    def peak_memory(self, host_inputs: list) -> dict:
        return {"peak_bytes": forward_peak_bytes(self.model, self._inputs(host_inputs), self.device),
                "integrity": integrity.diff(self.before)}

    @torch.no_grad()
    def census(self, host_inputs: list) -> dict:
        if not self.device.startswith("cuda"):
            return {"kernels": [], "custom": -1, "library": -1}
        return kernel_census(self.model, self._inputs(host_inputs))

    @torch.no_grad()
    def time(self, budget_ms: float, seed: int, l2_bytes: int, check_at: int, lead_us: float = 0.0,
             fp_seed: int = 0, wall_ms: float | None = None, inputs_by_seed: bool = False, record_at: int = -1) -> dict:
        """`inputs_by_seed` (large-output mode): the checked call's inputs go back as their seed, {"seed": s}, for
        the reference worker to redraw, and its outputs, copied on this worker's device when the call's window
        closed, are handed out in place (`shared.export_tensors`: a CUDA IPC handle of the copy, or a sealed memfd)
        with `"shared": True`; the parent relays them to the reference worker at once. Nothing of output size is in
        the reply (whole, the outputs passed the message limit at 1G elements). `record_at` (>= 0): one more call
        among the timed ones records the operators forward dispatches (`torch_ops`, `kernel_ops`, as `probe` does),
        in the state of every timed call (no NaN-filled allocations, no deterministic mode)."""
        self.burst_in = None  # a round's timed calls do not share the device with the last round's burst inputs
        release()  # the previous round's checked outputs (the reference is done with them)
        timer = Timer(self.device, l2_bytes, lead_us)
        keep = (lambda _inputs, out: (None, package_in_place(out, copy=True))) if inputs_by_seed else None
        result = timer.measure(self.model, self.template.drawer(self.device), budget_ms, check_at=check_at, seed=seed,
                               fingerprint=Fingerprinter(fp_seed, self.device), wall_ms=wall_ms, snapshot=keep,
                               record_at=record_at, recording=self._recording)
        inputs, out = result.pop("checked")
        flush_bytes, l2_reset = timer.flush_bytes, timer.l2_reset
        if inputs_by_seed:  # the checked call's seed, as `measure` drew it (the watched call may sit before it)
            inputs = {"seed": result["checked_seed"]}
            if self.device.startswith("cuda"):  # the round's cached blocks go back to the device, all but the checked
                del timer  # copy: the reference compares that copy next, beside this worker (H200, a KernelBench-size
                torch.cuda.empty_cache()  # L1 norm: 82 GiB held here after timing, 16 GiB wanted there)
            out = {**out, "tensors": export_tensors(out["tensors"]), "shared": True}
        return {"samples": result["samples"], "host_samples": result["host_samples"], "host": result["host"],
                "flush_bytes": flush_bytes, "escaped_ms": result["escaped_ms"], "lead_us": result["lead_us"],
                "lead_short": result["lead_short"],
                "l2_reset": l2_reset, "calls": result["calls"],
                "checked_inputs": inputs, "checked_outputs": out, "checked_seed": result["checked_seed"],
                **({"watched": True, "torch_ops": dict(INTERCEPT.torch_ops), "kernel_ops": dict(INTERCEPT.kernel_ops),
                    "kernel_calls": dict(INTERCEPT.calls)} if record_at >= 0 else {}),
                "integrity": integrity.diff(self.before),
                "extra_threads": integrity.thread_count() - self.threads}

    @contextlib.contextmanager
    def _recording(self):
        """One timed call watched by the interceptor's dispatch mode (its kernel calls counted, the operators
        around and inside them recorded)."""
        sync = torch.cuda.synchronize if self.device.startswith("cuda") else (lambda: None)
        INTERCEPT.reset(set(), 0, sync, record=True)
        INTERCEPT.active = True
        try:
            with INTERCEPT.op_mode():
                yield
        finally:
            INTERCEPT.active = INTERCEPT.record = False

    def burst_inputs(self, seed: int, sets: int = BURST_SETS) -> dict:
        """Draw the wall-clock burst's inputs ahead of it (`burst_inputs.BurstInputs`: windows that move every call,
        and `sets` draws of the positional arguments), so the parent's timing of the burst holds calls only."""
        self.burst_in = None  # the previous burst's buffers go before the next are drawn
        self.burst_in = BurstInputs(self.template, self.device, seed, sets)
        return {}

    def burst_release(self) -> dict:
        """The burst's inputs let go once the parent has run it for the last time (it may run again, longer, on
        the same inputs), so they are not alive beside eager's or the next round's calls."""
        self.burst_in = None
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()
        return {}

    @torch.no_grad()
    def burst(self, calls: int, fp_seed: int, split: bool = False) -> dict:
        """The burst's calls, each output projected right after it, as eager's: the parent's clock around this
        request then holds the same work for both subjects. Every call's projection goes back (a host tensor,
        calls x outputs); the parent picks which to check only after it has them."""
        printer = CallPrinter(fp_seed, self.device, calls, split)
        reported = burst(self.model, self.burst_in, calls, self.device, printer)
        rows = printer.rows
        return {"reported_ms": reported,
                "prints": rows.cpu() if rows is not None else torch.empty((calls, 0), dtype=torch.float64)}

    @torch.no_grad()
    def burst_check(self) -> dict:
        """What the last burst changed in the verifier's environment (its own request, so the timed one holds the
        calls alone)."""
        return {"integrity": integrity.diff(self.before)}

    @torch.no_grad()
    def refill(self, trials: list[list], poison_sizes: list[int]) -> dict:
        """The trials' inputs, one after another, written in place into the same buffers through `.data` (so no
        version counter moves): a result cached on the buffers' address, shape or version goes stale here."""
        buffers = to_device(trials[0], self.device)
        outputs, versions = [], []
        for k, host_inputs in enumerate(trials):
            if k:
                for b, x in zip(buffers, host_inputs, strict=True):
                    if isinstance(b, torch.Tensor):
                        b.data.copy_(x)
            versions.append([b._version for b in buffers if isinstance(b, torch.Tensor)])
            self._poison(poison_sizes)
            with self._uninitialised_reads_nan():
                out = self.model(*buffers)
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            outputs.append(package_outputs(out))
            del out
        return {"outputs": outputs, "versions": versions, "integrity": integrity.diff(self.before)}
