"""Run results: fixed-shape named signals, events, metrics and the manifest (architecture §3).

``signals[name].values`` has shape (N, T, k) for every signal — never squeezed, so one vehicle
stays (1, T, k).  Writing, reading and plotting live in the io layer (the engine does no file
I/O and imports nothing above it): :meth:`RunResult.save`, :meth:`RunResult.load`,
:meth:`RunResult.to_pandas` and ``Simulation.stream_to`` find the run-log backend in the
registry by kind ``"run_log"`` (:func:`run_log`), which the io package declares.  A run
streamed to disk (or loaded from it) holds :class:`LazySignals`: each signal is read from the
log when first used, so a large run never has to fit in memory; :meth:`RunResult.sample`
reads every k-th frame.
The recorder lives in :mod:`marinesim.engine.recorder`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core import registry
from marinesim.core.errors import EngineError, UnknownNameError

__all__ = ["Event", "LazySignals", "RunResult", "Signal", "run_log"]


def run_log(part: str) -> Any:
    """The run-log backend's ``part`` (registry kind ``"run_log"``), imported on first use.

    Parts: ``writer`` (streaming log writer class), ``lazy_signals``, ``to_dataframe``,
    ``save``, ``load``.

    Raises
    ------
    EngineError
        No package registered that part (the io layer is missing or was removed).
    """
    try:
        return registry.get("run_log", part)
    except UnknownNameError:
        raise EngineError(
            f"no run-log backend provides {part!r}: nothing registered kind 'run_log' "
            "(marinesim's io package declares it in its registry.toml; is it installed?)"
        ) from None


def __getattr__(name: str) -> Any:  # Recorder moved to engine.recorder (import cycle)
    if name == "Recorder":
        from marinesim.engine.recorder import Recorder

        return Recorder
    raise AttributeError(name)


@dataclass(frozen=True)
class Signal:
    """One named signal over all entities of the run.

    Attributes
    ----------
    values : ndarray, shape (N, T, k)
        Values per entity, frame and component (NaN where an entity does not have it).
    unit : str
        One unit for every component, or a comma-separated list with one unit per component
        (``"m, m, m, deg"``); see :func:`component_units`.
    labels : tuple of str
        Component labels (length k).
    """

    values: NDArray[np.float64]
    unit: str = ""
    labels: tuple[str, ...] = ()

    @property
    def units(self) -> tuple[str, ...]:
        """The unit of each component (length k), by :func:`component_units`."""
        return component_units(self.unit, self.values.shape[2] if self.values.ndim == 3 else 1)


def component_units(unit: str, k: int) -> tuple[str, ...]:
    """The unit of each of the ``k`` components of a signal whose unit string is ``unit``.

    The one convention of the logs: a unit string is either one unit shared by every
    component (``"m/s"``), or a comma-separated list with exactly one unit per component
    (``"m, m, m, deg"``).  A list of another length is kept whole for every component.
    """
    parts = tuple(u.strip() for u in unit.split(",")) if "," in unit else (unit.strip(),)
    return parts if len(parts) == k else (unit,) * k


@dataclass(frozen=True)
class Event:
    """A run event: time [s], entity name ("" for the world), severity, kind, text."""

    t: float
    entity: str
    severity: str
    kind: str
    text: str


class LazySignals(Mapping[str, Signal]):
    """Signals read from a log on first use (a mapping like ``RunResult.signals``).

    Parameters
    ----------
    meta : dict of str to (unit, labels)
        Every signal of the log, in column order.
    loader : callable
        ``loader(name, step)`` returns the values (N, T', k) of every ``step``-th frame.
    """

    def __init__(
        self,
        meta: dict[str, tuple[str, tuple[str, ...]]],
        loader: Callable[[str, int], NDArray[np.float64]],
    ) -> None:
        self.meta = dict(meta)
        self._loader = loader
        self._cache: dict[str, Signal] = {}
        self._samples: dict[tuple[str, int], NDArray[np.float64]] = {}

    def __getitem__(self, name: str) -> Signal:
        if name not in self.meta:
            raise KeyError(name)
        sig = self._cache.get(name)
        if sig is None:
            unit, labels = self.meta[name]
            sig = self._cache[name] = Signal(self._loader(name, 1), unit, tuple(labels))
        return sig

    def __iter__(self) -> Iterator[str]:
        return iter(self.meta)

    def __len__(self) -> int:
        return len(self.meta)

    def __contains__(self, name: object) -> bool:
        return name in self.meta

    def sample(self, name: str, step: int) -> NDArray[np.float64]:
        """Values (N, ceil(T/step), k) of every ``step``-th frame (from the cache if loaded)."""
        if name in self._cache or step <= 1:
            return self[name].values[:, :: max(1, step), :]
        key = (name, int(step))
        got = self._samples.get(key)
        if got is None:  # figures sample the same signals: keep the last few samples
            if len(self._samples) >= 8:
                self._samples.pop(next(iter(self._samples)))
            got = self._samples[key] = self._loader(name, step)
            got.flags.writeable = False  # shared between callers
        return got


@dataclass
class RunResult:
    """Everything a run produced.

    Attributes
    ----------
    t : ndarray, shape (T,)
        Frame times [s] (t_0 and then t_{k+1} after every tick).
    signals : mapping of str to Signal
        Named signals, values (N, T, k) (a :class:`LazySignals` when read from disk).
    entities : list of dict
        One dict per entity row: id, name, block, index, team.
    events : list of Event
    metrics : list of dict
        Long table rows (entity, metric, value, unit).
    manifest : dict
        Versions, platform, seed, scenario hash, plugins, status, ending condition, wall time.
    """

    t: NDArray[np.float64]
    signals: Mapping[str, Signal]
    entities: list[dict[str, Any]]
    events: list[Event] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    resolved_scenario: str | None = None
    log_dir: Path | None = None

    @property
    def status(self) -> str:
        """``completed``, ``diverged``, ``failed``, ``interrupted``, ``paused`` or ``running``."""
        return str(self.manifest.get("status", "unknown"))

    @property
    def n(self) -> int:
        """Number of entity rows N."""
        return len(self.entities)

    def __getitem__(self, name: str) -> NDArray[np.float64]:
        """Values (N, T, k) of a signal."""
        return self.signal(name).values

    def signal(self, name: str) -> Signal:
        """The named signal; unknown names raise ConfigError with suggestions."""
        if name not in self.signals:
            raise UnknownNameError("signal", name, self.signals)
        return self.signals[name]

    def sample(
        self, name: str, max_frames: int = 2000
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Every k-th frame of a signal, k chosen so that at most ``max_frames`` remain.

        Returns
        -------
        t : ndarray, shape (T',)
            Times of the kept frames [s].
        values : ndarray, shape (N, T', k)
            Read from disk frame by frame for a streamed run (never the whole signal).
        """
        if name not in self.signals:
            self.signal(name)  # raises with suggestions
        tt = len(self.t)
        step = max(1, -(-tt // max(1, int(max_frames))))
        sigs = self.signals
        vals = (
            sigs.sample(name, step)
            if isinstance(sigs, LazySignals)
            else sigs[name].values[:, ::step, :]
        )
        return self.t[::step], vals

    def entity_row(self, name: str) -> int:
        """Row of an entity by name (``auv[0]``)."""
        for i, e in enumerate(self.entities):
            if e["name"] == name:
                return i
        raise UnknownNameError("entity", name, [e["name"] for e in self.entities])

    def columns(self) -> dict[str, NDArray[np.float64]]:
        """Flat columns of the long table: entity row, t, then one column per signal component.

        Returns
        -------
        dict of str to ndarray
            Each of length N·T, time-major (all entities of frame 0, then of frame 1, ... as
            in the streamed log).  Component columns are ``name`` when k = 1, else
            ``name.label``.
        """
        n, tt = self.n, len(self.t)
        cols: dict[str, NDArray[Any]] = {
            "entity": np.tile(np.arange(n), tt),
            "t": np.repeat(self.t, n),
        }
        for name, sig in self.signals.items():
            k = sig.values.shape[2]
            for j in range(k):
                col = name if k == 1 else f"{name}.{sig.labels[j] if j < len(sig.labels) else j}"
                cols[col] = np.ascontiguousarray(sig.values[:, :, j].T).reshape(n * tt)
        return cols

    def to_pandas(self) -> Any:
        """Long ``pandas.DataFrame`` (entity name, block, t, signal columns), time-major."""
        return run_log("to_dataframe")(self)

    def save(self, directory: str | Path, *, fmt: str = "both") -> dict[str, Path]:
        """Write the log (CSV and/or Parquet), ``manifest.json``, events and the resolved scenario.

        Returns
        -------
        dict of str to Path
            The written files by role.
        """
        return run_log("save")(self, directory, fmt=fmt)

    @classmethod
    def load(cls, directory: str | Path) -> RunResult:
        """Read a run written by :meth:`save`."""
        return run_log("load")(directory)
