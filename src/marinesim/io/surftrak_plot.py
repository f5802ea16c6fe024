"""The 3-panel SURFTRAK figure of ardusub_surftrak's ``graph_sitl.py`` (SURFTRAK spec §14).

US Letter portrait (8.5 × 11 in), font size 9, line width 0.5, default colour cycle; three
stacked axes without a shared x; x = merged ``timestamp`` minus its first value; vertical grid
lines only.  The series are graph_sitl.py's; unlike it, every panel has axis labels with units
and each legend entry says what the series is (its CTUN name in brackets), placed beside the
axes so it never covers data.  The title carries ``CRt var`` and ``RF error sum``
(:func:`marinesim.io.ctun.figure_title`).  Uses matplotlib's object API (no pyplot state, no
``show``); the caller saves the returned Figure.

:func:`engine_surftrak_figure` draws the same three panels from an engine run (a ``surftrak``
controller with a ``rangefinder`` sensor): seafloor, vehicle, targets and the true altitude.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.io.ctun import figure_title, merge_ordered, read_table

__all__ = [
    "PANELS",
    "PANEL_YLABELS",
    "engine_surftrak_figure",
    "plot_merged",
    "plot_merged_file",
    "plot_result",
    "save_engine_surftrak_figure",
]

#: (panel, [(label, column, scale)]) in plot order.
PANELS = (
    (
        "altitude",
        [
            ("target depth, z up (CTUN.DAlt)", "DAlt", 1.0),
            ("vehicle z up, EKF (CTUN.Alt)", "Alt", 1.0),
            ("seafloor estimate, z up (CTUN.TAlt)", "TAlt", 1.0),
            ("vehicle z up, truth (harness)", "sub_cm", 0.01),
            ("seafloor z up, truth (harness)", "terrain_cm", 0.01),
        ],
    ),
    (
        "rangefinder",
        [
            ("rangefinder target (CTUN.DSAlt)", "DSAlt", 1.0),
            ("rangefinder reading used (CTUN.SAlt)", "SAlt", 1.0),
            ("rangefinder injected (harness)", "rf_cm", 0.01),
        ],
    ),
    (
        "climb rate",
        [("desired climb rate (CTUN.DCRt)", "DCRt", 1.0), ("climb rate (CTUN.CRt)", "CRt", 1.0)],
    ),
)

#: y-axis label of each panel, in :data:`PANELS` order.
PANEL_YLABELS = ("z, up from the surface [m]", "distance to the seafloor [m]", "climb rate [cm/s]")


def _dress(fig: Any, axes: Any) -> None:
    """Axis labels with units, legends beside the axes (never over the data)."""
    for ax, ylabel in zip(axes, PANEL_YLABELS, strict=True):
        ax.set_ylabel(ylabel)
        ax.set_xlabel("time [s]")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)
        ax.grid(axis="x")


def plot_merged(merged: Mapping[str, np.ndarray], log_dir: str) -> Any:
    """Draw the figure from a merged table.

    Parameters
    ----------
    merged : mapping of str → ndarray
        Columns of ``merged.csv`` (TimeUS, timestamp, CTUN columns, stamped columns).
    log_dir : str
        Run directory as given (first part of the title).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    ts = np.asarray(merged["timestamp"], dtype=float)
    x = ts - ts[0]
    with rc_context({"font.size": 9, "lines.linewidth": 0.5}):
        fig = Figure(figsize=(8.5, 11), layout="constrained")
        axes = fig.subplots(3, 1)
        for ax, (_, series) in zip(axes, PANELS, strict=True):
            for label, col, scale in series:
                ax.plot(x, np.asarray(merged[col], dtype=float) * scale, label=label)
        _dress(fig, axes)
        fig.suptitle(figure_title(log_dir, merged))
    return fig


def plot_merged_file(path: str | Path, log_dir: str | None = None) -> Any:
    """Figure from a ``merged.csv``, or from a run directory holding ``merged.csv`` or
    ``ctun.csv`` + ``stamped_terrain.csv`` (merged here).

    The title prefix is ``log_dir``; by default the run directory as given (for a file: its
    folder), as ``graph_sitl.py`` does; for ``RUN.merged.csv`` written by ``marinesim surftrak
    run -o RUN.csv`` it is ``RUN`` (the title ``--plot`` gives).
    """
    from marinesim.core.errors import DataError

    p = Path(path)
    if p.is_dir():
        if (p / "merged.csv").exists():
            merged = read_table(p / "merged.csv")
        elif (p / "ctun.csv").exists() and (p / "stamped_terrain.csv").exists():
            merged = merge_ordered(
                read_table(p / "ctun.csv"), read_table(p / "stamped_terrain.csv")
            )
        else:
            raise DataError(
                "no merged.csv or ctun.csv + stamped_terrain.csv in the directory", file=p
            )
        return plot_merged(merged, str(path) if log_dir is None else log_dir)
    merged = read_table(p)
    if log_dir is None:
        # RUN.merged.csv beside RUN.csv (marinesim surftrak run): the title of ``--plot``
        name = p.name
        log_dir = str(p.parent)
        if name.endswith(".merged.csv") and name != ".merged.csv":
            log_dir = str(p.with_name(name[: -len(".merged.csv")]))
    return plot_merged(merged, log_dir)


