"""`replay:FILE` — plays back the assistant replies of recorded trajectories, in order, with their usage.

FILE is a trajectory JSON (`kernelmosaic.trajectory/2`, or version 1), a JSON list of them, or JSONL with one
per line. `replay:bundled` names the file shipped in the package: hand-written demonstration turns (see
`agent/demo/`), not a model's; their tool results were recorded with the real verifier, and a replay judges
every candidate again. With several trajectories, each
episode picks its own through `for_task(task_id)`; several recordings of one task are handed out in
turn, so k attempts at a task replay k recordings.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from kernelmosaic.contracts.messages import Message, ModelReply, ToolSpec
from kernelmosaic.contracts.trajectory import MessageEvent, Trajectory, parse_trajectory
from kernelmosaic.models.base import ModelConfigError, ModelUnavailable, ReplayExhausted

__all__ = ["BUNDLED_NAME", "bundled_path", "load_trajectories", "recorded_replies", "ReplayModel", "replay_model"]

BUNDLED_NAME = "bundled"
"""`replay:bundled` reads `kernelmosaic/models/bundled/trajectories.jsonl`."""


def bundled_path() -> Path:
    return Path(str(resources.files("kernelmosaic.models"))) / "bundled" / "trajectories.jsonl"


def _validate(obj: object, where: str) -> Trajectory:
    try:
        return parse_trajectory(json.dumps(obj))
    except (ValidationError, ValueError) as exc:
        raise ModelConfigError(f"{where}: not a kernelmosaic trajectory: {exc}") from None


def load_trajectories(path: Path) -> list[Trajectory]:
    """Read every trajectory in `path`; raise `ModelConfigError` naming the file (and line) that is bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelConfigError(f"replay file {path}: cannot read: {exc.strerror or exc}") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None  # not one JSON document: read it as JSONL below
    if isinstance(whole, dict):
        return [_validate(whole, str(path))]
    if isinstance(whole, list):
        return [_validate(item, f"{path} item {i}") for i, item in enumerate(whole)]
    trajectories = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ModelConfigError(f"{path} line {number}: invalid JSON: {exc.msg}") from None
        trajectories.append(_validate(obj, f"{path} line {number}"))
    if not trajectories:
        raise ModelConfigError(f"replay file {path} holds no trajectory")
    return trajectories


def recorded_replies(trajectory: Trajectory) -> list[ModelReply]:
    """The model's side of a trajectory: its assistant messages, in order, each with its recorded usage."""
    return [
        ModelReply(
            message=e.message,
            usage=e.usage,
            raw=e.message.content,
            finish_reason="tool_calls" if e.message.tool_calls else "stop",
        )
        for e in trajectory.events
        if isinstance(e, MessageEvent) and e.message.role == "assistant"
    ]


class _Recording:
    """The trajectories of one file, and how many episodes of each task have already taken one."""

    def __init__(self, source: str, trajectories: list[Trajectory]) -> None:
        self.source = source
        self.trajectories = trajectories
        self.handed_out: dict[str, int] = {}

    def take(self, task_id: str) -> Trajectory:
        matching = [t for t in self.trajectories if t.task_id == task_id]
        if not matching:
            known = sorted({t.task_id for t in self.trajectories})
            shown = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "")
            raise ModelUnavailable(f"{self.source} has no recorded trajectory for task {task_id!r} (it has: {shown})")
        turn = self.handed_out.get(task_id, 0)
        self.handed_out[task_id] = turn + 1
        return matching[turn % len(matching)]


class ReplayModel:
    """Replays one trajectory; `for_task` gives each episode a fresh replayer for its task."""

    def __init__(self, recording: _Recording, trajectory: Trajectory | None, name: str) -> None:
        self.name = name
        self._recording = recording
        self.trajectory = trajectory
        """The trajectory being replayed; None for a file of several until a task is chosen."""
        self._replies = recorded_replies(trajectory) if trajectory is not None else []
        self._next = 0

    @property
    def remaining(self) -> int:
        return len(self._replies) - self._next

    @property
    def origin_model(self) -> str:
        """The model that wrote the recording being replayed (`""` until a task is chosen)."""
        return self.trajectory.origin_model or self.trajectory.model if self.trajectory is not None else ""

    def for_task(self, task_id: str) -> ReplayModel:
        """A new replayer over the next recording of `task_id`; raises `ModelUnavailable` if the file has none."""
        return ReplayModel(self._recording, self._recording.take(task_id), self.name)

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        if self.trajectory is None:
            count = len(self._recording.trajectories)
            raise ModelConfigError(
                f"{self._recording.source} holds {count} trajectories: pick one with for_task(task_id) "
                "or the task_id option"
            )
        if self._next >= len(self._replies):
            raise ReplayExhausted(
                f"{self.name}: the recording of task {self.trajectory.task_id!r} has no reply left "
                f"after {len(self._replies)}"
            )
        reply = self._replies[self._next]
        self._next += 1
        return reply


def replay_model(target: str, task_id: str = "") -> ReplayModel:
    """The model for spec `replay:TARGET`: TARGET is a file path or `bundled`."""
    if target == BUNDLED_NAME:
        path = bundled_path()
        if not path.is_file():
            raise ModelConfigError(
                f"replay:bundled: the package has no bundled trajectories (expected {path}); "
                "give a recorded file instead: replay:PATH"
            )
    else:
        path = Path(target).expanduser()
        if not path.is_file():
            raise ModelConfigError(f"replay file {path} does not exist")
    recording = _Recording(str(path), load_trajectories(path))
    name = f"replay:{target}"
    if task_id:
        return ReplayModel(recording, recording.take(task_id), name)
    only = recording.trajectories[0] if len(recording.trajectories) == 1 else None
    return ReplayModel(recording, only, name)
