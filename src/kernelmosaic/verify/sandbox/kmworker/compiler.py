"""The compile role: what a candidate's top level asks `load_inline` for (`compile_candidate`, which runs the
candidate's code and builds nothing), and the build of one such extension by a process that runs none of it
(`build_one`, the builder). `published.py` says why they are apart.

Builds land in the content-hashed cache, so the GPU worker that loads the candidate next finds them ready; this is
what lets compiles run on a CPU pool while the GPU judges something else.
"""

from __future__ import annotations

from .common import describe_error
from .loader import BuildRecorder, build_key, load_module
from .published import NeedsBuild

__all__ = ["compile_candidate", "build_one"]


def compile_candidate(candidate: str, cache_dir: str) -> dict:
    """Import the candidate with published extensions loaded and the others recorded (`wanted`, for the builder).
    `stopped`: the import used an extension not built yet and stopped there (import again once it is)."""
    recorder = BuildRecorder(cache_dir, mode="capture")
    import_error, stopped = None, False
    with recorder:
        try:
            load_module(candidate, "km_compile")
        except NeedsBuild:
            stopped = True
        except BaseException as exc:  # noqa: BLE001 - any failure of untrusted code is data here
            import_error = describe_error(exc)
    failed = [b for b in recorder.builds if not b["ok"]]
    return {"builds": recorder.builds, "build_failed": bool(failed), "import_error": import_error,
            "wanted": recorder.wanted, "stopped": stopped}


def build_one(spec: dict, key: str, cache_dir: str, wait: bool = True, pch_dir: str | None = None) -> dict:
    """Build one extension from its `load_inline` arguments into the shared cache and mark it published, loading
    nothing. `key`: the build key the compile worker computed for it, which must be this process's own (this
    worker may write only that extension's folder)."""
    if build_key({"cuda_sources": None, **spec}) != key:
        raise ValueError("the extension's build key is not the one asked for")
    recorder = BuildRecorder(cache_dir, wait=wait, pch_dir=pch_dir, mode="build")
    error = None
    with recorder:
        from torch.utils import cpp_extension

        try:
            cpp_extension.load_inline(**spec)
        except BaseException as exc:  # noqa: BLE001 - a build failure is data here
            error = describe_error(exc)
    return {"builds": recorder.builds, "error": error}
