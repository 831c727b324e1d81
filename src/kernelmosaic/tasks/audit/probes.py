"""The audit rules, run inside the worker on one loaded reference. Standard library and torch only.

Each probe appends findings as plain dicts `{rule, severity, message, evidence}`; the parent types them.
"""

from __future__ import annotations

import functools

import torch

from kernelmosaic.tasks.audit.compare import abs_max, close_enough, fmt, max_error, mean, std

__all__ = ["Probe", "as_outputs", "redraw"]


def as_outputs(out: object) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, list | tuple) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise TypeError(f"forward returned {type(out).__name__}, not a tensor or a tuple of tensors")


def _floating(t: torch.Tensor) -> bool:
    return t.is_floating_point()


def redraw(inputs: list, dist: str, seed: int) -> list:
    """Fresh floating inputs of the same shapes, dtypes and devices (drawn on the CPU, so every device sees the same
    values for a seed): `normal` (signed, as the verifier's `signed` trials), `uniform01`, or `wide` (4 × normal)."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            out.append(x)
        elif dist == "normal":
            out.append(torch.randn(x.shape, generator=gen).to(x.device, x.dtype))
        elif dist == "uniform01":
            out.append(torch.rand(x.shape, generator=gen).to(x.device, x.dtype))
        else:  # wide
            out.append((torch.randn(x.shape, generator=gen) * 4).to(x.device, x.dtype))
    return out


class Probe:
    """Runs the rules on one task; `model`, `inputs_for(seed)` (both on `device`) and tolerances come from the worker.
    Outputs stay on `device` and are compared there, in chunks (`compare`): copying every run's outputs to the
    host is what a large reference cannot afford."""

    def __init__(self, job: dict, model: torch.nn.Module, inputs_for, findings: list, checks: list,
                 device: str = "cpu") -> None:
        self.job, self.model, self.inputs_for = job, model, inputs_for
        self.findings, self.checks, self.device = findings, checks, device
        self.atol, self.rtol = job["atol"], job["rtol"]
        self.calls = 0

    def add(self, rule: str, severity: str, message: str, evidence: str = "") -> None:
        self.findings.append({"rule": rule, "severity": severity, "message": message, "evidence": evidence})

    def run(self, inputs: list) -> list[torch.Tensor]:
        # A fresh RNG state per call: a forward that draws random numbers (dropout) then differs between calls.
        self.calls += 1
        torch.manual_seed(10_000 + self.calls)
        with torch.no_grad():
            return [o.detach() for o in as_outputs(self.model(*[_clone(x) for x in inputs]))]

    def check_outputs(self, seeds: list[int]) -> list[list[torch.Tensor]]:
        """Finite, deterministic, not constant across seeds, not near zero, not matched by a trivial output."""
        runs = [self.run(self.inputs_for(s)) for s in seeds]
        self.checks += ["task-finite-output", "task-nondeterministic", "task-constant-output", "task-near-zero-output",
                        "task-zero-output-passes", "task-mean-output-passes", "task-identity-output-passes",
                        "task-small-shapes-too-large"]
        numel = sum(x.numel() for x in self.inputs_for(seeds[0]) if isinstance(x, torch.Tensor))
        numel += sum(o.numel() for o in runs[0])
        if numel > self.job["max_elements"]:
            self.add("task-small-shapes-too-large", "flag", f"inputs and outputs hold {numel} elements at the audited "
                     f"shapes, above {self.job['max_elements']}; audits and CPU tests would be slow",
                     str([tuple(o.shape) for o in runs[0]]) + (f"; not shrunk: {self.job['unshrunk']}"
                                                                if self.job.get("unshrunk") else ""))
        for k, o in enumerate(runs[0]):
            if _floating(o) and not torch.isfinite(o).all():
                self.add("task-finite-output", "reject", f"output {k} holds NaN or inf on the given inputs",
                         f"nan={int(torch.isnan(o).sum())} inf={int(torch.isinf(o).sum())}")
        again = self.run(self.inputs_for(seeds[0]))
        # Within tolerance, as the verifier compares: CUDA atomics reorder sums between calls, which no candidate
        # is asked to reproduce bit for bit; dropout and random ops differ far beyond it.
        if any(not close_enough(a, b, self.atol, self.rtol) for a, b in zip(runs[0], again, strict=True)):
            err = max(max_error(a, b) for a, b in zip(runs[0], again, strict=True))
            self.add("task-nondeterministic", "reject", "two forward calls on the same inputs differ (dropout in train "
                     "mode, random ops?); no candidate could match it", f"max abs difference {fmt(err)}")
        if len(runs) > 1 and all(torch.equal(a, b) for r in runs[1:] for a, b in zip(runs[0], r, strict=True)):
            self.add("task-constant-output", "reject", f"the output is identical for {len(runs)} input seeds; a kernel "
                     "returning a stored constant would pass", str([tuple(o.shape) for o in runs[0]]))
        peak = max((abs_max(o) for r in runs for o in r), default=0.0)
        if peak < 1e-6:
            self.add("task-near-zero-output", "reject", "the output is (near) zero for every seed", f"max |y| = {fmt(peak)}")
        self._trivial(runs, seeds)
        return runs

    def _trivial(self, runs: list[list[torch.Tensor]], seeds: list[int]) -> None:
        """A trivial answer "passes" only if it is within tolerance for every seed, as the verifier's trials are, and
        also on signed inputs, which the verifier's trials draw too: ReLU over `torch.rand` inputs is matched by
        its input, but a verdict is not fooled by it (that weakness is `task-positive-inputs-hide-sign`)."""
        given = self.inputs_for(seeds[0])
        signed_run = functools.cache(lambda: self._signed_run(given))  # run only when a trivial answer passes

        def also_signed(k: int, passes) -> bool:
            signed = signed_run()
            return signed is None or passes(signed[0], signed[1][k])

        for k in range(len(runs[0])):
            outs = [r[k] for r in runs]
            if not _floating(outs[0]):
                continue
            if all(close_enough(0.0, o, self.atol, self.rtol) for o in outs) and also_signed(
                    k, lambda _, o: close_enough(0.0, o, self.atol, self.rtol)):
                self.add("task-zero-output-passes", "reject", f"an all-zero output {k} is within tolerance "
                         f"(atol={self.atol}, rtol={self.rtol}); raise magnitudes or change the shapes",
                         f"max |y| = {fmt(max(abs_max(o) for o in outs))}")
            elif outs[0].numel() > 1 and all(close_enough(mean(o), o, self.atol, self.rtol) for o in outs) and \
                    also_signed(k, lambda _, o: close_enough(mean(o), o, self.atol, self.rtol)):
                self.add("task-mean-output-passes", "reject", f"filling output {k} with its mean is within tolerance",
                         f"std = {fmt(std(outs[0]))}")
            else:
                for j, x in enumerate(given):
                    if isinstance(x, torch.Tensor) and x.shape == outs[0].shape and close_enough(
                            x.to(outs[0].dtype), outs[0], self.atol, self.rtol) and also_signed(
                            k, lambda xs, o, j=j: close_enough(xs[j].to(o.dtype), o, self.atol, self.rtol)):
                        self.add("task-identity-output-passes", "reject", f"returning input {j} unchanged matches output "
                                 f"{k} within tolerance", f"shape {tuple(x.shape)}")
                        break

    def _signed_run(self, given: list) -> tuple[list, list[torch.Tensor]] | None:
        """(inputs, outputs) on standard normal inputs of the given shapes, as the verifier's `signed` trials draw
        them, or None where the reference is undefined or not finite there (log of a negative)."""
        inputs = redraw(given, "normal", 4321)
        try:
            outs = self.run(inputs)
        except Exception:  # noqa: BLE001 - undefined on signed inputs: the given inputs alone decide
            return None
        if any(_floating(o) and not torch.isfinite(o).all() for o in outs):
            return None
        return inputs, outs

    def check_signs(self, reference_out: list[torch.Tensor]) -> None:
        """Flag inputs that are all non-negative while the operator treats negative values differently."""
        inputs = self.inputs_for(0)
        floats = [x for x in inputs if isinstance(x, torch.Tensor) and _floating(x)]
        self.checks.append("task-positive-inputs-hide-sign")
        if not floats or any(bool((x < 0).any()) for x in floats):
            return
        gen = torch.Generator().manual_seed(1234)
        signed = [(x * torch.where(torch.rand(x.shape, generator=gen) < 0.5, -1.0, 1.0).to(x.device, x.dtype))
                  if isinstance(x, torch.Tensor) and _floating(x) else x for x in inputs]
        try:
            out_signed = self.run(signed)
            out_abs = self.run([x.abs() if isinstance(x, torch.Tensor) and _floating(x) else x for x in signed])
        except Exception:  # noqa: BLE001 - an operator undefined for negatives is not this rule's business
            return
        if any(_floating(o) and not torch.isfinite(o).all() for o in out_signed):
            return
        if any(not close_enough(a, b, self.atol, self.rtol) for a, b in zip(out_signed, out_abs, strict=True)):
            self.add("task-positive-inputs-hide-sign", "flag", "get_inputs() draws only non-negative values, yet the "
                     "output changes for negative inputs; a kernel that mishandles negatives would pass",
                     f"max difference {fmt(max(max_error(a, b) for a, b in zip(out_signed, out_abs, strict=True)))}")

    def cross_check(self, other: str, reference_out: list[torch.Tensor]) -> None:
        """Run the reference on `other` too (same weights, same inputs) and flag a failure or a difference."""
        self.checks.append("task-device-mismatch")
        try:
            model = self.model.to(other)
            with torch.no_grad():
                outs = as_outputs(model(*[x.to(other) if isinstance(x, torch.Tensor) else x
                                          for x in self.inputs_for(0)]))
            outs = [o.detach().to(self.device) for o in outs]  # small: cross-checks are capped in size
        except Exception as exc:  # noqa: BLE001 - reported as a finding
            self.add("task-device-mismatch", "flag", f"the reference fails on {other}", f"{type(exc).__name__}: {exc}")
            return
        finally:
            self.model.to(self.device)
        tol = 10 * self.atol
        for k, (a, b) in enumerate(zip(reference_out, outs, strict=True)):
            if not close_enough(a, b, tol, tol):
                self.add("task-device-mismatch", "flag", f"output {k} on {other} differs from {self.device} beyond "
                         f"{tol}", f"max abs error {fmt(max_error(a, b))}")


def _clone(x: object) -> object:
    return x.clone() if isinstance(x, torch.Tensor) else x
