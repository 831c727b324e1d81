"""The command-line option every command that can run on Ray takes alike (`verify-batch`, `generate`, `evaluate`)."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["RayAddress"]

RayAddress = Annotated[str | None, typer.Option("--ray-address", help="With --executor ray: the cluster to join "
                                                "(auto, HEAD:6379, ray://HEAD:10001); default RAY_ADDRESS, else a "
                                                "Ray instance on this machine.")]
