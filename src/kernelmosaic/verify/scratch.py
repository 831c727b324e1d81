"""Worker scratch folders: where they are made, who owns them, and the sweep of those nobody is left to remove.

A worker's scratch folder (`km-<role>-*` under the temp folder) goes when its worker is killed or closed, and an
orphaned worker removes its own when its channel closes. Neither runs when the verifier's process and its workers are
killed together: a Ray actor ended with its descendants, an out-of-memory kill of a process group, a parent killed
before it spawned the worker. Without a sweep, a clean CI run leaves 13 such folders. So each folder records its
owner (the verifier's process and, once spawned, the worker's, each as pid and start time, so a reused pid is not
taken for the owner), and the first `Verifier` of a process removes the folders whose owners are all gone. A folder
kept on purpose (`keep_scratch`) records no owner and is never swept; neither is any folder without a readable record.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

from kernelmosaic.paths import write_atomic

__all__ = ["make_scratch", "record_worker", "sweep_stale_scratch", "forget_scratch", "remove_made_scratch", "OWNER_FILE"]

OWNER_FILE = "km.owner"
_NAME = re.compile(r"^km-(candidate|reference|compile|forkserver)-[A-Za-z0-9_]+$")
_SWEPT: set[str] = set()
_SWEPT_LOCK = threading.Lock()
_MADE: set[Path] = set()
"""Every scratch folder this process made and has not removed (none kept on purpose): what a stop removes, whether or
not its worker ever started (a judgement cut between making a worker and spawning it drops the object)."""
_MADE_LOCK = threading.Lock()


def _started(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22); None when it is gone or a zombie
    (a killed worker whose new parent has not reaped it yet)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _write(folder: Path, owners: list[dict]) -> None:
    write_atomic(folder / OWNER_FILE, json.dumps({"owners": owners}))


def make_scratch(role: str, root: Path | None, keep: bool) -> Path:
    """A new scratch folder for a worker of `role`, owned by this process (no owner when `keep`)."""
    folder = Path(tempfile.mkdtemp(prefix=f"km-{role}-", dir=root))
    if not keep:
        with _MADE_LOCK:
            _MADE.add(folder)
        _write(folder, [{"pid": os.getpid(), "started": _started(os.getpid())}])
    return folder


def forget_scratch(folder: Path) -> None:
    """`folder` was removed by its worker's owner: a stop need not."""
    with _MADE_LOCK:
        _MADE.discard(folder)


def remove_made_scratch() -> int:
    """Remove every scratch folder this process made and still holds (when stopping, after every worker is killed).
    Returns how many went."""
    with _MADE_LOCK:
        folders = list(_MADE)
        _MADE.clear()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(folders)


def record_worker(folder: Path, pid: int) -> None:
    """Add the spawned worker to the folder's owners: an orphaned worker still running keeps its folder."""
    try:
        owners = json.loads((folder / OWNER_FILE).read_text())["owners"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # kept on purpose, or already gone
    _write(folder, [*owners, {"pid": pid, "started": _started(pid)}])


def _gone(pid: int, started: int | None) -> bool:
    if started is not None:
        return _started(pid) != started
    try:  # no start time was readable when it was recorded: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _stale(folder: Path) -> bool:
    try:
        owners = json.loads((folder / OWNER_FILE).read_text())["owners"]
        pairs = [(int(o["pid"]), o["started"]) for o in owners]
    except (OSError, ValueError, KeyError, TypeError):
        return False  # no record (kept, made by older code, or not yet written): not ours to judge
    return bool(pairs) and all(_gone(pid, started) for pid, started in pairs)


def sweep_stale_scratch(root: Path | None = None) -> int:
    """Remove the worker scratch folders under `root` (the temp folder) whose owners are all gone; once per root per
    process. Returns how many went."""
    root = Path(root or tempfile.gettempdir())
    with _SWEPT_LOCK:
        if str(root) in _SWEPT:
            return 0
        _SWEPT.add(str(root))
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        if not _NAME.match(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            mine = entry.stat(follow_symlinks=False).st_uid == os.getuid()
        except OSError:
            continue
        if mine and _stale(Path(entry.path)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed
