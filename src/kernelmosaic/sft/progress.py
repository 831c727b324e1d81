"""Training progress on screen (rich): steps, loss, learning rate and throughput, instead of tqdm's bars."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from transformers import TrainerCallback

__all__ = ["RichProgress", "Throughput"]


class RichProgress(TrainerCallback):
    """A live bar on a terminal; piped (a log file, CI), one line on stderr at the start and per logged step."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: Any = None
        self._started = 0.0
        self.last_logs: dict[str, float] = {}
        self._err = Console(stderr=True, highlight=False)
        self._lines = not self._err.is_terminal

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        self._started = time.monotonic()
        if self._lines:
            self._err.print(f"sft train: {state.max_steps} step(s) from step {state.global_step}", markup=False)
            return
        self._progress = Progress(TextColumn("[bold]sft train[/bold]"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.description}"), TimeElapsedColumn(), TimeRemainingColumn())
        self._progress.start()
        self._task = self._progress.add_task("", total=state.max_steps, completed=state.global_step)
        self._started = time.monotonic()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if not logs or not state.is_world_process_zero:
            return
        self.last_logs = {k: v for k, v in logs.items() if isinstance(v, int | float)}
        shown = [f"{k} {logs[k]:.4g}" for k in ("loss", "learning_rate", "grad_norm") if k in logs]
        if self._lines and shown:
            self._err.print(f"sft train: step {state.global_step}/{state.max_steps}  {'  '.join(shown)}  "
                            f"{time.monotonic() - self._started:.0f}s", markup=False)
        if self._progress is not None:
            self._progress.update(self._task, description="  ".join(shown))

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=state.global_step)
            self._progress.stop()
            self._progress = None


class Throughput(TrainerCallback):
    """Tokens and seconds of this session's training loop only (a resumed run's earlier tokens are not counted)."""

    def __init__(self) -> None:
        self.tokens = 0
        self.seconds = 0.0
        self._start_tokens = 0
        self._start = 0.0

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._start_tokens, self._start = int(state.num_input_tokens_seen), time.monotonic()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.tokens = int(state.num_input_tokens_seen) - self._start_tokens
        self.seconds = time.monotonic() - self._start
