"""Ensemble figures for runs with many entities (more than :data:`MAX_INDIVIDUAL`).

One line and one legend entry per vehicle stops being readable (and takes minutes to draw)
past about a dozen vehicles.  These views draw the fleet as a whole, with no per-entity legend:

* :func:`trajectory_ensemble_figure` — track density on the east/north plane (a 2-D histogram
  of every sampled position, log colour scale), a random sample of tracks drawn as one line
  collection, and every start and end point as two scatter layers;
* :func:`timeseries_ensemble_figure` — heading as a density over time (circular, so no
  quantiles that would average 359° and 1° into 180°), speed and depth as the median with
  25–75 % and 5–95 % bands over the vehicles at each time;
* 6-DOF variants (:func:`timeseries_6dof_ensemble_figure`, :func:`track3d_ensemble_figure`,
  :func:`thruster_usage_ensemble_figure`) built the same way;
* navigation variants (:func:`nav_tracks_ensemble_figure`, :func:`nav_error_ensemble_figure`,
  :func:`nav_contacts_ensemble_figure`): belief density with sampled truth/belief tracks, the
  horizontal error and its k-σ bound as bands, and the share of vehicles inside their bound.

Signals are read with :meth:`RunResult.sample` (at most :data:`MAX_FRAMES` frames), so a long
streamed run is never loaded whole.  :func:`dispatch` is the hook at the entry of the figure
functions of :mod:`marinesim.io.plots`, :mod:`marinesim.io.sixdof_plots` and
:mod:`marinesim.io.nav_plots`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from marinesim.engine.results import RunResult

__all__ = [
    "MAX_FRAMES",
    "MAX_INDIVIDUAL",
    "SAMPLE_TRACKS",
    "dispatch",
    "is_ensemble",
    "nav_contacts_ensemble_figure",
    "nav_error_ensemble_figure",
    "nav_tracks_ensemble_figure",
    "thruster_usage_ensemble_figure",
    "timeseries_6dof_ensemble_figure",
    "timeseries_ensemble_figure",
    "track3d_ensemble_figure",
    "trajectory_ensemble_figure",
]

#: Entities drawn one by one (with a legend) up to this count; ensemble views above it.
MAX_INDIVIDUAL = 12
#: Frames read per signal for a figure (every k-th frame of a longer run).
MAX_FRAMES = 1500
#: Tracks drawn individually (a seeded random sample) in the ensemble trajectory figure.
SAMPLE_TRACKS = 24
_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _plt() -> Any:
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def is_ensemble(result: RunResult) -> bool:
    """True when the run has more entities than are drawn one by one."""
    return result.n > MAX_INDIVIDUAL


def _title(result: RunResult, what: str, title: str | None) -> str:
    if title:
        return title
    scen = result.manifest.get("scenario", "run")
    return f"{scen}: {what}, {result.n} vehicles (seed {result.manifest.get('seed')})"


def _find(result: RunResult, suffix: str) -> str | None:
    for name in result.signals:
        if name.endswith("." + suffix) or name == suffix:
            return name
    return None


def _quantiles(x: np.ndarray) -> np.ndarray | None:
    """(5, T) quantiles over rows of x (N, T), ignoring NaN; None if nothing is finite."""
    fin = np.isfinite(x)
    if not fin.any():
        return None
    if fin.all():
        return np.quantile(x, _QUANTILES, axis=0)
    cols = fin.any(axis=0)
    q = np.full((len(_QUANTILES), x.shape[1]), np.nan)
    q[:, cols] = np.nanquantile(x[:, cols], _QUANTILES, axis=0)
    return q


def _bands(ax: Any, t: np.ndarray, x: np.ndarray, colour: str, label: str) -> bool:
    """Median line and 25–75 % / 5–95 % bands of x (N, T) over the vehicles."""
    q = _quantiles(x)
    if q is None:
        return False
    ax.fill_between(t, q[0], q[4], color=colour, alpha=0.18, lw=0, label=f"{label} 5–95 %")
    ax.fill_between(t, q[1], q[3], color=colour, alpha=0.35, lw=0, label=f"{label} 25–75 %")
    ax.plot(t, q[2], color=colour, lw=1.4, label=f"{label} median")
    return True


def _heading_density(ax: Any, t: np.ndarray, hd: np.ndarray) -> Any:
    """Heading [deg] over time as a 2-D histogram (N, T) → image; returns the mesh."""
    from matplotlib.colors import LogNorm

    fin = np.isfinite(hd)
    tt = np.broadcast_to(t, hd.shape)
    tb = min(400, max(2, len(t)))
    h, te, he = np.histogram2d(
        tt[fin], np.mod(hd[fin], 360.0), bins=(tb, 72), range=((t[0], t[-1] + 1e-9), (0, 360))
    )
    mesh = ax.pcolormesh(
        te, he, np.where(h.T > 0, h.T, np.nan), cmap="viridis", norm=LogNorm(), shading="flat"
    )
    ax.set_ylim(0, 360)
    ax.set_yticks([0, 90, 180, 270, 360])
    return mesh


def density_map(
    fig: Any, ax: Any, e: np.ndarray, n: np.ndarray, bins: int, label: str
) -> None:
    """Draw a log-scaled 2-D histogram of positions (east ``e``, north ``n`` [m]) on ``ax``.

    Square cells (about ``bins`` across the larger span), a 3 % margin, empty cells blank,
    the axes limited to the data, and a colour bar labelled ``label``.
    """
    from matplotlib.colors import LogNorm

    span = max(float(np.ptp(e)), float(np.ptp(n)), 1.0)
    pad = 0.03 * span
    rng_e = (float(e.min()) - pad, float(e.max()) + pad)
    rng_n = (float(n.min()) - pad, float(n.max()) + pad)
    be = max(8, int(bins * (rng_e[1] - rng_e[0]) / (span + 2 * pad)))
    bn = max(8, int(bins * (rng_n[1] - rng_n[0]) / (span + 2 * pad)))
    h, xe, ye = np.histogram2d(e, n, bins=(be, bn), range=(rng_e, rng_n))
    mesh = ax.pcolormesh(
        xe, ye, np.where(h.T > 0, h.T, np.nan), cmap="Blues", norm=LogNorm(), shading="flat"
    )
    fig.colorbar(mesh, ax=ax, shrink=0.8, label=label)
    ax.set_xlim(*rng_e)
    ax.set_ylim(*rng_n)


def trajectory_ensemble_figure(
    result: RunResult,
    *,
    title: str | None = None,
    sample: int = SAMPLE_TRACKS,
    seed: int = 0,
    bins: int = 200,
) -> Any:
    """Track density, a sample of tracks, and start/end points of every vehicle.

    Parameters
    ----------
    result : RunResult
        Needs ``truth.pos``.
    title : str, optional
    sample : int
        Tracks drawn as lines (a random draw with ``seed``; all when fewer vehicles).
    seed : int
        Seed of the track sample (the figure is reproducible).
    bins : int
        Histogram cells along the longer axis.

    Returns
    -------
    matplotlib.figure.Figure
        No per-entity legend: three legend entries (tracks, start, end) and a colour bar.
    """
    plt = _plt()
    from matplotlib.collections import LineCollection

    _t, pos = result.sample("truth.pos", MAX_FRAMES)
    north, east = pos[:, :, 0], pos[:, :, 1]
    fin = np.isfinite(north) & np.isfinite(east)
    fig, ax = plt.subplots(figsize=(9.0, 8.0), dpi=110, layout="constrained")
    if fin.any():
        e, n = east[fin], north[fin]
        density_map(fig, ax, e, n, bins, "track density [samples per cell]")
    k = min(int(sample), result.n)
    rows = np.sort(np.random.default_rng(seed).choice(result.n, size=k, replace=False))
    segs = [np.column_stack([east[i], north[i]])[fin[i]] for i in rows]
    ax.add_collection(
        LineCollection(
            segs, colors="tab:orange", linewidths=0.9, alpha=0.9, label=f"{k} sampled tracks"
        )
    )
    first = np.argmax(fin, axis=1)
    last = fin.shape[1] - 1 - np.argmax(fin[:, ::-1], axis=1)
    has = fin.any(axis=1)
    idx = np.arange(result.n)[has]
    ax.scatter(
        east[idx, first[has]], north[idx, first[has]], s=4, c="tab:green", alpha=0.7, label="start"
    )
    ax.scatter(
        east[idx, last[has]],
        north[idx, last[has]],
        s=4,
        c="tab:red",
        marker="s",
        alpha=0.7,
        label="end",
    )
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncols=3, fontsize=8)
    ax.set_title(_title(result, "track density", title), fontsize=10)
    ax.grid(True, alpha=0.3)
    return fig


def timeseries_ensemble_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Heading density, speed and depth bands over time (no per-entity legend).

    Returns
    -------
    matplotlib.figure.Figure
        Up to three panels: heading [deg], speed [m/s], depth [m]; those that
        :func:`marinesim.io.plots.figure_plan` finds in the run (a panel whose signal never
        changes and has no setpoint is left out).
    """
    from marinesim.io.plots import figure_plan

    plt = _plt()
    plan = figure_plan(result).get("timeseries", ("heading", "speed", "depth"))
    panels = [k for k in ("heading", "speed", "depth") if k in plan] or ["depth"]
    t, pos = result.sample("truth.pos", MAX_FRAMES)
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(11, 0.5 + 2.7 * len(panels)), sharex=True,
        layout="constrained", squeeze=False,
    )  # fmt: skip
    axes = axes[:, 0]
    for ax, key in zip(axes, panels, strict=True):
        if key == "heading":
            _, hd = result.sample("truth.heading", MAX_FRAMES)
            if len(t):
                mesh = _heading_density(ax, t, hd[:, :, 0])
                fig.colorbar(mesh, ax=ax, label="vehicles", pad=0.01)
            ax.set_ylabel("heading [deg]")
        elif key == "speed":
            _, sp = result.sample("truth.speed", MAX_FRAMES)
            _bands(ax, t, sp[:, :, 0], "tab:blue", "speed")
            ax.set_ylabel("speed [m/s]")
        else:
            _bands(ax, t, pos[:, :, 2], "tab:purple", "depth")
            ax.set_ylabel("depth [m]")
            ax.invert_yaxis()
        if key != "heading":
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(result, "ensemble over time", title), fontsize=10)
    return fig


