"""The reference role: loads the problem, produces inputs, weights and reference outputs, times eager and compile.

It runs in its own process, so nothing the candidate does can reach the reference model or its outputs.
"""

from __future__ import annotations

import torch

from .burst_inputs import BurstInputs, CallPrinter, print_cost
from .common import package_outputs, seed_all
from .compile_share import CompileShare
from .fingerprint import Fingerprinter
from .held import HeldTrials
from .inputs import InputTemplate, apply_distribution, cast_model, cast_precision, to_device
from .loader import load_module
from .memory import forward_peak_bytes, peak_into
from .oracle import Oracle
from .shared import nbytes_of, same_bits, written_inputs
from .timing import BURST_SETS, Timer, burst

__all__ = ["ReferenceRole"]

def _finite(out) -> bool:
    items = out if isinstance(out, (tuple, list)) else [out]
    return all(not (isinstance(t, torch.Tensor) and t.is_floating_point() and not torch.isfinite(t).all()) for t in items)


def _give_back(device: str) -> None:
    """The allocator's unused blocks back to the device after work of output size (trials, checks of timed calls): a
    long-lived reference worker would otherwise keep its peak while it waits, and other judgements on the GPU run out
    of memory beside it. Not after timing requests, whose wall time the parent measures."""
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


_KEPT = 1
"""Problems kept set up besides the current one: the size check sets up the problem at derived sizes between two
judgements of the same problem, which then find it still set up."""


