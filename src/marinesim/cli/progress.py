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

__all__ = ["Progress", "compile_notice", "fmt_seconds"]


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


class _CompileListener:
    """numba ``numba:compile`` events → two plain lines on stderr (start, total time).

    The message is the engine's (:data:`marinesim.engine.compiled.notice.MESSAGE`); while the
    engine announces the compile of a generated tick itself, the events are not counted here.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.depth = 0
        self.count = 0
        self.seconds = 0.0
        self._t0 = 0.0

    def on_start(self, event: Any) -> None:
        from marinesim.engine.compiled.notice import MESSAGE, speaking

        if speaking():
            return  # the engine's notice of the generated tick says it (one message)
        if self.depth == 0:
            if self.count == 0:
                print(MESSAGE, file=self.stream, flush=True)
            self._t0 = time.perf_counter()
        self.depth += 1

    def on_end(self, event: Any) -> None:
        from marinesim.engine.compiled.notice import speaking

        if speaking() and self.depth == 0:
            return
        self.depth = max(self.depth - 1, 0)
        if self.depth == 0:
            self.count += 1
            self.seconds += time.perf_counter() - self._t0

    def finish(self) -> None:
        if self.count:
            print(f"  compiled in {fmt_seconds(self.seconds)}", file=self.stream, flush=True)


class compile_notice:  # noqa: N801 - used as a context manager, like contextlib's helpers
    """Say on stderr when numba compiles kernels (the first run after installing or upgrading).

    Compiled kernels load from numba's disk cache afterwards, when nothing is printed.  The
    time of a compile is not known in advance, so this shows its start and its duration, not
    an ETA.  Off with ``-q``; a no-op without numba.  The engine knows nothing of this: numba's
    own compile events are listened to here, in the CLI.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self._listener: Any = None
        self._event: Any = None

    def __enter__(self) -> compile_notice:
        if grammar.quiet():
            return self
        import importlib.util

        if importlib.util.find_spec("numba") is None:
            return self
        from numba.core import event

        inner = _CompileListener(self.stream)

        class _Listener(event.Listener):
            def on_start(self, ev: Any) -> None:
                inner.on_start(ev)

            def on_end(self, ev: Any) -> None:
                inner.on_end(ev)

        self._listener = (inner, _Listener())
        self._event = event
        event.register("numba:compile", self._listener[1])
        return self

    def __exit__(self, *exc: object) -> None:
        if self._listener is not None:
            self._event.unregister("numba:compile", self._listener[1])
            self._listener[0].finish()
            self._listener = None