def timeseries_6dof_ensemble_figure(result: RunResult, *, title: str | None = None) -> Any:
    """6-DOF states as bands over the vehicles: depth, roll, pitch, heading density, u."""
    plt = _plt()
    t, pos = result.sample("truth.pos", MAX_FRAMES)
    _, hd = result.sample("truth.heading", MAX_FRAMES)
    eul = _find(result, "euler")
    nu = _find(result, "nu")
    fig, axes = plt.subplots(3, 2, figsize=(12, 9), sharex=True, layout="constrained")
    ax = axes.ravel()
    _bands(ax[0], t, pos[:, :, 2], "tab:purple", "depth")
    ax[0].set_ylabel("depth [m]")
    ax[0].invert_yaxis()
    if len(t):
        _heading_density(ax[1], t, hd[:, :, 0])
    ax[1].set_ylabel("heading [deg]")
    if eul is not None:
        _, e = result.sample(eul, MAX_FRAMES)
        _bands(ax[2], t, e[:, :, 0], "tab:orange", "roll")
        _bands(ax[3], t, e[:, :, 1], "tab:green", "pitch")
    ax[2].set_ylabel("roll [deg]")
    ax[3].set_ylabel("pitch [deg]")
    if nu is not None:
        _, v = result.sample(nu, MAX_FRAMES)
        _bands(ax[4], t, v[:, :, 0], "tab:blue", "u")
        _bands(ax[5], t, np.degrees(v[:, :, 5]), "tab:red", "r")
    ax[4].set_ylabel("surge u [m/s]")
    ax[5].set_ylabel("yaw rate r [deg/s]")
    for a in ax:
        a.grid(True, alpha=0.3)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=6, loc="upper right")
    for a in ax[4:]:
        a.set_xlabel("time [s]")
    fig.suptitle(_title(result, "6-DOF ensemble", title), fontsize=10)
    return fig


