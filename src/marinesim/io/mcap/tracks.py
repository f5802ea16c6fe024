"""MCAP logs of runs that are tables rather than engine streams (``usm run``, batch track logs).

A *track table* is a long table (pandas DataFrame) with a time column ``t``, an ``entity``
column and one column per signal component, named as in the Parquet log of a run
(``truth.pos.north``, ``truth.pos.east``, ``truth.pos.down``, ``truth.heading``,
``truth.speed``, ``belief.pos.*``, ``belief.heading`` ...).  :func:`write_track_mcap` turns it
into the engine's signal arrays and writes them with :class:`~marinesim.io.mcap.writer.McapLog`
(the same topics, frames and encoding as ``marinesim run --format mcap``): ``/clock``, ``/tf``,
``/tf_static``, ``/scene``, ``/scene/tracks``, ``/<v>/odom/truth`` (and ``/<v>/odom/belief``
when the table has a belief), ``/<v>/location`` when an origin is given and ``/<v>/gps/fix``
from a ``<name>.latlon`` signal (a program's own published latitude and longitude).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "TRACK_SIGNALS",
    "NavStream",
    "table_signals",
    "usm_run_mcap",
    "write_track_mcap",
]

#: Signals taken from a track table: name → (unit, component labels; () for a scalar).
TRACK_SIGNALS: dict[str, tuple[str, tuple[str, ...]]] = {
    "truth.pos": ("m", ("north", "east", "down")),
    "truth.heading": ("deg", ()),
    "truth.speed": ("m/s", ()),
    "belief.pos": ("m", ("north", "east", "down")),
    "belief.heading": ("deg", ()),
}
_FRAMES_PER_CHUNK = 4096


def table_signals(
    df: Any, signals: dict[str, tuple[str, tuple[str, ...]]] | None = None
) -> tuple[np.ndarray, list[str], dict[str, np.ndarray], dict[str, tuple[str, tuple[str, ...]]]]:
    """The frames of a long track table as engine signal arrays.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``t``, ``entity`` and the components of ``signals`` (missing signals are
        skipped; a row missing for an entity at a time is NaN).
    signals : dict, optional
        Name → (unit, labels) (default :data:`TRACK_SIGNALS`).

    Returns
    -------
    t : (T,) array
        The distinct times, ascending [s].
    names : list of str
        The entities, in order of first appearance.
    values : dict
        Signal → (k, T, N) array.
    meta : dict
        Signal → (unit, labels) for the signals found.
    """
    import pandas as pd

    signals = TRACK_SIGNALS if signals is None else signals
    t_col = df["t"].to_numpy(dtype=float)
    t = np.unique(t_col)
    names = [str(e) for e in pd.unique(df["entity"])]
    col = {n: i for i, n in enumerate(names)}
    ti = np.searchsorted(t, t_col)
    ei = np.array([col[str(e)] for e in df["entity"]], dtype=np.int64)
    values: dict[str, np.ndarray] = {}
    meta: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name, (unit, labels) in signals.items():
        cols = [f"{name}.{lab}" for lab in labels] if labels else [name]
        if not all(c in df.columns for c in cols):
            continue
        arr = np.full((len(cols), len(t), len(names)), np.nan)
        for j, c in enumerate(cols):
            arr[j, ti, ei] = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        values[name] = arr
        meta[name] = (unit, tuple(labels) if labels else (name.rsplit(".", 1)[-1],))
    return t, names, values, meta


def write_track_mcap(
    path: str | Path,
    df: Any,
    *,
    block: str = "vehicle",
    origin: tuple[float, float] | None = None,
    identity: dict[str, Any] | None = None,
    signals: dict[str, tuple[str, tuple[str, ...]]] | None = None,
    plugins: list[dict[str, Any]] | None = None,
) -> Path:
    """Write a track table as a rosbag2-compatible MCAP file (topics of ``run --format mcap``).

    Parameters
    ----------
    path : str or Path
        The file (replaced).
    df : pandas.DataFrame
        The track table (see :func:`table_signals`); it needs ``truth.pos``,
        ``truth.heading`` and ``truth.speed``.
    block : str
        The block of every entity (plugins of that block give device topics).
    origin : (lat, lon), optional
        Datum of the local north/east frame [deg]: adds ``/<v>/location``.
    identity : dict, optional
        The run's identity for the MCAP metadata record (``scenario``, ``seed``, ...).
    signals : dict, optional
        Signals to read (default :data:`TRACK_SIGNALS`), e.g. with ``nav.latlon``.
    plugins : list of dict, optional
        Manifest plugin rows (``block``, ``kind``, ``plugin``, ``name``, ``rate_hz``), e.g. a
        ``latlon`` sensor for ``/<v>/gps/fix``.

    Returns
    -------
    Path
        The file written.
    """
    from marinesim.core.errors import ConfigError
    from marinesim.io.mcap import require
    from marinesim.io.mcap.writer import McapLog

    require("mcap")
    t, names, values, meta = table_signals(df, signals)
    missing = [s for s in ("truth.pos", "truth.heading", "truth.speed") if s not in values]
    if missing:
        raise ConfigError(f"the track table has no {', '.join(missing)} columns", param="--format")
    manifest: dict[str, Any] = {**(identity or {}), "plugins": list(plugins or [])}
    if origin is not None:
        manifest["origin"] = [float(origin[0]), float(origin[1])]
    entities = [{"name": n, "block": block} for n in names]
    log = McapLog(path, entities, manifest)
    try:
        for a in range(0, len(t), _FRAMES_PER_CHUNK):
            b = min(a + _FRAMES_PER_CHUNK, len(t))
            log.write(t[a:b], {k: v[:, a:b, :] for k, v in values.items()}, meta)
        end = {"status": (identity or {}).get("status", "completed"), "frames": len(t)}
        end["t_end"] = float(t[-1]) if len(t) else None
        log.finish(end)
    finally:
        if not log.closed:
            log.finish()
    return log.path


def usm_run_mcap(
    run: Any, path: str | Path, name: str, identity: dict[str, Any] | None = None
) -> Path:
    """Write a ``marinesim usm run`` table as MCAP (see the module docstring for the topics).

    The truth is the model's state: north = ``y``, east = ``x``, down = ``depth`` [m],
    ``heading`` [deg] (→ the ENU yaw of the odometry), ``speed`` [m/s] (the odometry's
    forward velocity); ``/<v>/gps/fix`` holds the published ``<prefix>_LAT``/``_LONG``
    (frames where they were not published are left out) and ``/<v>/location`` the truth at
    the datum, both only when the mission has one.

    Parameters
    ----------
    run : UsmRun
        The run table (``columns``, ``rows``, ``prefix``, ``origin``).
    path : str or Path
        The MCAP file.
    name : str
        The vehicle (its topics are ``/<name>/...``).
    identity : dict, optional
        Metadata (``scenario`` = the mission file ...).
    """
    import pandas as pd

    df = pd.DataFrame(run.rows, columns=run.columns)
    tab = pd.DataFrame(
        {
            "t": pd.to_numeric(df["t"]),
            "entity": name,
            "truth.pos.north": pd.to_numeric(df["y"]),
            "truth.pos.east": pd.to_numeric(df["x"]),
            "truth.pos.down": pd.to_numeric(df["depth"]),
            "truth.heading": pd.to_numeric(df["heading"]),
            "truth.speed": pd.to_numeric(df["speed"]),
        }
    )
    signals = dict(TRACK_SIGNALS)
    plugins: list[dict[str, Any]] = []
    lat, lon = f"{run.prefix}_LAT", f"{run.prefix}_LONG"
    if run.origin is not None and lat in df.columns and lon in df.columns:
        tab["nav.latlon.lat"] = pd.to_numeric(df[lat], errors="coerce")
        tab["nav.latlon.lon"] = pd.to_numeric(df[lon], errors="coerce")
        signals["nav.latlon"] = ("deg", ("lat", "lon"))
        plugins.append(
            {"block": "usm", "kind": "sensor", "plugin": "latlon", "name": "nav", "rate_hz": None}
        )
    status = {"status": "failed" if getattr(run, "error", "") else "completed"}
    return write_track_mcap(
        path,
        tab,
        block="usm",
        origin=run.origin,
        identity={**status, **(identity or {})},
        signals=signals,
        plugins=plugins,
    )


class NavStream:
    """A MOOS app's published navigation, frame by frame, to ``log.mcap`` and/or ``--live``.

    Each iteration's publications (``<P>_X``, ``<P>_Y``, ``<P>_DEPTH``, ``<P>_HEADING``,
    ``<P>_SPEED``, ``<P>_LAT``, ``<P>_LONG`` and their ``_GT`` twins) become one frame: the
    truth is the ``_GT`` set when the app posts one (then the plain set is the belief), else
    the plain set; a value not posted in an iteration keeps its last value (MOOS semantics),
    except the latitude and longitude (a fix only when posted).  Frames go to the sinks in
    chunks: the first frame alone (so that a live server advertises its channels at once),
    then every :attr:`every` frames, or every frame while a live client watches.

    Parameters
    ----------
    name : str
        The vehicle (the MOOS process name): topics ``/<name>/...``.
    prefix : str
        Prefix of the published variables (``NAV``).
    path : str or Path, optional
        The MCAP file to write.
    live_port : int, optional
        Serve the frames over the Foxglove WebSocket protocol on this loopback port.
    origin : (lat, lon), optional
        The mission's datum [deg] (``/<name>/location``).
    identity : dict, optional
        MCAP metadata (``scenario`` = the mission file ...).
    on_live_start : callable, optional
        ``on_live_start(url)`` once the live server listens (at the first frame).
    """

    every = 50

    def __init__(
        self,
        name: str,
        prefix: str,
        *,
        path: str | Path | None = None,
        live_port: int | None = None,
        origin: tuple[float, float] | None = None,
        identity: dict[str, Any] | None = None,
        on_live_start: Any = None,
    ) -> None:
        from marinesim.io.mcap.writer import McapLog

        self.prefix = prefix
        sigs = {**TRACK_SIGNALS, "nav.latlon": ("deg", ("lat", "lon"))}
        self._cols = {k: [f"{k}.{x}" for x in lab] if lab else [k] for k, (_u, lab) in sigs.items()}
        self.meta = {k: (u, lab or (k.rsplit(".", 1)[-1],)) for k, (u, lab) in sigs.items()}
        plugins = [
            {"block": "moos", "kind": "sensor", "plugin": "latlon", "name": "nav", "rate_hz": None}
        ]
        manifest: dict[str, Any] = {**(identity or {}), "plugins": plugins}
        if origin is not None:
            manifest["origin"] = [float(origin[0]), float(origin[1])]
        entities = [{"name": name, "block": "moos"}]
        self.sinks: list[Any] = []
        self.log: Any = None
        self.live: Any = None
        if path is not None:
            from marinesim.io.mcap import require

            require("mcap")
            self.log = McapLog(path, entities, manifest)
            self.sinks.append(self.log)
        if live_port is not None:
            from marinesim.io.mcap.live import LiveServer

            self.live = LiveServer(
                entities,
                manifest,
                port=live_port,
                on_watch=lambda w: setattr(self, "_watch", w),
                on_start=on_live_start,
            )
            self.sinks.append(self.live)
        self._watch = False
        self._last: dict[str, float] = {}
        self._t: list[float] = []
        self._rows: list[dict[str, float]] = []
        self.frames = 0

    def add(self, t: float, pubs: list[tuple[str, float | str]]) -> None:
        """One iteration at ``t`` [s since start] with its publications (name, value)."""
        got = {k: float(v) for k, v in pubs if isinstance(v, float)}
        p = self.prefix
        gt = f"{p}_X_GT" in got or f"{p}_X_GT" in self._last
        self._last.update({k: v for k, v in got.items() if not k.endswith(("_LAT", "_LONG"))})
        nan = float("nan")

        def val(key: str) -> float:
            return self._last.get(key, nan)

        row: dict[str, float] = {}
        for sig, sfx in (("truth", "_GT" if gt else ""), ("belief", "" if gt else None)):
            if sfx is None:
                continue
            row[f"{sig}.pos.north"] = val(f"{p}_Y{sfx}")
            row[f"{sig}.pos.east"] = val(f"{p}_X{sfx}")
            row[f"{sig}.pos.down"] = val(f"{p}_DEPTH{sfx}")
            row[f"{sig}.heading"] = val(f"{p}_HEADING{sfx}")
            if sig == "truth":
                row["truth.speed"] = val(f"{p}_SPEED{sfx}")
        row["nav.latlon.lat"] = got.get(f"{p}_LAT", nan)
        row["nav.latlon.lon"] = got.get(f"{p}_LONG", nan)
        self._t.append(float(t))
        self._rows.append(row)
        self.frames += 1
        if len(self._t) >= self.every or self._watch or self.frames == 1:
            self.flush()  # the first frame at once: a live server advertises its channels

    def flush(self) -> None:
        """Hand the frames held so far to the sinks (one chunk)."""
        if not self._t:
            return
        t = np.asarray(self._t)
        values: dict[str, np.ndarray] = {}
        for name, cols in self._cols.items():
            if not all(c in self._rows[0] for c in cols):
                continue
            arr = np.array([[r[c] for c in cols] for r in self._rows], dtype=float)
            values[name] = arr.T[:, :, None]  # (k, T, 1)
        meta = {k: v for k, v in self.meta.items() if k in values}
        self._t, self._rows = [], []
        for sink in self.sinks:
            sink.write(t, values, meta)

    def close(self, status: str = "completed") -> None:
        """Flush, finish the MCAP file (summary section) and stop the live server."""
        try:
            self.flush()
        finally:
            for sink in self.sinks:
                if sink is self.log:
                    sink.finish({"status": status, "frames": self.frames})
                else:
                    sink.finish()
