"""Judging many (problem, candidate) pairs: discovery, resumable JSONL output, compiles ahead on a CPU pool
(`Verifier.verify_many`), or on the executor given (`verify/executor.py`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict

from kernelmosaic.contracts.hashing import candidate_hash, problem_hash
from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.executor import LocalVerifyExecutor, VerifyExecutor
from kernelmosaic.verify.verifier import InputError

__all__ = ["Pair", "discover_pairs", "run_batch", "settings_key"]


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    problem: Path
    candidate: Path


def discover_pairs(source: Path) -> list[Pair]:
    """A manifest (`.jsonl` of {id?, problem, candidate}, paths relative to it; `id` defaults to the line number)
    or a folder whose sub-folders each hold `problem.py` and one or more `candidate*.py`."""
    source = Path(source)
    if source.is_file():
        pairs = []
        for n, line in enumerate(source.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                pairs.append(Pair(id=str(row.get("id", f"{n}")), problem=source.parent / row["problem"],
                                  candidate=source.parent / row["candidate"]))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InputError(f"{source}:{n}: not a manifest row with `problem` and `candidate` ({exc})") from exc
            missing = [f"{what} {path}" for what, path in (("problem", pairs[-1].problem),
                                                           ("candidate", pairs[-1].candidate)) if not path.is_file()]
            if missing:
                raise InputError(f"{source}:{n}: {' and '.join(missing)}: no such file")
        if not pairs:
            raise InputError(f"{source}: the manifest has no rows")
        return pairs
    if not source.is_dir():
        raise InputError(f"{source}: no such manifest or folder")
    pairs = [Pair(id=f"{d.name}/{c.stem}", problem=d / "problem.py", candidate=c)
             for d in sorted(p for p in source.iterdir() if (p / "problem.py").is_file())
             for c in sorted(d.glob("candidate*.py"))]
    if not pairs:
        raise InputError(f"{source}: no sub-folder holds problem.py and candidate*.py")
    return pairs


def settings_key(config: VerifyConfig) -> str:
    material = config.model_dump(mode="json", exclude={"cache_dir", "keep_scratch", "seed", "use_service", "lookahead",
                                                       "compile_jobs", "compile_memory_gib"})
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def _pair_key(pair: Pair, settings: str) -> str:
    return f"{pair.id}|{problem_hash(pair.problem.read_text())}|{candidate_hash(pair.candidate.read_text())}|{settings}"


def _done_keys(out: Path) -> set[str]:
    if not out.exists():
        return set()
    keys = set()
    for line in out.read_text().splitlines():
        try:
            keys.add(json.loads(line)["batch_key"])
        except (ValueError, KeyError):
            continue  # a line cut by a crash is judged again
    return keys


def run_batch(pairs: list[Pair], config: VerifyConfig, out: Path, devices: list[str] | None = None,
              on_result: Callable[[Pair, dict | None], None] | None = None, seeded: bool = False,
              executor: VerifyExecutor | None = None) -> Iterator[dict]:
    """Judge every pair not already in `out` with these settings; append one JSON verdict per line. `seeded`: the
    config's seed was chosen by the caller (the service then judges with it, not with its own). `executor`: where
    the judging runs (default: this machine, `LocalVerifyExecutor(devices)`)."""
    settings = settings_key(config)
    done = _done_keys(out)
    todo = [p for p in pairs if _pair_key(p, settings) not in done]
    for p in pairs:
        if p not in todo and on_result:
            on_result(p, None)
    sinks: list[TextIO] = []  # `out` is opened at the first verdict: a batch that fails before one leaves no empty file
    try:
        executor = executor or LocalVerifyExecutor(devices)
        for i, verdict in executor.verify_many(config, [(p.problem, p.candidate) for p in todo], seeded=seeded):
            pair = todo[i]
            row = {"id": pair.id, "problem": str(pair.problem), "candidate": str(pair.candidate),
                   "batch_key": _pair_key(pair, settings), "verdict": verdict.to_dict()}
            if not sinks:
                sinks.append(open(out, "a"))  # noqa: SIM115 - closed once every verdict is written
            sinks[0].write(json.dumps(row) + "\n")
            sinks[0].flush()
            if on_result:
                on_result(pair, row)
            yield row
    finally:
        for sink in sinks:
            sink.close()
