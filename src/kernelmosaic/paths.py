"""Where the verifier's build cache and its service socket live. Standard library only: the `kernelmosaic`
entry point (`launch.py`) finds a running service with it before importing anything else.

The service socket lives in a per-user runtime folder (0700, this user's), never in the build cache or a scratch
folder, which candidates' processes write into; its name is keyed by the build cache's path, so each cache can have
a service of its own. Client and service both check that folder and socket are this user's alone before using them
(`not_private`): another local user who made the folder first gets no connection and no argv."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["CONFIG_FILE", "PRIVATE_UMASK", "default_cache_dir", "judge_dir", "pch_dir", "private_dir", "runtime_dir", "socket_path",
           "not_private", "service_dir", "write_atomic"]

PRIVATE_UMASK = 0o077
"""Every `kernelmosaic` command creates its files 0600 and folders 0700: stores, caches, exports and reports hold
prompts, model output and verdicts, which are their owner's alone."""

CONFIG_FILE = "kernelmosaic.toml"
"""The settings file a command reads from its working directory when present (`kernelmosaic.config`)."""


def default_cache_dir() -> Path:
    """`$KERNELMOSAIC_CACHE`, else `~/.cache/kernelmosaic/build`."""
    env = os.environ.get("KERNELMOSAIC_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kernelmosaic" / "build"


def judge_dir(cache_dir: Path) -> Path:
    """Where the verifier keeps what judges with: derived problems the reference imports, cached torch.compile
    baselines, compile records, device locks. Beside the build cache (`<cache>-judge`), never inside it: workers that
    run candidate code may write into the build cache (they build there), and nothing they write may reach the
    reference or a later verdict's numbers (docs/threat-model.md)."""
    cache = Path(cache_dir)
    return cache.with_name(cache.name + "-judge")


def pch_dir(cache_dir: Path) -> Path:
    """Where the precompiled torch headers live: written only by the verifier's own process, which compiles nothing
    of a candidate's into them; read by every C++ build. `$KERNELMOSAIC_PCH`, else `~/.cache/kernelmosaic/pch`, one
    store for every build cache of this user (a header depends only on the compiler, its flags and torch's headers,
    so a new cache or run does not pay for it again). Beneath the judge folder instead when that store would lie
    inside the build cache, which workers may write."""
    env = os.environ.get("KERNELMOSAIC_PCH")
    store = Path(env) if env else Path.home() / ".cache" / "kernelmosaic" / "pch"
    cache, resolved = Path(cache_dir).resolve(), store.resolve()
    if resolved == cache or cache in resolved.parents:
        return judge_dir(cache_dir) / "pch"
    return store


def private_dir(path: Path) -> Path:
    """`path` created with its missing parents, 0700; a folder that already exists keeps its mode."""
    path = Path(path)
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.chmod(0o700)  # mkdir's mode is masked by the umask
    return path


def _own_private_dir(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def runtime_dir() -> Path:
    """`$XDG_RUNTIME_DIR/kernelmosaic` when `$XDG_RUNTIME_DIR` is this user's alone (0700), else
    `/tmp/kernelmosaic-<uid>`. Workers never get `XDG_RUNTIME_DIR` (verify/clean_env.py)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and _own_private_dir(Path(base)):
        return Path(base) / "kernelmosaic"
    return Path("/tmp") / f"kernelmosaic-{os.geteuid()}"


def socket_path(cache_dir: Path) -> Path:
    """The local verifier service's socket for a build cache (one service per cache): `verify-<hash>.sock` in the
    runtime folder, the hash of the cache's resolved path."""
    key = hashlib.sha256(str(Path(cache_dir).expanduser().resolve()).encode()).hexdigest()[:16]
    return runtime_dir() / f"verify-{key}.sock"


def not_private(path: Path, kind: str) -> str | None:
    """Why `path` (a `folder` or a `socket`) is not this user's alone, or None when it is: it must be of that kind
    (not a link), owned by this process's user, with no group or other permission bits."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None if kind == "socket" else f"{path} does not exist"
    except OSError as exc:
        return f"{path} cannot be examined ({exc})"
    is_kind = stat.S_ISDIR(st.st_mode) if kind == "folder" else stat.S_ISSOCK(st.st_mode)
    if not is_kind:
        return f"{path} is not a {kind}" + (" (a symbolic link)" if stat.S_ISLNK(st.st_mode) else "")
    if st.st_uid != os.geteuid():
        return f"{path} belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()})"
    if st.st_mode & 0o077:
        return f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: group or others may use it (0700/0600 expected)"
    return None


def service_dir() -> Path:
    """The runtime folder, created 0700 when missing; `PermissionError` naming the problem when it exists and is not
    this user's alone (a folder another user made first, or one opened to others), which the service then refuses
    to serve in."""
    path = runtime_dir()
    try:
        path.mkdir(mode=0o700, parents=False)
    except FileExistsError:
        pass
    problem = not_private(path, "folder")
    if problem:
        raise PermissionError(f"the verifier service's folder {problem}; remove it or make it yours alone "
                              f"(chmod 700), or set XDG_RUNTIME_DIR to a private folder")
    return path


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` so that no reader ever sees half of it: into a part file of this writer's own beside it
    (mode 0600; threads and processes writing one path at once each get theirs), then renamed over `path`. The part
    file is removed when the write fails."""
    fd, part = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.unlink(part)
    return path
