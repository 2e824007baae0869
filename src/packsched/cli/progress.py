"""Progress of the long-running commands (``replay``, ``compare``) on standard error, never on standard output:
rich's bars on a terminal; elsewhere (a pipe, a log file, CI) one plain line every few seconds::

    compare: 12/60 runs done, 1m 23s elapsed
"""

from __future__ import annotations

import math
import os
import threading
import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

INTERVAL_ENV = "PACKSCHED_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 5.0


def interval_from_env() -> float:
    """Seconds between two plain progress lines: ``$PACKSCHED_PROGRESS_INTERVAL`` (0: none), else 5."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_INTERVAL_S
    except ValueError:
        return DEFAULT_INTERVAL_S
    return max(0.0, value) if math.isfinite(value) else DEFAULT_INTERVAL_S


def elapsed_text(seconds: float) -> str:
    """``7s``, ``1m 23s``, ``2h 05m 09s``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s"


class RunProgress:
    """``with RunProgress(err, "compare", len(specs)) as progress:`` then ``progress.run_done`` and
    ``progress.pods`` as the sweep's callbacks."""

    def __init__(self, console: Console, command: str, total: int, interval: float | None = None) -> None:
        self.console = console
        self.command = command
        self.total = total
        self.done = 0
        self.interval = interval_from_env() if interval is None else interval
        self.started = time.monotonic()
        self.lines = 0  # plain lines printed
        self._current: tuple[str, int, int] | None = None  # the run in this process: name, pods done, pods
        self._bar: Progress | None = None
        self._runs_task: Any = None
        self._pod_tasks: dict[Any, Any] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        self.started = time.monotonic()
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._runs_task = self._bar.add_task("runs", total=self.total)
        elif self.interval > 0:
            self._thread = threading.Thread(target=self._report, name="progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self.lines and exc_type is None:  # a log that had progress lines gets the last one too
                self._print(f"{self.command}: {self.done}/{self.total} runs done in {self.elapsed()}")

    def elapsed(self) -> str:
        return elapsed_text(time.monotonic() - self.started)

    def run_done(self, _result: object) -> None:
        self.done += 1
        self._current = None
        if self._bar is not None:
            self._bar.advance(self._runs_task)

    def pods(self, spec: Any, done: int, total: int) -> None:
        """A run in this process (``--workers 1``) has placed ``done`` of its ``total`` pods; ``spec``: a RunSpec,
        or any run's spec with a ``label`` and a ``seed``."""
        name = f"{spec.label} seed {spec.seed}"
        self._current = (name, done, total)
        if self._bar is None:
            return
        task = self._pod_tasks.get(spec)
        if task is None:
            task = self._pod_tasks[spec] = self._bar.add_task(f"{name}: pods", total=total)
        self._bar.update(task, completed=done)
        if done >= total:
            self._bar.remove_task(task)

    def line(self) -> str:
        text = f"{self.command}: {self.done}/{self.total} runs done, {self.elapsed()} elapsed"
        current = self._current
        if current is not None and current[1] < current[2]:
            text += f" ({current[0]}: {current[1]}/{current[2]} pods)"
        return text

    def _report(self) -> None:
        while not self._stop.wait(self.interval):
            self._print(self.line())
            self.lines += 1

    def _print(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)