class ReferenceRole(HeldTrials):
    def __init__(self, device: str) -> None:
        self.device = device
        self.module = None
        self.model = None
        self.compiled = None
        self._key: tuple | None = None
        self._kept: dict[tuple, dict] = {}

    def setup(self, problem: str, seed: int, precision: str, sha: str = "", known: bool = False) -> dict:
        """Set the problem up (load it, build the model at `seed`, draw its input template). One set up before and
        kept (`_KEPT`) is restored instead: `restored` True, and with `known` (the parent holds its set-up reply)
        nothing else is sent back. `sha`: the problem file's content hash (a file changed in place is set up anew)."""
        key = (problem, sha, seed, precision)
        if self._key is not None and self._key != key:
            self._drop_held()  # a held trial is recomputed from its seed when asked for again
            self._kept[self._key] = {k: v for k, v in vars(self).items() if k not in ("device", "_kept")}
            while len(self._kept) > _KEPT + (key in self._kept):
                self._kept.pop(next(iter(self._kept)))
        if key in self._kept:
            vars(self).update(self._kept.pop(key))
            return {"restored": True} if known else {**self._setup_reply(), "restored": True}
        self._key = None
        self._set_up(problem, seed, precision)
        self._key = key
        return {**self._setup_reply(), "restored": False}

    def _setup_reply(self) -> dict:
        return {"init_inputs": self.init_inputs,
                "state_dict": {k: v.detach().cpu() for k, v in self.model.state_dict().items()}, "flops": self.flops}

    def _set_up(self, problem: str, seed: int, precision: str) -> None:
        self.precision = precision
        self.module = module = load_module(problem, "km_problem")
        for attr in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(module, attr):
                raise AttributeError(f"problem defines no `{attr}`")
        seed_all(seed)
        init_inputs = list(module.get_init_inputs())
        seed_all(seed)
        model = module.Model(*init_inputs).eval()
        model = cast_model(model, precision)
        self.model = model.to(self.device)
        self.template = InputTemplate(self._given(seed))
        self.compiled = None
        self.oracle = None
        self.oracle_seed = seed
        self.init_inputs = init_inputs
        self.flops = self._flops(self._given(seed))

    def _given(self, seed: int) -> list:
        seed_all(seed)
        with torch.device(self.device):
            inputs = list(self.module.get_inputs())
        return cast_precision(to_device(inputs, self.device), self.precision)

    def _flops(self, inputs: list) -> float:
        try:
            from torch.utils.flop_counter import FlopCounterMode

            with torch.no_grad(), FlopCounterMode(display=False) as counter:
                self.model(*inputs)
            return float(counter.get_total_flops())
        except Exception:  # noqa: BLE001 - a problem the counter cannot trace simply has no FLOP figure
            return 0.0

    @torch.no_grad()
    def trials(self, seeds: list[int], distributions: list[str], large_bytes: int | None = None) -> dict:
        """Every trial's inputs, outputs, repeat and oracle, for the parent to keep; or, when the first trial's
        outputs or inputs exceed `large_bytes`, only their description (`large`: True, `kmworker/held.py`)."""
        results = []
        memory: dict = {}
        for k, (seed, dist) in enumerate(zip(seeds, distributions, strict=True)):
            given = self._given(seed)
            gen = torch.Generator(device=self.device).manual_seed(seed + 7919)
            inputs = apply_distribution(given, dist, gen)
            before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            try:
                with peak_into(self.device, memory if k == 0 else None):
                    out = self.model(*inputs)
            except Exception as exc:
                # The problem's own inputs must work; a transform of them the verifier chose (sign, scale) that the
                # reference refuses is not a trial. Running out of device memory is never a skip (`device_memory`).
                if dist == "given" or type(exc).__name__ == "OutOfMemoryError":
                    raise
                results.append({"distribution": dist, "skipped": True, "why": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            if k == 0:
                memory.update(input_bytes=nbytes_of(before), output_bytes=nbytes_of(out), weight_bytes=sum(
                    t.numel() * t.element_size() for t in self.model.state_dict().values()))
            if k == 0 and large_bytes is not None and max(nbytes_of(out), nbytes_of(before)) > large_bytes:
                del given, inputs, before, out
                return {"trials": self.plan_large(list(zip(seeds, distributions, strict=True)), _finite), "large": True,
                        "memory": memory}
            if dist != "given" and not _finite(out):
                results.append({"distribution": dist, "skipped": True, "why": "non-finite reference outputs"})
                continue
            mutates = bool(written_inputs(before, inputs))
            # the repeat runs on a copy: a forward that works in place would otherwise change `before`, the trial's
            # inputs as given (and its oracle's), and hide that it mutates them
            again = self.model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in before])
            results.append({"oracle": self._oracle(before),
                "distribution": dist,
                "skipped": False,
                "inputs": [x.cpu() if isinstance(x, torch.Tensor) else x for x in before],
                "outputs": package_outputs(out),
                "repeat": package_outputs(again),
                "mutates_inputs": mutates,
            })
        _give_back(self.device)
        return {"trials": results, "large": False, "memory": memory}

    def device_memory(self) -> dict:
        """What the device has free now, for everyone (`torch.cuda.mem_get_info`), and its size; None on the CPU.
        The caching allocator's unused blocks of this worker go back first, so they count as free."""
        if not self.device.startswith("cuda"):
            return {"free_bytes": None, "total_bytes": None}
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info()
        return {"free_bytes": int(free), "total_bytes": int(total)}

    def peaks(self) -> dict:
        return measure_peaks(self.device)

    def _oracle(self, inputs: list, in_place: bool = False) -> dict:
        """The same forward in float64 with the magnitude of its terms: the yardstick of the error budget.
        `in_place`: its tensors stay on this worker's device (large-output mode) instead of being copied to the host."""
        if self.oracle is None:
            try:
                self.oracle = Oracle(self.model, self.oracle_seed)
            except Exception:  # noqa: BLE001 - a model that cannot be copied has no oracle; the budget says so
                return {}
        return self.oracle(inputs, in_place=in_place)

    @torch.no_grad()
    def compute(self, inputs: list) -> dict:
        inputs = to_device(inputs, self.device)
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        result = {"outputs": package_outputs(self.model(*inputs)), "oracle": self._oracle(before)}
        _give_back(self.device)
        return result

    def peak_memory(self, inputs: list) -> dict:
        """`inputs` as `meta` placeholders (large-output mode, `held.describe_inputs`): the first trial's (the problem's
        own inputs at the set-up seed), drawn here."""
        if any(isinstance(x, torch.Tensor) and x.is_meta for x in inputs):
            inputs = self._given(self.oracle_seed)
        return {"peak_bytes": forward_peak_bytes(self.model, to_device(inputs, self.device), self.device)}

    def _compiled(self):
        if self.compiled is None:
            self.compiled = torch.compile(self.model)
        return self.compiled

    @torch.no_grad()
    def prepare_compile(self, seed: int, device_lock: str | None = None) -> dict:
        """Build the `torch.compile` baseline and run it once, before any timing round (no compile happens inside
        one). `device_lock`: the device's lock file, which the parent lent this call instead of holding it around
        it: held here shared, except while Dynamo and Inductor compile (`compile_share.py`)."""
        with CompileShare(device_lock, self.device) as share:
            gen = torch.Generator(device=self.device).manual_seed(seed)
            self._compiled()(*self.template.draw(gen))
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
        return {"unheld_s": round(share.unheld_s, 3), "compiles": share.compiles}

    @torch.no_grad()
    def time(self, kind: str, budget_ms: float, seed: int, l2_bytes: int, lead_us: float = 0.0,
             wall_ms: float | None = None) -> dict:
        fn = self._compiled() if kind == "compile" else self.model
        timer = Timer(self.device, l2_bytes, lead_us)
        result = timer.measure(fn, self.template.drawer(self.device), budget_ms, escaped=False, seed=seed,
                               wall_ms=wall_ms)
        return {"samples": result["samples"], "host_samples": result["host_samples"], "host": result["host"],
                "flush_bytes": timer.flush_bytes, "lead_short": result["lead_short"]}

    def burst_inputs(self, seed: int, sets: int = BURST_SETS) -> dict:
        """The burst's inputs (`burst_inputs.BurstInputs`); `distinct`: whether no two of its calls share inputs
        (the parent takes this from the reference's process, never the candidate's)."""
        self.burst_in = None  # the previous burst's inputs go before the next are drawn
        self.burst_in = BurstInputs(self.template, self.device, seed, sets)
        return {"distinct": self.burst_in.distinct}

    @torch.no_grad()
    def burst(self, kind: str, calls: int, fp_seed: int, split: bool = False) -> dict:
        """One burst per `burst_inputs` (the reference's bursts are not run again longer), each output projected as
        the candidate's are; its inputs go afterwards, so they are not alive while the candidate's burst runs."""
        fn = self._compiled() if kind == "compile" else self.model
        inputs, self.burst_in = self.burst_in, None
        return {"reported_ms": burst(fn, inputs, calls, self.device, CallPrinter(fp_seed, self.device, calls, split))}

    @torch.no_grad()
    def burst_print_cost(self, seed: int, sets: int, calls: int, fp_seed: int, split: bool = False) -> dict:
        """Milliseconds one call's in-burst projection adds, measured here on a burst of this problem drawn from
        `seed` (the same shapes the candidate's outputs must have), over `calls` calls: the part of a burst that is
        the verifier's own work (`burst_inputs.print_cost`)."""
        inputs = BurstInputs(self.template, self.device, seed, sets)
        ms = print_cost(self.model, inputs, CallPrinter(fp_seed, self.device, calls, split), calls, self.device)
        del inputs
        _give_back(self.device)
        return {"ms": ms}

    @torch.no_grad()
    def burst_prints(self, seed: int, sets: int, calls: list[int], fp_seed: int) -> dict:
        """Fingerprints (with their weighted moments) of the reference on calls `calls` of the burst drawn from
        `seed` over `sets`: what the candidate's projections of those calls should be."""
        inputs, fingerprint = BurstInputs(self.template, self.device, seed, sets), Fingerprinter(fp_seed, self.device)
        prints = [fingerprint(self.model(*inputs.call(k)), moments=True) for k in calls]
        del inputs
        _give_back(self.device)
        return {"prints": prints}

    @torch.no_grad()
    def inputs_changed(self, seed: int, inputs: list) -> dict:
        """Which of `inputs` (a timed call's, as its worker copied them after forward) differ from the inputs drawn
        from `seed`, as that call drew them: forward wrote into them."""
        drawn = self.template.drawer(self.device)(seed)
        given = to_device(inputs, self.device)
        changed = [i for i, (d, g) in enumerate(zip(drawn, given, strict=False))
                   if isinstance(d, torch.Tensor) and not same_bits(d, g)]
        del drawn, given
        _give_back(self.device)
        return {"changed": changed}

    @torch.no_grad()
    def check_calls(self, seeds: list[int], fp_seed: int) -> dict:
        """Fingerprints (with their weighted moments) of the reference on the inputs drawn from `seeds`: what
        the candidate's timed calls with those seeds should have returned."""
        draw, fingerprint = self.template.drawer(self.device), Fingerprinter(fp_seed, self.device)
        prints = [fingerprint(self.model(*draw(s)), moments=True) for s in seeds]
        _give_back(self.device)
        return {"prints": prints}


def measure_peaks(device: str) -> dict:
    """Device ceilings measured here: a large copy (bytes read + written) and large fp32/bf16 matrix products."""
    import time

    cuda = device.startswith("cuda")

    def best_ms(fn, reps: int = 5) -> float:
        fn()
        times = []
        for _ in range(reps):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            if cuda:
                torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return min(times)

    nbytes = (1 << 30) if cuda else (128 << 20)
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    copy_ms = best_ms(lambda s=src, d=dst: d.copy_(s))
    del src, dst
    n = 8192 if cuda else 1024
    out = {"bandwidth_gbps": 2 * nbytes / copy_ms / 1e6}
    for name, dtype in (("fp32_tflops", torch.float32), ("bf16_tflops", torch.bfloat16)):
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        out[name] = 2 * n**3 / best_ms(lambda a=a, b=b: a @ b) / 1e9
        del a, b
    return out
