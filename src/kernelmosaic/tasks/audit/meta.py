"""Shapes and sizes without computing: references run on torch's `meta` device, which propagates shapes and dtypes
but allocates no memory. It decides the shapes an audit runs at and whether a worker can hold them before any real
tensor exists, and checks the default and alternative shapes. Standard library and torch only.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = ["Footprint", "audited_job", "check_shapes", "footprint"]

Loader = Callable[[str, str], types.ModuleType]


@dataclass(frozen=True)
class Footprint:
    """One forward of a reference at some shapes, run on meta. `known` is False when meta could not run it: an
    operator without a meta kernel or a data-dependent one (`error` empty), or the reference fails there (`error`)."""

    known: bool
    elements: int = 0
    """Elements of the inputs and outputs, which the audit's element budget counts."""
    weight_bytes: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    error: str = ""

    @property
    def nbytes(self) -> int:
        """Weights, inputs and outputs: what one forward holds."""
        return self.weight_bytes + self.input_bytes + self.output_bytes

    def host_bytes(self, device: str) -> int:
        """What an audit holds in host memory on `device`. On a GPU the weights and each draw of inputs pass through
        the host (both are made on the CPU and moved); on the CPU an audit also holds the clone of the inputs a call
        gets and the outputs of every seed and a repeat (five sets)."""
        if device == "cpu":
            return self.weight_bytes + 2 * self.input_bytes + 5 * self.output_bytes
        return self.weight_bytes + self.input_bytes


def _tensors(values: object) -> list[torch.Tensor]:
    if isinstance(values, torch.Tensor):
        return [values]
    return [v for v in values if isinstance(v, torch.Tensor)] if isinstance(values, list | tuple) else []


def _bytes(tensors: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def footprint(source: str, name: str, load: Loader) -> Footprint:
    """Load `source` and run one forward on meta; what it would hold, or why it cannot be known."""
    try:
        with torch.device("meta"):
            module = load(source, name)
            torch.manual_seed(0)
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
            with torch.no_grad():
                outs = _tensors(model(*inputs))
    except NotImplementedError:
        return Footprint(known=False)  # an operator without a meta kernel
    except BaseException as exc:  # noqa: BLE001 - SystemExit from task code too; the caller decides what it means
        if "meta" in str(exc).lower():  # data-dependent ops (item(), nonzero) cannot run on meta
            return Footprint(known=False)
        return Footprint(known=False, error=f"{type(exc).__name__}: {str(exc)[:300]}")
    weights = [*model.parameters(), *model.buffers()] if isinstance(model, torch.nn.Module) else []
    given = _tensors(inputs)
    return Footprint(known=True, elements=sum(t.numel() for t in given + outs), weight_bytes=_bytes(weights),
                     input_bytes=_bytes(given), output_bytes=_bytes(outs))


def audited_job(job: dict, default: Footprint, load: Loader) -> tuple[dict, Footprint]:
    """The job to run and its footprint. A job carries `derived` shapes only for a task that declares no small
    ones; they replace the stated shapes when those hold more than `max_elements` and the reference runs at them
    on meta (a network whose layers are sized for its stated input does not: it is audited as stated, and the job
    says why in `unshrunk`)."""
    derived = job.get("derived")
    if derived and default.known and default.elements > job["max_elements"]:
        small = footprint(derived["reference"], f"{job['id']}/reference.py (derived shapes)", load)
        if small.known:
            return {**job, **derived}, small
        job = {**job, "unshrunk": f"at {derived['shapes']} {small.error or 'meta cannot run the reference'}"}
    if job["reference"] == job["reference_default"]:
        return job, default
    return job, footprint(job["reference"], f"{job['id']}/reference.py", load)


def check_shapes(job: dict, default: Footprint, load: Loader, add: Callable[..., None], checks: list[str]) -> None:
    """`default-shapes`: the reference runs at its default shapes (`default`, measured by the caller);
    `alternative-shapes`: each alternative runs; `default-shapes-memory`: the default shapes' inputs and outputs fit
    in `max_default_gb`."""
    checks += ["task-default-shapes", "task-alternative-shapes", "task-default-shapes-memory"]
    if default.error:
        add("task-default-shapes", "reject", "the reference fails at its default shapes", default.error)
    elif default.known:
        size = (default.input_bytes + default.output_bytes) / 2**30
        if size > job.get("max_default_gb", 40.0):
            add("task-default-shapes-memory", "flag", f"inputs and outputs at the default shapes take {size:.1f} GiB",
                f"limit {job.get('max_default_gb', 40.0)} GiB")
    for i, source in enumerate(job.get("alternatives", [])):
        label = f"alternatives[{i}]"
        found = footprint(source, f"{job['id']}/reference.py ({label})", load)
        if found.error:
            add("task-alternative-shapes", "flag", f"the reference fails at its {label} shapes", found.error)
