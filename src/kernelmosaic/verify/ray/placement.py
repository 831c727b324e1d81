"""What each actor asks the cluster for, so model calls and GPU judgement never share a GPU: judges take one GPU
each, episode actors of an in-process model (`hf:`) take `model_gpus` each, and the judges get the GPUs left."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from kernelmosaic.verify.ray.config import ScaleConfig

__all__ = ["Placement", "plan_placement"]


class Placement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judges: int
    judge_gpus: float
    """GPU resources per judge: 1, or 0 on a cluster without GPU resources (one CPU-device judge)."""
    episode_actors: int
    episode_gpus: float
    episode_cpus: float
    episodes_per_actor: int


def plan_placement(scale: ScaleConfig, cluster_gpus: int, model: str, concurrency: int, device: str) -> Placement:
    """Judges and episode actors for a run of `model` with `concurrency` episodes at once on `device`.

    Raises ValueError when the cluster cannot hold them (CUDA judging without GPUs, or no GPU left for judges)."""
    in_process = model.partition(":")[0] == "hf"
    actors = scale.episode_actors or max(1, min(concurrency, 4))
    model_gpus = scale.model_gpus if in_process else 0.0
    reserved = math.ceil(actors * model_gpus)
    if cluster_gpus == 0:
        if device == "cuda":
            raise ValueError("--device cuda on a Ray cluster without GPU resources (ray start --num-gpus N)")
        if model_gpus:
            raise ValueError(f"{model} runs in-process and asks for {model_gpus} GPU per episode actor; the cluster "
                             "has none (set scale.model_gpus=0 to run it on the CPU)")
        judges, judge_gpus = scale.judges or 1, 0.0
    else:
        judges, judge_gpus = scale.judges or cluster_gpus - reserved, 1.0
        if judges < 1 or judges + reserved > cluster_gpus:
            raise ValueError(f"the cluster has {cluster_gpus} GPU(s): {judges} judge(s) and {actors} episode actor(s) "
                             f"of {model_gpus} GPU each do not fit; set scale.judges or scale.episode_actors")
    return Placement(judges=judges, judge_gpus=judge_gpus, episode_actors=actors, episode_gpus=model_gpus,
                     episode_cpus=1.0 if in_process else 0.0, episodes_per_actor=max(1, math.ceil(concurrency / actors)))
