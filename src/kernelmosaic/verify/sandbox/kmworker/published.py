"""Extensions built by a process that runs no candidate code, and loaded by the ones that do. Standard library and
torch only.

The build cache is shared by every candidate, so no process that runs candidate code may write it: a candidate could
plant a binary in the folder of an extension another candidate will ask for (docs/threat-model.md, the build cache).
So the compile worker, which imports the candidate, builds nothing: its `load_inline` loads an extension that is
already published, and otherwise records what the candidate asked for (`wanted`: the arguments, JSON) and hands the
candidate an `Unbuilt` stand-in. The verifier then builds each wanted extension in a builder (`compiler.build_one`, a
confined worker whose only writable folder is that extension's, which imports nothing of the candidate's and never
loads what it built), and the builder marks the folder `km_published`. Candidate workers load published extensions
read-only; one they ask for later (a build inside `__init__` or `forward`) is built in their own scratch folder,
for them alone.
"""

from __future__ import annotations

import importlib.util
import json
import types
from pathlib import Path

__all__ = ["PUBLISHED", "NeedsBuild", "Unbuilt", "is_published", "load", "spec_of"]

PUBLISHED = "km_published"
"""In a build folder: written by the builder after the extension built; nothing is loaded from a folder without it."""


class NeedsBuild(BaseException):
    """The candidate used an extension that is not built yet (the compile stage builds it and imports again). A
    BaseException, so a candidate's `except Exception` fallback does not take it for its own kernel failing."""


class Unbuilt:
    """What the compile worker's `load_inline` returns for an extension not yet published: any use of it stops the
    import (`NeedsBuild`); defining it, as most candidates do at their top level, does not."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_km_name", name)

    def __getattr__(self, attr: str):
        raise NeedsBuild(object.__getattribute__(self, "_km_name"))

    def __setattr__(self, attr: str, value) -> None:
        raise NeedsBuild(object.__getattribute__(self, "_km_name"))

    def __call__(self, *args, **kwargs):
        raise NeedsBuild(object.__getattribute__(self, "_km_name"))


def spec_of(name: str, cpp_sources, cuda_sources, kwargs: dict) -> dict:
    """The `load_inline` call as JSON data for the builder; TypeError names an argument that is not plain data."""
    spec = {"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources,
            **{k: v for k, v in kwargs.items() if k not in ("build_directory", "verbose")}}
    for key, value in spec.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(f"load_inline argument `{key}` is not plain data (strings, numbers, lists): the verifier "
                            "builds extensions from their arguments alone") from None
    return spec


def is_published(build_dir: Path, name: str) -> bool:
    return (build_dir / PUBLISHED).is_file() and (build_dir / f"{name}.so").is_file()


def load(build_dir: Path, name: str, is_python_module: bool = True) -> types.ModuleType | str:
    """The published extension, loaded the way `load_inline` loads what it built (a Python module, or the library's
    path after registering its operators), without touching the folder."""
    path = build_dir / f"{name}.so"
    if not is_python_module:
        import torch

        torch.ops.load_library(str(path))
        return str(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the built extension {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