def plot_result(result: Any, log_dir: str, vehicle: int = 0) -> Any:
    """Figure of a marinesim SURFTRAK run (same series, labels and title rules)."""
    from marinesim.io.ctun import run_tables

    _, ctun, stamped, _ = run_tables(result, vehicle)
    return plot_merged(merge_ordered(ctun, stamped), log_dir)


def _signal(result: Any, suffix: str, vehicle: int) -> np.ndarray | None:
    for name, sig in result.signals.items():
        if name.endswith(suffix) and sig.values.shape[2] == 1:
            return np.asarray(sig.values[vehicle, :, 0], dtype=float)
    return None


def engine_surftrak_figure(result: Any, vehicle: int = 0, title: str | None = None) -> Any:
    """The SURFTRAK figure of an engine run (``surftrak`` controller + ``rangefinder``).

    Panels: (1) vehicle z (truth, and the controller's estimate), seafloor (truth, from the
    rangefinder's terrain, and the controller's estimate) and the target, all z up [m];
    (2) the rangefinder target, the reading used and the true altitude above the seafloor [m];
    (3) desired and actual climb rate [cm/s].

    Parameters
    ----------
    result : RunResult
        With ``*.DAlt``, ``*.Alt``, ``*.TAlt``, ``*.DSAlt``, ``*.SAlt``, ``*.DCRt``, ``*.CRt``
        (the ``surftrak`` controller) and optionally ``*.terrain`` (the ``rangefinder``).
    vehicle : int
        Row of the block (entity index).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    t = np.asarray(result.t, dtype=float)
    z_true = -np.asarray(result["truth.pos"][vehicle, :, 2], dtype=float)
    floor = _signal(result, ".terrain", vehicle)
    sig = {k: _signal(result, "." + k, vehicle) for k in ("DAlt", "Alt", "TAlt", "DSAlt", "SAlt")}
    sig |= {k: _signal(result, "." + k, vehicle) for k in ("DCRt", "CRt")}
    panels: list[list[tuple[str, np.ndarray | None]]] = [
        [
            ("vehicle z up, truth", z_true),
            ("vehicle z up, controller estimate (Alt)", sig["Alt"]),
            ("target z up (DAlt)", sig["DAlt"]),
            ("seafloor z up, truth", floor),
            ("seafloor z up, controller estimate (TAlt)", sig["TAlt"]),
        ],
        [
            ("rangefinder target (DSAlt)", sig["DSAlt"]),
            ("rangefinder reading used (SAlt)", sig["SAlt"]),
            ("true altitude above the seafloor", None if floor is None else z_true - floor),
        ],
        [("desired climb rate (DCRt)", sig["DCRt"]), ("climb rate (CRt)", sig["CRt"])],
    ]
    with rc_context({"font.size": 9, "lines.linewidth": 0.8}):
        fig = Figure(figsize=(10, 9), layout="constrained")
        axes = fig.subplots(3, 1, sharex=True)
        for ax, series in zip(axes, panels, strict=True):
            for label, y in series:
                if y is not None:
                    ax.plot(t, y, label=label)
        _dress(fig, axes)
        name = result.entities[vehicle]["name"] if result.entities else "vehicle"
        fig.suptitle(title or f"{result.manifest.get('scenario', 'run')} — SURFTRAK — {name}")
    return fig


def save_engine_surftrak_figure(
    result: Any, directory: str | Path, *, fmt: str = "png"
) -> Path | None:
    """Write ``surftrak.<fmt>`` for a run with a SURFTRAK controller; None for other runs."""
    if not any(n.endswith(".DSAlt") for n in result.signals) or len(result.t) == 0:
        return None
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    fig = engine_surftrak_figure(result)
    path = out / f"surftrak.{fmt}"
    fig.savefig(path, dpi=100)
    return path