def track3d_ensemble_figure(
    result: RunResult, *, title: str | None = None, sample: int = SAMPLE_TRACKS, seed: int = 0
) -> Any:
    """A seeded random sample of 3-D tracks (depth down), one line collection, no legend."""
    plt = _plt()
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    _t, pos = result.sample("truth.pos", MAX_FRAMES)
    k = min(int(sample), result.n)
    rows = np.sort(np.random.default_rng(seed).choice(result.n, size=k, replace=False))
    fig = plt.figure(figsize=(9, 7))
    ax = fig.add_subplot(projection="3d")
    segs = []
    for i in rows:
        p = pos[i]
        ok = np.all(np.isfinite(p), axis=1)
        segs.append(np.column_stack([p[ok, 1], p[ok, 0], -p[ok, 2]]))
    ax.add_collection3d(Line3DCollection(segs, colors="0.2", linewidths=0.7))
    pts = np.concatenate(segs) if segs else np.zeros((1, 3))
    if len(pts):
        for setter, j in ((ax.set_xlim, 0), (ax.set_ylim, 1), (ax.set_zlim, 2)):
            lo, hi = float(np.min(pts[:, j])), float(np.max(pts[:, j]))
            setter(lo - 0.5, hi + 0.5)
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_zlabel("-depth [m]")
    ax.set_title(_title(result, f"{k} sampled 3-D tracks", title), fontsize=10)
    return fig


