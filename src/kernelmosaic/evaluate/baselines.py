"""Eager and `torch.compile` baseline timings, cached per (task hash, machine and GPU, precision, torch, timing method).

The verifier times the baselines in the same rounds as the candidate (interleaved, so both see the same clocks and
the wall-clock check has its calibration); the cache does not replace that. It keeps the first baseline seen for
each key on this machine, so later runs can show how far their own baselines drifted from it (`baseline_drift`) and
comparisons across runs can tell a faster kernel from a faster baseline. A key names the host and the GPU's UUID,
so an entry is never borrowed by another machine.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.verdict import Stat, Verdict
from kernelmosaic.paths import default_cache_dir

__all__ = ["BaselineEntry", "BaselineCache", "baseline_key", "default_baseline_path"]


def default_baseline_path() -> Path:
    """Beside the verifier's build cache: `$KERNELMOSAIC_CACHE/../baselines.json` (per machine)."""
    return default_cache_dir().parent / "baselines.json"


class BaselineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    eager: Stat
    compile: Stat | None = None
    eager_host: Stat | None = None
    compile_host: Stat | None = None
    first_run: int = 0
    """The evaluation run whose verdict first filled this entry."""
    seen: int = 1
    """Verdicts with this key recorded since (the first one included)."""


def baseline_key(verdict: Verdict) -> str:
    """`problem|host/gpu|precision|torch|timer[+lead]`; "" for a verdict that was not timed."""
    t = verdict.timing
    if t is None or not verdict.problem_sha256:
        return ""
    env = verdict.env
    machine = f"{env.hostname or 'unknown-host'}/{env.gpu_uuid or env.device_name or env.device or 'cpu'}"
    method = t.timer + ("+lead" if t.lead_us > 0 else "")
    return "|".join((verdict.problem_sha256, machine, env.precision, env.torch, method))


class BaselineCache:
    """A JSON file of entries by key; every update holds an exclusive lock and rewrites the file atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else default_baseline_path()

    def load(self) -> dict[str, BaselineEntry]:
        if not self.path.is_file():
            return {}
        raw = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        return {key: BaselineEntry.model_validate(value) for key, value in raw.items()}

    def lookup(self, verdict: Verdict) -> BaselineEntry | None:
        key = baseline_key(verdict)
        return self.load().get(key) if key else None

    def record(self, verdicts: Iterable[Verdict], run_id: int) -> int:
        """Add every timed verdict's baselines (a key already cached keeps its first entry); returns new keys."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entries = self.load()
            added = 0
            for verdict in verdicts:
                key = baseline_key(verdict)
                if not key:
                    continue
                if key in entries:
                    entries[key].seen += 1
                    continue
                t = verdict.timing
                entries[key] = BaselineEntry(eager=t.eager, compile=t.compile, eager_host=t.eager_host,
                                             compile_host=t.compile_host, first_run=run_id)
                added += 1
            tmp = self.path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps({k: v.model_dump(mode="json") for k, v in entries.items()}, indent=1))
            os.replace(tmp, self.path)
        return added

    def drift(self, verdict: Verdict, entries: dict[str, BaselineEntry] | None = None) -> float:
        """This verdict's eager median over the cached entry's (1.0 = the same); 0.0 when none is cached."""
        entry = (self.load() if entries is None else entries).get(baseline_key(verdict))
        if entry is None or verdict.timing is None or entry.eager.median_ms <= 0:
            return 0.0
        return verdict.timing.eager.median_ms / entry.eager.median_ms
