"""Run results: fixed-shape named signals, events, metrics and the manifest (architecture §3).

``signals[name].values`` has shape (N, T, k) for every signal — never squeezed, so one vehicle
stays (1, T, k).  Writing, reading and plotting live in :mod:`marinesim.io` (the engine does no
file I/O); :meth:`RunResult.save`, :meth:`RunResult.load` and :meth:`RunResult.to_pandas` call
them through the registry's lazy ``"module:Attr"`` resolution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.core.registry import resolve

__all__ = ["Event", "Recorder", "RunResult", "Signal"]


@dataclass(frozen=True)
class Signal:
    """One named signal over all entities of the run.

    Attributes
    ----------
    values : ndarray, shape (N, T, k)
        Values per entity, frame and component (NaN where an entity does not have it).
    unit : str
        Unit of every component.
    labels : tuple of str
        Component labels (length k).
    """

    values: NDArray[np.float64]
    unit: str = ""
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Event:
    """A run event: time [s], entity name ("" for the world), severity, kind, text."""

    t: float
    entity: str
    severity: str
    kind: str
    text: str


@dataclass
class RunResult:
    """Everything a run produced.

    Attributes
    ----------
    t : ndarray, shape (T,)
        Frame times [s] (t_0 and then t_{k+1} after every tick).
    signals : dict of str to Signal
        Named signals, values (N, T, k).
    entities : list of dict
        One dict per entity row: id, name, block, index, team.
    events : list of Event
    metrics : list of dict
        Long table rows (entity, metric, value, unit).
    manifest : dict
        Versions, platform, seed, scenario hash, plugins, status, ending condition, wall time.
    """

    t: NDArray[np.float64]
    signals: dict[str, Signal]
    entities: list[dict[str, Any]]
    events: list[Event] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    resolved_scenario: str | None = None

    @property
    def status(self) -> str:
        """``completed``, ``diverged``, ``failed``, ``paused`` or ``running``."""
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
            from marinesim.core.errors import UnknownNameError

            raise UnknownNameError("signal", name, self.signals)
        return self.signals[name]

    def entity_row(self, name: str) -> int:
        """Row of an entity by name (``auv[0]``)."""
        for i, e in enumerate(self.entities):
            if e["name"] == name:
                return i
        from marinesim.core.errors import UnknownNameError

        raise UnknownNameError("entity", name, [e["name"] for e in self.entities])

    def columns(self) -> dict[str, NDArray[np.float64]]:
        """Flat columns of the long table: entity row, t, then one column per signal component.

        Returns
        -------
        dict of str to ndarray
            Each of length N·T (entity-major).  Component columns are ``name`` when k = 1,
            else ``name.label``.
        """
        n, tt = self.n, len(self.t)
        cols: dict[str, NDArray[Any]] = {
            "entity": np.repeat(np.arange(n), tt),
            "t": np.tile(self.t, n),
        }
        for name, sig in self.signals.items():
            k = sig.values.shape[2]
            for j in range(k):
                col = name if k == 1 else f"{name}.{sig.labels[j] if j < len(sig.labels) else j}"
                cols[col] = sig.values[:, :, j].reshape(n * tt)
        return cols

    def to_pandas(self) -> Any:
        """Long ``pandas.DataFrame`` (entity name, t, signal columns); needs pandas (L3)."""
        return resolve("marinesim.io.log:to_dataframe")(self)

    def save(self, directory: str | Path, *, fmt: str = "both") -> dict[str, Path]:
        """Write the log (CSV and/or Parquet), ``manifest.json``, events and the resolved scenario.

        Returns
        -------
        dict of str to Path
            The written files by role.
        """
        return resolve("marinesim.io.log:save_run")(self, directory, fmt=fmt)

    @classmethod
    def load(cls, directory: str | Path) -> RunResult:
        """Read a run written by :meth:`save`."""
        return resolve("marinesim.io.log:load_run")(directory)


class Recorder:
    """Collects frames during a run (hold-last for plugin signals logged at lower rates)."""

    def __init__(self, block_sizes: dict[str, int]) -> None:
        self.block_sizes = dict(block_sizes)
        self.times: list[float] = []
        self.frames: dict[tuple[str, str], list[NDArray[np.float64]]] = {}
        self.first: dict[tuple[str, str], int] = {}
        self.units: dict[str, str] = {}
        self.labels: dict[str, tuple[str, ...]] = {}
        self.current: dict[tuple[str, str], NDArray[np.float64]] = {}

    def log(
        self,
        block: str,
        name: str,
        values: Any,
        unit: str = "",
        labels: tuple[str, ...] | None = None,
    ) -> None:
        """Set the current value of a signal for one block: (N,) or (N, k)."""
        arr = np.asarray(values, dtype=float)
        if arr.ndim == 1:
            arr = arr[:, None]
        key = (block, name)
        prev = self.current.get(key)
        if prev is not None and prev.shape == arr.shape and self.units.get(name) == unit:
            self.current[key] = arr.copy()  # fast path: already validated shape and unit
            return
        n = self.block_sizes[block]
        if arr.ndim != 2 or arr.shape[0] != n:
            raise ConfigError(
                f"signal {name!r} of block {block!r} must have shape ({n},) or ({n}, k), got {np.shape(values)}"
            )
        prev_unit = self.units.get(name)
        if prev_unit is not None and prev_unit != unit:
            raise ConfigError(f"signal {name!r} logged with unit {unit!r} and {prev_unit!r}")
        self.units[name] = unit
        k = arr.shape[1]
        lab = tuple(labels) if labels else (tuple(str(i) for i in range(k)) if k > 1 else ("",))
        if len(lab) != k:
            raise ConfigError(f"signal {name!r}: {len(lab)} labels for {k} components")
        if name in self.labels and len(self.labels[name]) != k:
            raise ConfigError(f"signal {name!r} changed its number of components")
        self.labels[name] = lab
        self.current[(block, name)] = arr.copy()

    def frame(self, t: float) -> None:
        """Record the current values as the frame at time t."""
        idx = len(self.times)
        self.times.append(float(t))
        for key, arr in self.current.items():
            lst = self.frames.get(key)
            if lst is None:
                lst = self.frames[key] = []
                self.first[key] = idx
            lst.append(arr)

    def state(self) -> dict[str, Any]:
        """Snapshot (frame count and current values)."""
        return {
            "n": len(self.times),
            "current": {k: v.copy() for k, v in self.current.items()},
            "lens": {k: len(v) for k, v in self.frames.items()},
            "units": dict(self.units),
            "labels": dict(self.labels),
        }

    def set_state(self, snap: dict[str, Any]) -> None:
        """Truncate back to a snapshot."""
        del self.times[snap["n"] :]
        for key in list(self.frames):
            if key not in snap["lens"]:
                del self.frames[key]
                del self.first[key]
            else:
                del self.frames[key][snap["lens"][key] :]
        self.current = {k: v.copy() for k, v in snap["current"].items()}
        self.units = dict(snap["units"])
        self.labels = dict(snap["labels"])

    def signals(self, block_order: list[str]) -> dict[str, Signal]:
        """Assemble (N, T, k) arrays over all blocks (NaN where a block lacks a signal)."""
        tt = len(self.times)
        offsets: dict[str, int] = {}
        total = 0
        for b in block_order:
            offsets[b] = total
            total += self.block_sizes[b]
        out: dict[str, Signal] = {}
        for name in self.units:
            k = len(self.labels[name])
            vals = np.full((total, tt, k), np.nan)
            for (b, nm), frames in self.frames.items():
                if nm != name or not frames:
                    continue
                start = self.first[(b, nm)]
                stacked = np.stack(frames, axis=1)  # (n_b, T_b, k)
                o = offsets[b]
                vals[o : o + self.block_sizes[b], start : start + stacked.shape[1], :] = stacked
            out[name] = Signal(vals, self.units[name], self.labels[name])
        return out