def thruster_usage_ensemble_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Median PWM per thruster over the vehicles, and total-current bands."""
    plt = _plt()
    pwm = _find(result, "pwm")
    cur = [n for n in result.signals if n.endswith(".current_total")]
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True, layout="constrained")
    t = result.t
    if pwm is not None:
        t, v = result.sample(pwm, MAX_FRAMES)
        with np.errstate(all="ignore"):
            med = np.nanmedian(v, axis=0) if np.isfinite(v).any() else np.full(v.shape[1:], np.nan)
        for j in range(v.shape[2]):
            axes[0].plot(t, med[:, j], lw=1, label=f"t{j}")
        axes[0].legend(fontsize=6, ncol=8, loc="upper right")
    axes[0].set_ylabel("median PWM [µs]")
    for name in cur:
        t, c = result.sample(name, MAX_FRAMES)
        _bands(axes[1], t, c[:, :, 0], "tab:red", name)
    axes[1].set_ylabel("total current [A]")
    axes[1].set_xlabel("time [s]")
    if axes[1].get_legend_handles_labels()[0]:
        axes[1].legend(fontsize=6, loc="upper right")
    for a in axes:
        a.grid(True, alpha=0.3)
    fig.suptitle(_title(result, "thruster usage", title), fontsize=10)
    return fig


def _belief_or_truth(result: RunResult) -> str:
    return "belief.pos" if "belief.pos" in result.signals else "truth.pos"


def nav_tracks_ensemble_figure(
    result: RunResult,
    *,
    title: str | None = None,
    sample: int = SAMPLE_TRACKS,
    seed: int = 0,
    bins: int = 200,
) -> Any:
    """Belief-position density, and a seeded sample of truth (solid) and belief (dashed) tracks.

    Parameters
    ----------
    result : RunResult
        Needs ``truth.pos``; ``belief.pos`` where a navigation sensor writes the belief.
    title : str, optional
    sample : int
        Vehicles whose truth and belief tracks are drawn (one line collection each).
    seed : int
        Seed of the sample.
    bins : int
        Histogram cells along the longer axis.

    Returns
    -------
    matplotlib.figure.Figure
        No per-entity legend: two legend entries (truth, belief) and a colour bar.
    """
    plt = _plt()
    from matplotlib.collections import LineCollection

    _t, tp = result.sample("truth.pos", MAX_FRAMES)
    _t, bp = result.sample(_belief_or_truth(result), MAX_FRAMES)
    fig, ax = plt.subplots(figsize=(9.0, 8.0), dpi=110, layout="constrained")
    fin = np.isfinite(bp[:, :, 0]) & np.isfinite(bp[:, :, 1])
    if fin.any():
        e, n = bp[:, :, 1][fin], bp[:, :, 0][fin]
        density_map(fig, ax, e, n, bins, "belief density [samples per cell]")
    k = min(int(sample), result.n)
    rows = np.sort(np.random.default_rng(seed).choice(result.n, size=k, replace=False))
    for pos, style, colour, what in (
        (tp, "solid", "0.15", "truth"),
        (bp, "dashed", "tab:orange", "belief"),
    ):
        ok = np.isfinite(pos[:, :, 0]) & np.isfinite(pos[:, :, 1])
        segs = [np.column_stack([pos[i, :, 1], pos[i, :, 0]])[ok[i]] for i in rows]
        ax.add_collection(
            LineCollection(
                segs,
                colors=colour,
                linestyles=style,
                linewidths=0.9,
                alpha=0.9,
                label=f"{k} sampled {what} tracks",
            )
        )
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncols=2, fontsize=8)
    ax.set_title(_title(result, "truth vs belief", title), fontsize=10)
    ax.grid(True, alpha=0.3)
    return fig


def nav_error_ensemble_figure(
    result: RunResult, *, title: str | None = None, sigma: float = 2.0
) -> Any:
    """Horizontal estimation error ‖p̂ − p‖ and its k-σ bound as quantile bands over the fleet.

    Parameters
    ----------
    result : RunResult
        Needs ``truth.pos`` and ``belief.pos``; ``<nav>.pos_std`` for the bound.
    title : str, optional
    sigma : float
        Size of the bound in standard deviations, σ_h = √(σ_n² + σ_e²).

    Returns
    -------
    matplotlib.figure.Figure
        Top: error bands [m] with the median bound; bottom (with ``pos_std``): the share of
        vehicles whose error is within their own k-σ bound [%], against 1 − exp(−k²), the
        share a consistent filter with isotropic Gaussian errors gives.  No per-entity legend.
    """
    plt = _plt()
    t, tp = result.sample("truth.pos", MAX_FRAMES)
    _, bp = result.sample(_belief_or_truth(result), MAX_FRAMES)
    err = np.linalg.norm((bp - tp)[:, :, :2], axis=2)
    std_name = _find(result, "pos_std")
    fig, axes = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True, layout="constrained")
    _bands(axes[0], t, err, "tab:blue", "error")
    if std_name is not None:
        _, std = result.sample(std_name, MAX_FRAMES)
        bound = sigma * np.hypot(std[:, :, 0], std[:, :, 1])
        q = _quantiles(bound)
        if q is not None:
            axes[0].plot(t, q[2], ":", color="tab:red", lw=1.4, label=f"{sigma:g}-sigma median")
        with np.errstate(invalid="ignore"):
            both = np.isfinite(err) & np.isfinite(bound)
            inside = np.sum((err <= bound) & both, axis=0)
            count = np.sum(both, axis=0)
            share = np.where(count > 0, 100.0 * inside / np.maximum(count, 1), np.nan)
        axes[1].plot(t, share, color="tab:green", lw=1.2, label=f"within own {sigma:g}-sigma")
        # isotropic 2-D Gaussian, σ per axis: P(r ≤ k·√2·σ) = 1 − exp(−k²) (Rayleigh)
        ref = 100.0 * (1.0 - np.exp(-sigma * sigma))
        axes[1].axhline(ref, color="0.4", ls="--", lw=1, label=f"consistent filter {ref:.1f} %")
        axes[1].set_ylim(0, 100)
        axes[1].legend(loc="lower right", fontsize=7)
    axes[1].set_ylabel("vehicles within bound [%]")
    axes[0].set_ylabel("horizontal error [m]")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    axes[1].set_xlabel("time [s]")
    for a in axes:
        a.grid(True, alpha=0.3)
    fig.suptitle(_title(result, "estimation error (belief - truth)", title), fontsize=10)
    return fig


def nav_contacts_ensemble_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Density of reported contact positions, and detections per scan as bands over the fleet."""
    plt = _plt()
    from matplotlib.colors import LogNorm

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.5), layout="constrained")
    cp_name, det_name = _find(result, "contact_pos"), _find(result, "detections")
    if cp_name is not None:
        _, cp = result.sample(cp_name, MAX_FRAMES)
        fin = np.isfinite(cp[:, :, 0]) & np.isfinite(cp[:, :, 1])
        if fin.any():
            h, xe, ye = np.histogram2d(cp[:, :, 1][fin], cp[:, :, 0][fin], bins=120)
            mesh = ax.pcolormesh(
                xe, ye, np.where(h.T > 0, h.T, np.nan), cmap="Reds", norm=LogNorm(), shading="flat"
            )
            fig.colorbar(mesh, ax=ax, shrink=0.8, label="first reported contact per scan")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_title("contact reports", fontsize=9)
    if det_name is not None:
        t, det = result.sample(det_name, MAX_FRAMES)
        if _bands(ax2, t, det[:, :, 0], "tab:red", "detections"):
            ax2.legend(fontsize=7, loc="upper right")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("detections per scan")
    ax2.grid(True, alpha=0.3)
    fig.suptitle(_title(result, "contacts", title), fontsize=10)
    return fig


_VIEWS = {
    "trajectory": trajectory_ensemble_figure,
    "timeseries": timeseries_ensemble_figure,
    "timeseries_6dof": timeseries_6dof_ensemble_figure,
    "track3d": track3d_ensemble_figure,
    "thruster_usage": thruster_usage_ensemble_figure,
    "nav_tracks": nav_tracks_ensemble_figure,
    "nav_error": nav_error_ensemble_figure,
    "nav_contacts": nav_contacts_ensemble_figure,
}


def dispatch(kind: str, result: RunResult, *, title: str | None = None) -> Any:
    """The ensemble view of figure ``kind`` when ``result`` has many entities, else None.

    Parameters
    ----------
    kind : {"trajectory", "timeseries", "timeseries_6dof", "track3d", "thruster_usage", \
            "nav_tracks", "nav_error", "nav_contacts"}
    result : RunResult
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure or None
        None: draw the per-entity figure.
    """
    if not is_ensemble(result):
        return None
    return _VIEWS[kind](result, title=title)
