"""How many bytes a problem must move and how many FLOPs it does, from shapes alone, for roofline fractions.

The reference is task code, so it runs in a child process (never in the agent), on torch's `meta`
device: no memory is allocated and nothing is computed, only shapes propagate.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.results import DevicePeaks

__all__ = ["Workload", "estimate_workload", "roofline_text"]

log = logging.getLogger(__name__)
_CACHE: dict[tuple[str, str], Workload] = {}


class Workload(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    known: bool = False
    """False when the shapes could not be propagated (the figures below are then 0)."""
    bytes: int = 0
    """Lower bound of memory traffic: inputs, outputs, parameters and buffers, each touched once."""
    flops: float = 0.0
    """FLOPs counted by torch's FlopCounterMode (matmul/conv-like ops; 0 for purely elementwise work)."""
    note: str = ""
    """Why the estimate is missing, when it is."""


def estimate_workload(problem: Path, precision: str = "fp32", timeout_s: float = 120.0) -> Workload:
    """Bytes and FLOPs of `problem` at its written shapes; cached per (file content, precision)."""
    key = (Path(problem).read_text(encoding="utf-8"), precision)
    if key in _CACHE:
        return _CACHE[key]
    try:
        done = subprocess.run([sys.executable, "-m", "kernelmosaic.agent.workload", str(problem), precision],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
        result = Workload.model_validate_json(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else \
            Workload(note=f"estimator exited {done.returncode}: {done.stderr.strip()[-200:]}")
    except (subprocess.TimeoutExpired, ValueError) as exc:
        result = Workload(note=f"estimator failed: {type(exc).__name__}")
    if not result.known:
        log.info("no workload estimate for %s: %s", problem, result.note)
    _CACHE[key] = result
    return result


def roofline_text(workload: Workload, median_ms: float, peaks: DevicePeaks, precision: str) -> str:
    """'achieved X GB/s = p% of peak; Y TFLOP/s = q% of peak' for the figures that are known."""
    if not workload.known or median_ms <= 0 or peaks is None:
        return ""
    seconds = median_ms / 1e3
    parts = []
    if workload.bytes and peaks.bandwidth_gbps > 0:
        gbps = workload.bytes / seconds / 1e9
        parts.append(f"{gbps:.3g} GB/s = {100 * gbps / peaks.bandwidth_gbps:.1f}% of {peaks.bandwidth_gbps:.0f} GB/s peak "
                     f"(at least {workload.bytes / 1e6:.3g} MB moved)")
    peak_tflops = peaks.fp32_tflops if precision == "fp32" else peaks.bf16_tflops
    if workload.flops and peak_tflops > 0:
        tflops = workload.flops / seconds / 1e12
        parts.append(f"{tflops:.3g} TFLOP/s = {100 * tflops / peak_tflops:.1f}% of {peak_tflops:.3g} TFLOP/s {precision} peak")
    if not parts:
        return ""
    return "achieved: " + "; ".join(parts) + ("" if peaks.measured else " (nominal peaks)")


def _measure(problem: str, precision: str) -> Workload:
    import importlib.util

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    spec = importlib.util.spec_from_file_location("km_workload_problem", problem)
    module = importlib.util.module_from_spec(spec)
    half = {"fp16": 2, "bf16": 2}.get(precision)

    def size(t: Any) -> int:
        if not isinstance(t, torch.Tensor):
            return 0
        return t.numel() * (half if half and t.is_floating_point() else t.element_size())

    def flat(x: Any) -> list:
        return [y for item in x for y in flat(item)] if isinstance(x, list | tuple) else [x]

    with torch.device("meta"), torch.no_grad():
        spec.loader.exec_module(module)
        model = module.Model(*module.get_init_inputs())
        inputs = list(module.get_inputs())
        with FlopCounterMode(display=False) as counter:
            out = model(*inputs)
    tensors = flat(inputs) + flat(out) + list(model.parameters()) + list(model.buffers())
    return Workload(known=True, bytes=sum(size(t) for t in tensors), flops=float(counter.get_total_flops()))


if __name__ == "__main__":
    try:
        print(_measure(sys.argv[1], sys.argv[2]).model_dump_json())
    except Exception as exc:  # noqa: BLE001 - any failure of task code means "no estimate", reported as data
        print(json.dumps({"known": False, "note": f"{type(exc).__name__}: {str(exc)[:200]}"}))
