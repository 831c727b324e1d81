"""The `torch.compile` baseline's timing samples, kept on disk across processes.

Building the baseline (Inductor) and timing it is a large share of a verdict, and it depends only on the problem,
never on the candidate. Samples are kept per (problem, seed, device, precision, torch, Triton, timing settings)
under the build cache. Only this baseline is cached: the eager samples also calibrate the candidate's wall-clock
check (`timing-wall-clock` compares the candidate's burst with eager's, in the same run and host load), so eager
is timed live in every verdict. Written by the trusted parent from reference-worker replies; a candidate never
reaches the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from kernelmosaic.paths import judge_dir, write_atomic
from kernelmosaic.verify.config import VerifyConfig

__all__ = ["CompileBaseline", "baseline_key", "load_baseline", "save_baseline"]

log = logging.getLogger(__name__)


class CompileBaseline(BaseModel):
    model_config = ConfigDict(extra="forbid")
    samples: list[float]
    """Device-time samples of every round (CPU: host time)."""
    host_samples: list[float]
    """Host-inclusive samples of every round."""


def baseline_key(problem_sha: str, env: dict, device: str, config: VerifyConfig) -> str:
    rounds, budget = config.timing_plan()
    material = {"problem": problem_sha, "seed": config.seed, "device": device, "precision": config.precision,
                "host": env.get("hostname", ""), "device_name": env.get("device_name", ""),
                "gpu_uuid": env.get("gpu_uuid", ""), "torch": env.get("torch", ""), "cuda": env.get("cuda", ""),
                "triton": env.get("triton", ""), "profile": config.timing_profile, "rounds": rounds, "budget": budget,
                "wall_ms": config.timing_wall_ms(),
                "lead_us": config.timing_lead_us, "visible": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def _path(cache_dir: Path, key: str) -> Path:
    return judge_dir(cache_dir) / "baselines" / f"compile-{key}.json"


def load_baseline(cache_dir: Path, key: str) -> CompileBaseline | None:
    try:
        return CompileBaseline.model_validate_json(_path(cache_dir, key).read_text())
    except (OSError, ValidationError, ValueError):
        return None


def save_baseline(cache_dir: Path, key: str, baseline: CompileBaseline) -> None:
    path = _path(cache_dir, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, baseline.model_dump_json())  # (two device slots may save one key at once)
    except OSError as exc:  # a cache that cannot be written costs time, never a verdict
        log.warning("could not keep the torch.compile baseline: %s", exc)
