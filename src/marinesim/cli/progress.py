"""Progress with an ETA on stderr, the same for every long-running command.

Three modes (:func:`marinesim.cli.grammar.progress_wanted`):

* ``bar`` — stderr is a terminal: a live rich bar with done/total, elapsed time and ETA;
* ``lines`` — stderr is not a terminal (a CI log, a pipe): one plain line per 10 % step, e.g.
  ``runs: 40% (4/10), 12.1 s elapsed, ETA 18.2 s``, so logs stay short and readable;
* ``off`` — ``-q/--quiet`` (or a command's ``--no-progress``): nothing.

Only this CLI layer uses rich; the engine and the batch runner report progress through plain
callbacks ``(done, total)``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from marinesim.cli import grammar

__all__ = ["Progress", "fmt_seconds"]


def fmt_seconds(s: float) -> str:
    """``12.3 s``, ``4 min 05 s`` or ``1 h 02 min``."""
    if s != s or s < 0:  # NaN or negative
        return "?"
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


class Progress:
    """A progress display for ``total`` units of work (``total`` None: unknown).

    Parameters
    ----------
    label : str
        What is counted (``runs``, ``t [s]``, ``axis maxima``).
    total : float or None
        Units of work in all.
    enabled : bool
        False: nothing is shown (``--no-progress``); ``-q`` turns it off too.
    stream : file, optional
        Where to write (default stderr).
    unit : str
        Printed after done/total in the plain lines (``s`` for simulated seconds).
    """

    def __init__(
        self,
        label: str,
        total: float | None,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        unit: str = "",
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.mode = grammar.progress_wanted(self.stream) if enabled else "off"
        self.done = 0.0
        self._t0 = time.perf_counter()
        self._next_pct = 10
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn(
                    "{task.completed:g}/{task.total:g}" + (f" {self.unit}" if self.unit else "")
                ),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def eta(self) -> float:
        """Seconds left, from the mean rate so far (NaN before any progress)."""
        if not self.total or self.done <= 0:
            return float("nan")
        elapsed = time.perf_counter() - self._t0
        return elapsed * (self.total - self.done) / self.done

    def update(self, done: float, total: float | None = None) -> None:
        """Set the work done so far (and the total, when it became known)."""
        if total is not None:
            self.total = total
        self.done = done
        if self.mode == "bar" and self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total)
        elif self.mode == "lines" and self.total:
            pct = 100.0 * done / self.total
            if pct + 1e-9 >= self._next_pct:
                while self._next_pct <= pct + 1e-9:
                    self._next_pct += 10
                self._line(pct)

    def __call__(self, done: float, total: float | None = None) -> None:
        self.update(done, total)

    def _line(self, pct: float) -> None:
        elapsed = time.perf_counter() - self._t0
        unit = f" {self.unit}" if self.unit else ""
        text = f"{self.label}: {pct:3.0f}% ({self.done:g}/{self.total:g}{unit}), {fmt_seconds(elapsed)} elapsed"
        if self.done < (self.total or 0):
            text += f", ETA {fmt_seconds(self.eta())}"
        print(text, file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the bar (idempotent)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
