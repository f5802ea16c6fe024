"""Run outputs of a :class:`~marinesim.engine.simulation.Simulation`: recorder set-up, streaming.

The engine does no file I/O itself: :meth:`Simulation.stream_to` gets the run-log backend's
writer from the registry (kind ``"run_log"``, declared by the io package; see
:func:`~marinesim.engine.results.run_log`, as ``RunResult.save`` does) and
:class:`StreamOutput` passes it the recorder's chunks, the events and the manifest:

* at the first step, a manifest with status ``running`` (so a killed run says so);
* every flush (a full chunk buffer, or ``flush_s`` seconds of wall time), one Parquet part
  and/or a CSV append, plus the new events — encoded and written by a background thread
  (Arrow releases the GIL), at most one chunk queued behind the one being written, so the
  simulation keeps stepping on one core while the log is written on another;
* at the end, the final manifest (``completed``, ``diverged``, ``failed``, ``interrupted`` or
  ``paused``, why, and the error if any), the metrics and the remaining events.
"""

from __future__ import annotations

import contextlib
import math
import queue
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.engine.recorder import Chunk, Recorder
from marinesim.engine.results import LazySignals, run_log

__all__ = ["StreamOutput", "log_every", "make_recorder", "stop_on_signals"]


def log_every(log_rate: float | None, dt: float) -> int:
    """Ticks between recorded frames for ``log_rate`` [Hz] (None: every tick).

    Raises
    ------
    ConfigError
        ``log_rate`` not positive and finite, above 1/dt, or 1/log_rate not a multiple of dt.
    """
    if log_rate is None:
        return 1
    rate = float(log_rate)
    if not (rate > 0 and math.isfinite(rate)):
        raise ConfigError(
            f"must be a positive finite rate [Hz], got {log_rate!r}", param="log_rate"
        )
    ratio = 1.0 / (rate * dt)
    m = round(ratio)
    if m < 1 or abs(ratio - m) > 1e-6 * max(1.0, ratio):
        lo = 1.0 / (max(1, math.floor(ratio)) * dt)
        hi = 1.0 / (max(1, math.ceil(ratio)) * dt)
        raise ConfigError(
            f"{rate:g} Hz is not 1/(m·dt) for an integer m with dt = {dt:g} s "
            f"(nearest: {hi:g} Hz or {lo:g} Hz)",
            param="log_rate",
        )
    return int(m)


def make_recorder(
    block_sizes: dict[str, int],
    dt: float,
    log_rate: float | None,
    log_columns: Any,
) -> Recorder:
    """The simulation's recorder (decimation and signal selection from the scenario)."""
    select = None if log_columns is None else tuple(str(c) for c in log_columns)
    return Recorder(block_sizes, every=log_every(log_rate, dt), select=select)


class StreamOutput:
    """Sends a simulation's frames, events and manifest to a log writer as the run goes.

    Parameters
    ----------
    sim : Simulation
    writer : object
        :class:`marinesim.io.log.LogWriter` (``start``, ``write``, ``append_events``,
        ``write_manifest``, ``finish``).
    """

    def __init__(self, sim: Any, writer: Any) -> None:
        self.sim = sim
        self.writer = writer
        self.directory = Path(writer.dir)
        self.started = False
        self.files: dict[str, Path] = {}
        self._queue: queue.Queue[Chunk | None] = queue.Queue(maxsize=1)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @classmethod
    def open(cls, sim: Any, directory: str | Path, fmt: str = "parquet") -> StreamOutput:
        """Check the folder (before any step) and build the writer for ``sim``."""
        writer_cls = run_log("writer")
        return cls(sim, writer_cls(directory, fmt=fmt, entities=sim.entity_rows()))

    def start(self) -> None:
        """Write the ``running`` manifest, the resolved scenario and the events header."""
        self.writer.start(self.sim.manifest("running"), self.sim.resolved_scenario)
        self.started = True

    def write(self, chunk: Chunk) -> None:
        """Recorder sink: queue the chunk for the writer thread (blocks while one is queued).

        Raises
        ------
        EngineError
            An earlier chunk could not be written (the writer's error, e.g. a full disk).
        """
        if self._error is not None:
            chunk.done()
            raise self._error
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name="marinesim-log-writer", daemon=True
            )
            self._thread.start()
        self._queue.put(chunk)

    def _work(self) -> None:
        while True:
            chunk = self._queue.get()
            if chunk is None:
                return
            try:
                if self._error is None:
                    self.writer.write(chunk)
                    self.writer.append_events(list(self.sim._events))
            except BaseException as exc:  # reported to the simulation at its next flush
                self._error = exc
            finally:
                chunk.done()

    def drain(self) -> None:
        """Wait until every queued chunk is written; raise the writer's error if any."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error

    def finalise(
        self, recorder: Recorder, manifest: dict[str, Any], final: bool, metrics: list[Any]
    ) -> tuple[NDArray[np.float64], LazySignals, dict[str, Any]]:
        """Flush, write events, metrics and the manifest; return times, signals and manifest.

        A failed write (full disk, removed folder) is not raised again here: the manifest
        records it (``log_error``) and the frames written so far stay readable.
        """
        err: BaseException | None = None
        try:
            if final:
                recorder.finish()
            else:
                recorder.flush()
        except Exception as exc:  # the writer already turned OSError into EngineError
            err = exc
        try:
            self.drain()
        except Exception as exc:
            err = err or exc
        if err is not None and "log_error" not in manifest:
            manifest = {**manifest, "log_error": f"{type(err).__name__}: {err}"}
        if not self.started:
            try:
                self.start()
            except OSError as exc:
                manifest = {**manifest, "log_error": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(OSError):  # nothing more can be written: the last one stays
            self.files = self.writer.finish(manifest, self.sim._events, metrics)
        meta = recorder.meta
        t = recorder.times[: self.writer.frames]
        loader = run_log("lazy_signals")
        return t, loader(self.directory, meta, recorder.n_rows, t), manifest


@contextlib.contextmanager
def stop_on_signals(sim: Any) -> Iterator[list[str]]:
    """Turn SIGINT and SIGTERM into a clean stop of ``sim`` while the block runs.

    The first signal calls ``sim.interrupt(name)``: the run ends at the next tick boundary with
    status ``interrupted`` and a complete log and manifest.  A second signal raises
    ``KeyboardInterrupt`` at once (for a hook that never returns); the run is then finalised
    by the engine's error path, still with status ``interrupted``.  Yields the list of signal
    names received.  Outside the main thread it does nothing.
    """
    received: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, _frame: Any) -> None:
        name = signal.Signals(signum).name
        received.append(name)
        if len(received) > 1:
            raise KeyboardInterrupt(name)
        sim.interrupt(name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for s, h in old.items():
            signal.signal(s, h)
