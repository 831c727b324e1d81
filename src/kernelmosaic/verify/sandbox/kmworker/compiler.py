"""The compile role: executes the candidate's top level on a CPU-only process so its extensions get built.

Builds land in the content-hashed cache, so the GPU worker that loads the candidate next finds them ready; this is
what lets compiles run on a CPU pool while the GPU judges something else.
"""

from __future__ import annotations

from .common import describe_error
from .loader import BuildRecorder, load_module

__all__ = ["compile_candidate"]


def compile_candidate(candidate: str, cache_dir: str, wait: bool = True, pch_dir: str | None = None) -> dict:
    """`wait=False`: an extension another process is building is reported (`busy`), not waited for. `pch_dir`: the
    precompiled headers' store, read only (the verifier's process writes it, `verify/pch_store.py`)."""
    recorder = BuildRecorder(cache_dir, wait=wait, pch_dir=pch_dir)
    import_error = None
    with recorder:
        try:
            load_module(candidate, "km_compile")
        except BaseException as exc:  # noqa: BLE001 - any failure of untrusted code is data here
            import_error = describe_error(exc)
    failed = [b for b in recorder.builds if not b["ok"]]
    return {"builds": recorder.builds, "build_failed": bool(failed),
            "import_error": import_error}
