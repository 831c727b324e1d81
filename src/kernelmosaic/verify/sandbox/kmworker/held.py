"""Large-output mode of the reference role: one trial's reference held where it was computed, compared there.

When a trial's outputs or inputs exceed the parent's threshold (`VerifyConfig.large_output_bytes`), nothing of output
size goes to the parent. `plan_large` describes the trials (seed, distribution, output and input shapes, whether the
reference writes its inputs) and keeps nothing. Per judgement, `large_trial(seed, distribution)` recomputes a trial
(the same inputs, drawn from the same seed; fp32 outputs, float64 oracle and terms) and holds it, on the device for
CUDA, dropping the previous trial's; the candidate's outputs come in as shared descriptors (`kmworker/shared.py`)
and `compare_held` compares them with the one comparison (`kmworker/compare_core.py`). So the reference holds one
trial at a time: its outputs, outputs64 and terms (4 + 8 + 4 bytes per fp32 element: the terms are a scale
estimate, kept in float32) and, on the host, one memfd copy of that trial's inputs while the candidate maps it.
Recomputing per judgement costs one forward and one oracle per trial; keeping all five trials of a 1G-element output
would take 80 GB of the device memory the candidate needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .compare_core import compare_packaged
from .inputs import apply_distribution, to_device
from .shared import MAILBOX, export_tensors, import_tensors, nbytes_of, package_in_place, written_inputs

__all__ = ["HeldTrials", "Held", "describe_inputs"]


@dataclass
class Held:
    """One trial's reference as the reference worker keeps it between `large_trial` and `compare_held`."""

    seed: int
    """The trial's seed (with the distribution, what it was drawn from)."""
    outputs: dict
    """`package_in_place` of the fp32 (task-precision) outputs."""
    oracle: dict
    """{"outputs64", "terms"} in place ("terms_missing", a reason, instead of "terms" where they could not be
    estimated), or {} where the model has no float64 oracle."""

    @property
    def nbytes(self) -> int:
        packs = [self.outputs, *(v for v in self.oracle.values() if isinstance(v, dict))]  # not "terms_missing"
        return sum(nbytes_of(p["tensors"]) for p in packs)


def describe_inputs(inputs: list) -> list:
    """The inputs as the parent sees them in large-output mode: tensors as `meta` tensors of the same shape and dtype
    (sizes without data: the candidate worker uses its own copy of trial 0's inputs where one is named), values
    as they are."""
    return [torch.empty(x.shape, dtype=x.dtype, device="meta") if isinstance(x, torch.Tensor) else x for x in inputs]


