"""Where a command's work runs: the config file's `[scale]` section, `--set scale.KEY=VALUE`, `--executor`,
`--ray-address`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.config import build

__all__ = ["ScaleConfig", "scale_settings"]


class ScaleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    executor: Literal["local", "ray"] = "local"
    """`local`: this machine (a CPU pool for compiles, one long-lived worker slot per visible GPU). `ray`: a Ray
    cluster (compile jobs as CPU tasks, judgement on one actor per GPU, episodes on episode actors); needs the
    `[ray]` extra. See docs/scale.md."""
    ray_address: str | None = None
    """Ray cluster to join (`auto`, `ray://HEAD:10001`, `HEAD:6379`); unset: `RAY_ADDRESS` if set, else a Ray
    instance started on this machine for the command."""
    judges: int | None = Field(None, ge=1)
    """Judge actors (each holds one GPU and its warm workers). Default: every GPU of the cluster not reserved for
    in-process models (`model_gpus`); on a cluster without GPU resources, one judge on the CPU device."""
    judge_concurrency: int = Field(4, ge=1)
    """Calls one judge actor takes at once (its judgements still queue on its one device slot)."""
    compile_cpus: float = Field(1.0, gt=0)
    """CPU resources one compile task requests."""
    max_attempts: int = Field(3, ge=1)
    """Times a job or an episode is tried when the actor or worker running it dies (the node was lost, the
    process was killed); after that the command fails naming the job."""
    episode_actors: int | None = Field(None, ge=1)
    """Actors running agent episodes (each runs several at once, up to the run's concurrency in all). Default:
    `min(concurrency, 4)`, or one per GPU reserved for an in-process model."""
    model_gpus: float = Field(1.0, ge=0)
    """GPU resources each episode actor requests when the model runs in-process (`hf:`), so a model never shares a
    GPU with a judge. OpenAI-compatible servers run elsewhere: their episode actors request no GPU."""
    model_concurrency: int = Field(0, ge=0)
    """Model calls in flight at once per model endpoint (model spec and base URL), across every episode actor of
    the cluster; 0 = no limit beyond the run's concurrency."""


def scale_settings(tree: Mapping[str, Any], executor: str | None = None, ray_address: str | None = None) -> ScaleConfig:
    """ScaleConfig from the config tree's `[scale]` section and the command's flags (None = not given)."""
    return build(ScaleConfig, tree, "scale", flags={"executor": executor, "ray_address": ray_address})
