"""A throwaway PostgreSQL cluster for the store tests: `initdb` into a temporary folder, `pg_ctl start` on a free
loopback port with trust authentication, removed at the end. As root (CI containers) it runs as `postgres`,
because PostgreSQL refuses to run as root."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["can_start", "ThrowawayCluster"]


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


def can_start() -> bool:
    """initdb, pg_ctl and the psycopg driver are all present (and, as root, a `postgres` user to run them)."""
    if not (_binary("initdb") and _binary("pg_ctl") and importlib.util.find_spec("psycopg")):
        return False
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return False
    return True


class ThrowawayCluster:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="km-pg-"))
        self.data = self.root / "data"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._as = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> str:
        self._run(_binary("initdb"), "-D", str(self.data), "-A", "trust", "-U", "km", "--no-sync", "-E", "UTF8")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        return f"postgresql+psycopg://km@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
