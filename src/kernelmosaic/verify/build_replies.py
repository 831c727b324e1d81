"""The compile workers' replies, typed and checked on arrival: the compile worker's (it imports the candidate, so its
reply is the candidate's to forge: a malformed one is a `worker-reply` rejection) and the builder's (it runs none of
the candidate's code: a malformed one is the verifier's failure to build)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kernelmosaic.verify.replies import Reply, parse_reply

__all__ = ["BuildRecord", "WorkerFailure", "CompileReply", "BuildReply", "compile_reply", "build_reply"]


class BuildRecord(Reply):
    """One `load_inline` the worker saw: built here, found built (`cache_hit`), or failed."""

    name: str
    key: str
    """The build key (a content hash of the extension's sources and flags)."""
    cache_hit: bool
    seconds: float = Field(ge=0.0)
    log: str
    """The compiler's output."""
    ok: bool
    pch: bool = False
    """Built with the precompiled torch header."""
    steps: dict[str, float] = Field(default_factory=dict)
    """Seconds per build step (ninja outputs, nvcc phases) of a build made here."""
    busy: bool = False
    """Failed because another process held the extension's build lock (and this one was not to wait)."""
    diagnosed: bool = False
    """The compiler ran and said no: building again fails again."""
    pch_wanted: dict[str, str] | None = None
    """A precompiled header the build would have used, for the parent to make (`key`, `build_dir`)."""


class WorkerFailure(Reply):
    """An exception in a worker, described (`kmworker.common.describe_error`)."""

    type: str
    message: str
    traceback: str = ""
    cuda: bool = False
    oom: bool = False


class CompileReply(Reply):
    builds: list[BuildRecord]
    import_error: WorkerFailure | None = None
    """The candidate's import raised (None: it imported, or stopped at an unbuilt extension)."""
    wanted: list[dict[str, Any]] = Field(default_factory=list)
    """Extensions the import asked for and found unbuilt (`spec`, `key`): checked one by one before any is built."""
    stopped: bool = False
    """The import stopped at an extension not built yet: import again once it is."""


class BuildReply(Reply):
    builds: list[BuildRecord]
    error: WorkerFailure | None = None
    """`load_inline` raised before or during the build."""


def compile_reply(raw: object) -> CompileReply:
    """The compile worker's reply, or Stop (`worker-reply`, an integrity violation) naming the first field wrong."""
    return parse_reply(CompileReply, raw, "compiling", candidate=True, rule="worker-reply")


def build_reply(raw: object) -> BuildReply:
    """The builder's reply, or Stop (`bad_problem`: the verifier could not build) naming the first field wrong."""
    return parse_reply(BuildReply, raw, "building an extension", candidate=False)
