"""The Ray cluster as the rest of the code sees it: imported lazily (the `[ray]` extra), joined or started once per
command, its live nodes, and the store check a multi-node run must pass."""

from __future__ import annotations

import logging
import os
from types import ModuleType
from typing import Any

from kernelmosaic.verify.ray.config import ScaleConfig

__all__ = ["RayUnavailable", "StoreNotShared", "import_ray", "connect", "alive_nodes", "check_store_for_nodes",
           "gpu_total", "portable_url"]

log = logging.getLogger(__name__)


class RayUnavailable(RuntimeError):
    """`--executor ray` without Ray installed, or a cluster that cannot be joined."""


class StoreNotShared(ValueError):
    """A store the workers of a multi-node cluster cannot all reach (a SQLite file)."""


def import_ray() -> ModuleType:
    """`ray`, or an error naming the extra that installs it."""
    try:
        import ray
    except ModuleNotFoundError as exc:
        raise RayUnavailable("--executor ray needs Ray: pip install 'kernelmosaic[ray]' (or pip install 'ray>=2.40')"
                             ) from exc
    return ray


def connect(config: ScaleConfig) -> ModuleType:
    """Join `ray_address` (or `RAY_ADDRESS`), or start a local instance; a no-op when this process is connected."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    address = config.ray_address or os.environ.get("RAY_ADDRESS") or None
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"cannot join the Ray cluster at {address!r}: {exc}") from exc
    return ray


def alive_nodes() -> list[dict[str, Any]]:
    """The cluster's live nodes (`ray.nodes()` entries)."""
    return [n for n in import_ray().nodes() if n.get("Alive")]


def gpu_total() -> int:
    """GPU resources of the whole cluster (logical ones too: `ray start --num-gpus 2` on a CPU machine)."""
    return int(import_ray().cluster_resources().get("GPU", 0))


def check_store_for_nodes(store_url: str, nodes: int) -> None:
    """Refuse a SQLite store when the work may run on `nodes` > 1 machines: each would write its own file, and the
    run would be split between them. PostgreSQL (`postgresql://...`) is the store every node reaches."""
    from kernelmosaic.store.backends import as_url

    if nodes > 1 and as_url(store_url).startswith("sqlite"):
        raise StoreNotShared(f"store {store_url!r} is a SQLite file, but the Ray cluster has {nodes} live nodes: "
                             "workers on other machines cannot write to it. Use a PostgreSQL URL reachable from "
                             "every node (--db postgresql://USER@HOST/DB; docs/scale.md), or a one-node cluster.")


def portable_url(url: str | None) -> str:
    """The store `url` (None: the default, `./kernelmosaic.db`) as every process of an executor reads it: a SQLite
    file by its absolute path (actors run elsewhere); `store.url` would hide a password."""
    from kernelmosaic.store.backends import as_url, default_url, sqlite_file

    url = url or default_url()
    path = sqlite_file(url)
    return f"sqlite:///{path.resolve()}" if path is not None else as_url(url)
