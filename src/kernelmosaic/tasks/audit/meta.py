"""Shape checks without computing: the default and alternative shapes are run on torch's `meta` device,
which propagates shapes and dtypes but allocates no memory. Standard library and torch only.
"""

from __future__ import annotations

import types
from collections.abc import Callable

import torch

__all__ = ["check_shapes"]


def _bytes(values: list) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def check_shapes(job: dict, load: Callable[[str, str], types.ModuleType], add: Callable[..., None],
                 checks: list[str]) -> None:
    """`alternative-shapes`: each alternative runs (on meta); `default-shapes-memory`: the default shapes' inputs
    and outputs fit in `max_default_gb`."""
    checks += ["task-default-shapes", "task-alternative-shapes", "task-default-shapes-memory"]
    sources = [("default", job.get("reference_default", ""))] + [
        (f"alternatives[{i}]", src) for i, src in enumerate(job.get("alternatives", []))]
    for label, source in sources:
        if not source:
            continue
        try:
            with torch.device("meta"):
                module = load(source, f"{job['id']}/reference.py ({label})")
                torch.manual_seed(0)
                model = module.Model(*module.get_init_inputs())
                inputs = list(module.get_inputs())
                with torch.no_grad():
                    out = model(*inputs)
        except NotImplementedError:
            continue  # an operator without a meta kernel: the shapes cannot be checked this way
        except Exception as exc:  # noqa: BLE001 - reported as a finding
            if "meta" in str(exc).lower():  # data-dependent ops (item(), nonzero) cannot run on meta
                continue
            add("task-default-shapes" if label == "default" else "task-alternative-shapes",
                "reject" if label == "default" else "flag", f"the reference fails at its {label} shapes",
                f"{type(exc).__name__}: {str(exc)[:300]}")
            continue
        if label == "default":
            outs = [out] if isinstance(out, torch.Tensor) else list(out) if isinstance(out, list | tuple) else []
            size = (_bytes(inputs) + _bytes(outs)) / 2**30
            if size > job.get("max_default_gb", 40.0):
                add("task-default-shapes-memory", "flag", f"inputs and outputs at the default shapes take {size:.1f} GiB",
                    f"limit {job.get('max_default_gb', 40.0)} GiB")