class HeldTrials:
    """Mixed into `ReferenceRole`, which provides `model`, `device`, `template`, `_given(seed)` and
    `_oracle(inputs, in_place)`."""

    held: Held | None = None
    probe_base: dict | None = None
    """The candidate's outputs of an unperturbed kernel probe, copied here (`hold_probe`), while the perturbed
    probes are compared with them (`compare_probe`)."""

    def _draw(self, seed: int, dist: str) -> list:
        """A trial's inputs, exactly as `ReferenceRole.trials` draws them."""
        gen = torch.Generator(device=self.device).manual_seed(seed + 7919)
        return apply_distribution(self._given(seed), dist, gen)

    def _drop_held(self) -> None:
        self.held = None
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()

    @torch.no_grad()
    def plan_large(self, plan: list[tuple[int, str]], finite) -> list[dict]:
        """The trials described without their data (outputs: shapes only); `finite(out)` decides a skip as in the
        ordinary mode."""
        results = []
        self._drop_held()
        for seed, dist in plan:
            inputs = self._draw(seed, dist)
            before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            try:
                out = self.model(*inputs)
            except Exception as exc:  # a verifier transform the reference refuses is no trial (as in `trials`)
                if dist == "given" or type(exc).__name__ == "OutOfMemoryError":
                    raise
                results.append({"distribution": dist, "skipped": True, "why": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            if dist != "given" and not finite(out):
                results.append({"distribution": dist, "skipped": True, "why": "non-finite reference outputs"})
                continue
            packed = package_in_place(out)
            results.append({"distribution": dist, "skipped": False, "large": True, "seed": seed,
                            "inputs": describe_inputs(before),
                            "outputs": {**packed, "tensors": describe_inputs(packed["tensors"])},
                            "mutates_inputs": bool(written_inputs(before, inputs))})
            del out, before, inputs, packed
        self._drop_held()
        return results

    @torch.no_grad()
    def large_trial(self, seed: int, distribution: str) -> dict:
        """Recompute the trial of `seed` and `distribution` and hold it; its inputs go out as memfds (copies: the
        candidate never maps the reference's memory), for the parent to hand to the candidate worker."""
        self._drop_held()
        inputs = self._draw(seed, distribution)
        descs = export_tensors(inputs, host=True)
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        out = self.model(*inputs)
        del inputs
        outputs = package_in_place(out)
        del out
        self.held = Held(seed, outputs, self._oracle(before, in_place=True))
        del before
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()  # the oracle's transient memory goes back to the device for the candidate
        return {"inputs": descs, "held_seed": seed, "held_bytes": self.held.nbytes}

    def release_held(self) -> dict:
        """Let the held trial and probe outputs go (the judgement is over: their memory goes back for the next)."""
        self.probe_base = None
        self._drop_held()
        return {}

    @torch.no_grad()
    def hold_probe(self, outputs: dict) -> dict:
        """The candidate's outputs of its unperturbed probe (descriptors, `SharedRuns._export`) copied into this
        worker's memory: the perturbed probes are compared with this copy, which the candidate cannot reach."""
        self.probe_base = None
        got = self._imported(outputs, MAILBOX.incoming)
        self.probe_base = {**got, "tensors": [t.clone() for t in got["tensors"]]}
        del got
        return {"held_bytes": nbytes_of(self.probe_base["tensors"])}

    @torch.no_grad()
    def compare_probe(self, outputs: dict, atol: float, rtol: float) -> dict:
        """A perturbed probe's outputs (descriptors) against the held unperturbed ones, with the comparison the
        parent makes in the ordinary mode (no oracle: the probe asks whether noise moved the result)."""
        if self.probe_base is None:
            raise RuntimeError("no probe outputs are held: `hold_probe` first")
        got = self._imported(outputs, MAILBOX.incoming)
        cmp = compare_packaged(self.probe_base, got, atol, rtol)
        del got
        return {"comparison": cmp.as_dict()}

    @torch.no_grad()
    def compare_held(self, outputs: dict, atol: float, rtol: float, repeat: dict | None = None) -> dict:
        """The candidate's outputs of the held trial (`outputs`: {"tuple", "meta", "tensors": descriptors}) against
        the reference and its oracle, and `repeat` (a second run on the same inputs) against the first run, as the
        parent does in the ordinary mode. Returns both comparisons and what this worker holds."""
        if self.held is None:
            raise RuntimeError("no trial is held: `large_trial` first")
        fds = MAILBOX.incoming
        got = self._imported(outputs, fds)
        cmp = compare_packaged(self.held.outputs, got, atol, rtol, self.held.oracle)
        again = None
        if repeat is not None and cmp.status == "accepted":
            again = compare_packaged(got, self._imported(repeat, fds), atol, rtol, self.held.oracle).as_dict()
        del got
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()  # done reading the candidate's memory before the reply lets it go
        return {"comparison": cmp.as_dict(), "repeat": again, "held_seed": self.held.seed,
                "held_bytes": self.held.nbytes}

    def _imported(self, packed: dict, fds: list[int]) -> dict:
        tensors = import_tensors(list(packed["tensors"]), fds, self.device)
        return {"tuple": bool(packed["tuple"]), "meta": list(packed["meta"]),
                "tensors": [t if isinstance(t, torch.Tensor) else torch.empty(0) for t in tensors]}

    @torch.no_grad()
    def check_given(self, outputs: dict, atol: float, rtol: float, inputs: list | None = None,
                    seed: int | None = None) -> dict:
        """A candidate's outputs (packaged, sent whole) for `inputs`, or for the inputs drawn from `seed` as the timed
        calls draw them, against the reference and its oracle computed here: the reference's side of a timed call's
        check never leaves this worker. `outputs` marked `"shared"` (large-output mode) hold descriptors of the
        candidate's copy of them (`candidate.time`): mapped here in place before anything is computed, so one that
        does not hold what it describes is refused before the reference spends a forward on it."""
        self._drop_held()
        shared = self._imported(outputs, MAILBOX.incoming) if outputs.get("shared") else None
        inputs = self.template.drawer(self.device)(seed) if seed is not None else to_device(inputs, self.device)
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        expected = package_in_place(self.model(*inputs))
        del inputs
        oracle = self._oracle(before, in_place=True)
        del before
        got = shared or {**outputs, "tensors": [t.to(self.device) for t in outputs["tensors"]]}
        cmp = compare_packaged(expected, got, atol, rtol, oracle)
        del expected, oracle, got, shared
        self._drop_held()
        return {"comparison": cmp.as_dict()}
