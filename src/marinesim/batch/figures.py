"""Batch figures: one histogram per metric and the ensemble of tracks (a drawn sample of runs).

The tracks figure is the ensemble view of :mod:`marinesim.io.ensemble_plots` (track density,
a drawn sample of tracks, start and end points) over every (run, vehicle) track; without that
module, a sample of at most ``max_runs`` runs drawn with thin translucent lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_metric_histograms", "plot_sampled_tracks", "save_batch_figures"]


def plot_metric_histograms(
    runs: Any, metrics: Sequence[str], units: dict[str, str], max_panels: int = 24
) -> Any:
    """Figure with one histogram per metric column (completed runs), at most ``max_panels``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = runs[runs["status"] == "completed"]
    cols = [m for m in metrics if m in ok][:max_panels]
    n = max(len(cols), 1)
    ncol = min(4, n)
    nrow = math.ceil(n / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 2.6 * nrow), squeeze=False)
    for ax, m in zip(axes.flat, cols, strict=False):
        x = ok[m].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        if len(x):
            ax.hist(x, bins=min(30, max(5, int(math.sqrt(len(x))))), color="tab:blue", alpha=0.8)
            ax.axvline(float(np.mean(x)), color="k", lw=1)
        ax.set_title(m, fontsize=8)
        ax.set_xlabel(units.get(m, "") or "-", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(cols) :]:
        ax.axis("off")
    fig.suptitle(f"metric distributions over {len(ok)} completed runs (line: mean)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_sampled_tracks(logs: Any, max_runs: int = 50, seed: int = 0) -> Any:
    """North/east truth tracks of a sample of runs, one colour per entity name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 6))
    ids = sorted(logs["run_id"].astype(str).unique())
    rng = np.random.default_rng(seed)
    pick = set(rng.choice(ids, size=min(max_runs, len(ids)), replace=False)) if ids else set()
    sub = logs[logs["run_id"].astype(str).isin(pick)]
    names = sorted(sub["entity"].astype(str).unique())
    colours = plt.get_cmap("tab10")
    for k, name in enumerate(names):
        part = sub[sub["entity"].astype(str) == name]
        first = True
        for _rid, g in part.groupby("run_id", observed=True):
            ax.plot(
                g["truth.pos.east"],
                g["truth.pos.north"],
                color=colours(k % 10),
                lw=0.6,
                alpha=0.35,
                label=name if first else None,
            )
            first = False
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"truth tracks of {len(pick)} of {len(ids)} runs")
    if names and len(names) <= 12:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def _ensemble_tracks(logs: Any) -> Any:
    """The ensemble track figure of :mod:`marinesim.io.ensemble_plots` (track density, a drawn
    sample, start and end points) over every (run, entity) track; the simple sampled-tracks
    figure when that module is not available."""
    try:
        from marinesim.engine.results import RunResult, Signal
        from marinesim.io.ensemble_plots import trajectory_ensemble_figure
    except ImportError:
        return plot_sampled_tracks(logs)
    if not hasattr(RunResult, "sample"):
        return plot_sampled_tracks(logs)
    times = np.unique(logs["t"].to_numpy(dtype=float))
    groups = list(logs.groupby(["run_id", "entity"], observed=True, sort=True))
    pos = np.full((len(groups), len(times), 3), np.nan)
    entities = []
    for i, ((rid, ent), g) in enumerate(groups):
        k = np.searchsorted(times, g["t"].to_numpy(dtype=float))
        pos[i, k, 0] = g["truth.pos.north"].to_numpy(dtype=float)
        pos[i, k, 1] = g["truth.pos.east"].to_numpy(dtype=float)
        entities.append({"id": i, "name": f"{ent}@{rid}", "block": str(ent), "index": i, "team": 1})
    result = RunResult(
        t=times,
        signals={"truth.pos": Signal(pos, "m", ("north", "east", "down"))},
        entities=entities,
        manifest={"scenario": "batch"},
    )
    n_runs = logs["run_id"].nunique()
    return trajectory_ensemble_figure(
        result, title=f"truth tracks of {n_runs} runs ({len(groups)} vehicle tracks)"
    )


def save_batch_figures(
    runs: Any, metrics: Sequence[str], units: dict[str, str], outdir: Path
) -> dict[str, Path]:
    """Write ``metrics_hist.png`` and (with logs of vehicles that move on the east/north
    plane, not a SURFTRAK heave-only batch) ``tracks.png``; return their paths."""
    import matplotlib.pyplot as plt
    import pandas as pd

    out: dict[str, Path] = {}
    if metrics:
        fig = plot_metric_histograms(runs, metrics, units)
        out["metrics_hist"] = outdir / "metrics_hist.png"
        fig.savefig(out["metrics_hist"], dpi=110)
        plt.close(fig)
    logs_dir = outdir / "logs"
    if logs_dir.exists() and any(logs_dir.iterdir()):
        logs = pd.read_parquet(
            logs_dir, columns=["run_id", "entity", "t", "truth.pos.north", "truth.pos.east"]
        )
        ne = logs[["truth.pos.north", "truth.pos.east"]].to_numpy(dtype=float)
        ne = ne[np.all(np.isfinite(ne), axis=1)]
        if len(ne) and float(np.ptp(ne, axis=0).max()) > 0.0:  # no tracks of a heave-only run
            fig = _ensemble_tracks(logs)
            out["tracks"] = outdir / "tracks.png"
            fig.savefig(out["tracks"], dpi=110)
            plt.close(fig)
    return out
