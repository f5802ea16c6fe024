"""The 3-panel SURFTRAK figure of ardusub_surftrak's ``graph_sitl.py`` (SURFTRAK spec §14).

US Letter portrait (8.5 × 11 in), font size 9, line width 0.5, default colour cycle; three
stacked axes without a shared x; x = merged ``timestamp`` minus its first value; legends at
the default ("best") place; vertical grid lines only; no axis labels.  The title carries
``CRt var`` and ``RF error sum`` (:func:`marinesim.io.ctun.figure_title`).  Uses matplotlib's
object API (no pyplot state, no ``show``); the caller saves the returned Figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.io.ctun import figure_title, merge_ordered, read_table

__all__ = ["PANELS", "plot_merged", "plot_merged_file", "plot_result"]

#: (panel, [(label, column, scale)]) in plot order.
PANELS = (
    (
        "altitude",
        [
            ("CTUN.DAlt", "DAlt", 1.0),
            ("CTUN.Alt", "Alt", 1.0),
            ("CTUN.TAlt", "TAlt", 1.0),
            ("Older sub pos", "sub_cm", 0.01),
            ("Older terrain pos", "terrain_cm", 0.01),
        ],
    ),
    (
        "rangefinder",
        [
            ("CTUN.DSAlt", "DSAlt", 1.0),
            ("CTUN.SAlt", "SAlt", 1.0),
            ("Injected rangefinder", "rf_cm", 0.01),
        ],
    ),
    ("climb rate", [("CTUN.DCRt", "DCRt", 1.0), ("CTUN.CRt", "CRt", 1.0)]),
)


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
        fig = Figure(figsize=(8.5, 11))
        axes = fig.subplots(3, 1)
        for ax, (_, series) in zip(axes, PANELS, strict=True):
            for label, col, scale in series:
                ax.plot(x, np.asarray(merged[col], dtype=float) * scale, label=label)
            ax.legend()
            ax.grid(axis="x")
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
