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

__all__ = ["TRACK_SIGNALS", "table_signals", "usm_run_mcap", "write_track_mcap"]

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
