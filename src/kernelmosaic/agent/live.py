"""The rich Live view of a generate run: episodes running and done, pass rate, best speedups, tokens, cost."""

from __future__ import annotations

import math
import threading
import time

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kernelmosaic.contracts.episode_state import EpisodeState
from kernelmosaic.store.records import EpisodeInfo

__all__ = ["RunView"]


class RunView:
    """Collects progress callbacks from the episodes and renders them (rich calls `__rich__` on each refresh)."""

    def __init__(self, run_id: int, model: str, device: str, total: int, already_done: int = 0) -> None:
        self.run_id, self.model, self.device, self.total = run_id, model, device, total
        self.already_done = already_done
        self.running: dict[str, EpisodeState] = {}
        self.done: list[EpisodeInfo] = []
        self._lock = threading.Lock()
        self._started = time.monotonic()

    def on_step(self, task_id: str, state: EpisodeState) -> None:
        with self._lock:
            self.running[task_id] = state

    def on_done(self, info: EpisodeInfo) -> None:
        with self._lock:
            self.running.pop(info.task_id, None)
            self.done.append(info)

    def _header(self) -> Text:
        finished = len(self.done)
        solved = sum(1 for e in self.done if e.solved)
        speedups = [e.best_speedup_vs_eager for e in self.done if e.best_speedup_vs_eager > 0 and not e.best_speedup_caveat]
        shaky = sum(1 for e in self.done if e.best_speedup_caveat)
        speed = (f"geomean speedup {math.exp(sum(map(math.log, speedups)) / len(speedups)):.2f}x" if speedups else
                 "no reliable speedup yet" if shaky else "no timed solution yet")
        speed += f" ({shaky} unreliable left out)" if shaky and speedups else ""
        tokens = sum(e.totals.prompt_tokens + e.totals.completion_tokens for e in self.done) + sum(
            s.usage.prompt_tokens + s.usage.completion_tokens for s in self.running.values())
        cost = sum(e.totals.cost_usd for e in self.done) + sum(s.usage.cost_usd for s in self.running.values())
        rate = f"{solved}/{finished} ({100 * solved / finished:.0f}%)" if finished else "-"
        return Text(
            f"run {self.run_id} · {self.model} · {self.device} · {time.monotonic() - self._started:.0f}s\n"
            f"tasks {self.total}: {len(self.running)} running, {finished + self.already_done} done"
            f"{f' ({self.already_done} before resume)' if self.already_done else ''} · solved {rate} · "
            f"{speed} · tokens {tokens:,} · cost ${cost:.2f}"
        )

    def __rich__(self) -> Group:
        with self._lock:
            header = self._header()
            running = Table(title="running", expand=False)
            for col in ("task", "phase", "turn", "last status", "tokens"):
                running.add_column(col, overflow="fold")  # narrow terminals fold cells rather than cut them
            for task_id, s in sorted(self.running.items())[:20]:
                running.add_row(task_id, s.phase, str(s.turns), s.last_status or "-",
                                f"{s.usage.prompt_tokens + s.usage.completion_tokens:,}")
            done = Table(title="done (latest)", expand=False)
            for col in ("task", "exit", "solved", "speedup", "turns"):
                done.add_column(col, overflow="fold")
            for e in self.done[-10:]:
                speed = (f"{e.best_speedup_vs_eager:.2f}x{' unreliable' if e.best_speedup_caveat else ''}"
                         if e.best_speedup_vs_eager > 0 else "-")
                done.add_row(e.task_id, e.exit_reason, "yes" if e.solved else ("flagged" if e.task_flags else "no"), speed, str(e.totals.turns))
            return Group(header, *([running] if self.running else []), done)
