"""Model backends chosen by name: `get_model("SCHEME:TARGET", **options)` looks the scheme up here.

Built-in schemes import their module only when used, so `replay:` and `scripted:` work without
transformers installed and importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelmosaic.models.base import ModelBackend, ModelConfigError

__all__ = ["BackendFactory", "register_backend", "backend_schemes", "get_model"]

BackendFactory = Callable[..., ModelBackend]
"""Called as `factory(target, **options)` with the text after the first ':' of the spec."""

_FACTORIES: dict[str, BackendFactory] = {}


def register_backend(scheme: str, factory: BackendFactory) -> None:
    """Make `get_model("SCHEME:...")` use `factory`; a later registration of the same scheme replaces it."""
    if not scheme.isidentifier():
        raise ModelConfigError(f"backend scheme {scheme!r} must be a plain word")
    _FACTORIES[scheme] = factory


def backend_schemes() -> list[str]:
    return sorted(_FACTORIES)


def get_model(spec: str, **options: Any) -> ModelBackend:
    """Build the backend `spec` names, e.g. `openai:gpt-4o`, `hf:/models/qwen`, `replay:run.jsonl`, `scripted:echo`.

    Options go to the backend's typed config; an unknown scheme, a bad option or a missing file
    raises `ModelConfigError` saying which.
    """
    scheme, sep, target = spec.partition(":")
    if not sep or not target:
        raise ModelConfigError(f"model spec {spec!r} must look like SCHEME:TARGET (schemes: {', '.join(backend_schemes())})")
    factory = _FACTORIES.get(scheme)
    if factory is None:
        raise ModelConfigError(f"unknown model scheme {scheme!r} in {spec!r} (known: {', '.join(backend_schemes())})")
    return factory(target, **options)


def _openai(target: str, **options: Any) -> ModelBackend:
    from kernelmosaic.models.openai_backend import OpenAIBackend
    from kernelmosaic.models.openai_config import OpenAIConfig

    return OpenAIBackend(OpenAIConfig.from_env(target, **options))


def _hf(target: str, **options: Any) -> ModelBackend:
    from kernelmosaic.models.hf_backend import hf_backend

    return hf_backend(target, **options)


def _replay(target: str, task_id: str = "", **options: Any) -> ModelBackend:
    from kernelmosaic.models.replay import replay_model

    if options:
        raise ModelConfigError(f"replay:{target}: unknown options {sorted(options)} (only task_id)")
    return replay_model(target, task_id=task_id)


def _scripted(target: str, **options: Any) -> ModelBackend:
    from kernelmosaic.models.scripted import scripted_model

    if options:
        raise ModelConfigError(f"scripted:{target}: scripted models take no options, got {sorted(options)}")
    return scripted_model(target)


register_backend("openai", _openai)
register_backend("hf", _hf)
register_backend("replay", _replay)
register_backend("scripted", _scripted)
