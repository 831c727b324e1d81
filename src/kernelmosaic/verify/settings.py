"""The verifier's settings for one command: defaults, the config file's `[verify]` section, `--set`, explicit flags.

The device defaults the way `generate` picks it: CUDA when torch sees a GPU, else the CPU. A CUDA device asked for
on a machine without one is refused before any worker starts, naming where the request came from. Which devices
the machine has is asked of a `probe` (by default torch in this process; the `verify` client asks the running
verifier service instead, so that it never imports torch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from kernelmosaic.config import build
from kernelmosaic.verify.config import VerifyConfig

__all__ = ["DeviceUnavailable", "default_device", "no_gpu", "require_device", "run_device", "verify_settings"]


class DeviceUnavailable(ValueError):
    """The settings ask for a device this machine does not have; the message says which setting asked."""


def default_device() -> Literal["cuda", "cpu"]:
    """`cuda` when torch sees a GPU, else `cpu`."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def no_gpu(asked: str, cpu: str = "--device cpu") -> DeviceUnavailable:
    """The one-sentence refusal of `cuda` on a machine where torch sees no GPU: `asked` names the setting that asked
    for it, `cpu` how to ask for the CPU instead (the CLI's flag, or the Python API's argument)."""
    import torch

    build_kind = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
    return DeviceUnavailable(f"{asked}: torch {torch.__version__} ({build_kind}) sees no CUDA GPU on this machine; "
                             f"use {cpu} (C++ load_inline candidates) or run on a GPU machine")


def require_device(config: VerifyConfig) -> None:
    """Raise `no_gpu` for a `Verifier` built in Python with `device="cuda"` (VerifyConfig's default) on a machine
    without a GPU, before any worker starts: otherwise the first worker fails inside torch with a traceback."""
    if config.device == "cuda" and default_device() != "cuda":
        raise no_gpu('VerifyConfig(device="cuda")', 'VerifyConfig(device="cpu")')


def run_device(flag: str | None, verify_section: Mapping[str, Any] | None, *chosen: str | None) -> str:
    """The device a run (generate, evaluate) works and judges on, by the one precedence rule of settings: the
    `--device` flag, then `chosen` in order (the run's own section, then what a recording was made on), then the
    settings' `[verify] device` (the file or `--set`), then this machine's default. The run's verifier settings take
    this device over their own `device` key, so the agent and its verifier never disagree."""
    for value in (flag, *chosen[:1], (verify_section or {}).get("device"), *chosen[1:]):
        if value:
            return str(value)
    return default_device()


def verify_settings(tree: Mapping[str, Any], flags: Mapping[str, Any],
                    probe: Callable[[VerifyConfig], str] | None = None) -> VerifyConfig:
    """VerifyConfig from `tree` (`read_config`) and explicit `flags` (None = not given), flags winning. The
    `torch.compile` baseline, when neither says, is timed on CUDA only (as `generate` and `evaluate` do).

    `probe(config)` says which device the machine offers (`cuda` or `cpu`); it is asked only when no device was
    chosen or `cuda` was. Raises `ConfigError` for a bad value (naming the file or option, the key and what is
    allowed) and `DeviceUnavailable` for `cuda` on a machine where torch sees no GPU."""
    probe = probe or (lambda _config: default_device())
    section = tree.get("verify")
    from_file = section.get("device") if isinstance(section, dict) else None
    config = build(VerifyConfig, tree, "verify", base={}, flags=flags)
    seen = probe(config) if config.device == "cuda" or not (flags.get("device") or from_file) else "cpu"
    if not (flags.get("device") or from_file):
        config = build(VerifyConfig, tree, "verify", base={"device": seen}, flags=flags)
    if config.device == "cuda" and seen != "cuda":
        raise no_gpu("--device cuda" if flags.get("device") else
                     f"[verify] device = \"cuda\" ({tree.get('__file__', '--set')})")
    if flags.get("compile_baseline") is None and not (isinstance(section, dict) and "compile_baseline" in section):
        # the commands' one default (generate's and evaluate's too, runs.config.owned_setting): on CUDA only
        config = config.model_copy(update={"compile_baseline": config.device == "cuda"})
    return config
