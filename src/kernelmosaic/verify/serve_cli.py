"""`kernelmosaic verify-serve`: the local verifier service in the foreground (`verify/service.py`)."""

from __future__ import annotations

import typer

from kernelmosaic.commands import Console, Device, fail
from kernelmosaic.verify.cli import ConfigFile, Sets, cli_settings
from kernelmosaic.verify.stopping import stop_on_signal

__all__ = ["verify_serve_command"]


def verify_serve_command(
    device: Device = None,
    config_file: ConfigFile = None,
    sets: Sets = [],  # noqa: B006 - typer reads the default, never mutates it
) -> None:
    """Run the local verifier service until interrupted: `verify` and `verify-batch` with the same build cache
    hand their work to it, and reuse its warm workers. One per machine (per cache); it owns the devices."""
    import logging

    from kernelmosaic.paths import socket_path
    from kernelmosaic.verify.service import serve

    config = cli_settings(config_file, sets, device=device)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    Console(stderr=True).print(f"verifier service on {socket_path(config.cache_dir)} (Ctrl-C stops it)")
    try:
        with stop_on_signal():  # SIGINT or SIGTERM: requests in flight end, workers killed, socket removed
            serve(config.cache_dir, settings=config)
    except RuntimeError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        Console(stderr=True).print("verifier service stopped")
        raise typer.Exit(130) from None
