"""Figures of a run (matplotlib, Agg backend); every function returns a ``Figure``.

* :func:`trajectory_figure` — tracks per vehicle (east/north, equal aspect) with start and end
  markers, the belief track (dotted) where a navigation plugin writes belief, the waypoints the
  autonomy steered to, drift arrows along each track, and the current field as a background
  (quiver over a speed map).
* :func:`timeseries_figure` — heading, speed and depth against their setpoints.
* :func:`save_figures` — both as PNG files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.results import RunResult

__all__ = ["current_from_manifest", "save_figures", "timeseries_figure", "trajectory_figure"]

CurrentFn = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def current_from_manifest(result: RunResult) -> CurrentFn | None:
    """The run's current as ``f(east, north) -> (u_east, v_north)`` from its manifest, or None."""
    man = result.manifest
    src = man.get("current_field_file")
    uni = man.get("current_uniform") or [0.0, 0.0]
    fld = None
    if src and Path(src).is_file():
        from marinesim.environment.current import CurrentField

        fld, _w = CurrentField.parse(Path(src).read_text(encoding="utf-8"), file=src)
    if fld is None and not any(uni):
        return None

    def f(east: np.ndarray, north: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        u = np.full(np.shape(east), float(uni[1]))
        v = np.full(np.shape(east), float(uni[0]))
        if fld is not None:
            fx, fy = fld.force(east, north)
            u = u + fx
            v = v + fy
        return u, v

    return f


def _drift_signal(result: RunResult) -> np.ndarray | None:
    for name, sig in result.signals.items():
        if name.endswith(".drift") and sig.values.shape[2] == 2:
            return sig.values
    return None


def _targets(result: RunResult) -> np.ndarray | None:
    for name, sig in result.signals.items():
        if name.endswith(".target") and sig.values.shape[2] == 2:
            return sig.values
    return None


def trajectory_figure(
    result: RunResult,
    *,
    current: CurrentFn | None = None,
    title: str | None = None,
    arrows: int = 12,
) -> Any:
    """Tracks on the east/north plane.

    Parameters
    ----------
    result : RunResult
        Needs ``truth.pos``; uses ``*.drift`` (east, north) and ``*.target`` signals if present.
    current : callable, optional
        ``f(east, north) -> (u_east, v_north)`` [m/s] for the background (default: from the
        manifest's current-field file / uniform current).
    title : str, optional
    arrows : int
        Drift arrows per track.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _plt()
    from matplotlib.lines import Line2D

    pos = result["truth.pos"]  # (N, T, 3)
    north, east = pos[:, :, 0], pos[:, :, 1]
    fig, ax = plt.subplots(figsize=(9.0, 9.0), dpi=110, layout="constrained")
    finite = np.isfinite(north) & np.isfinite(east)
    if finite.any():
        e_lo, e_hi = np.nanmin(east[finite]), np.nanmax(east[finite])
        n_lo, n_hi = np.nanmin(north[finite]), np.nanmax(north[finite])
    else:
        e_lo = e_hi = n_lo = n_hi = 0.0
    tg = _targets(result)
    if tg is not None and np.isfinite(tg).any():
        e_lo, e_hi = min(e_lo, np.nanmin(tg[:, :, 1])), max(e_hi, np.nanmax(tg[:, :, 1]))
        n_lo, n_hi = min(n_lo, np.nanmin(tg[:, :, 0])), max(n_hi, np.nanmax(tg[:, :, 0]))
    span = max(e_hi - e_lo, n_hi - n_lo, 10.0)
    pad = 0.08 * span
    xlim = (e_lo - pad, e_hi + pad)
    ylim = (n_lo - pad, n_hi + pad)

    cur = current if current is not None else current_from_manifest(result)
    handles: list[Any] = []
    if cur is not None:
        gx = np.linspace(*xlim, 120)
        gy = np.linspace(*ylim, 120)
        ge, gn = np.meshgrid(gx, gy)
        u, v = cur(ge.ravel(), gn.ravel())
        spd = np.hypot(u, v).reshape(ge.shape)
        mesh = ax.pcolormesh(gx, gy, spd, cmap="Blues", shading="auto", alpha=0.55, zorder=0)
        cb = fig.colorbar(mesh, ax=ax, shrink=0.8, pad=0.02)
        cb.set_label("current speed [m/s]")
        qx = np.linspace(*xlim, 22)
        qy = np.linspace(*ylim, 22)
        qe, qn = np.meshgrid(qx, qy)
        qu, qv = cur(qe.ravel(), qn.ravel())
        qmax = float(np.nanmax(np.hypot(qu, qv))) or 1.0
        cell = (xlim[1] - xlim[0]) / 22
        ax.quiver(
            qe.ravel(),
            qn.ravel(),
            qu / qmax * 0.9 * cell,
            qv / qmax * 0.9 * cell,
            angles="xy",
            scale_units="xy",
            scale=1.0,
            color="#2f4f7f",
            alpha=0.55,
            width=0.0022,
            zorder=1,
        )
        handles.append(
            Line2D(
                [],
                [],
                color="#4a6fa5",
                marker=r"$\rightarrow$",
                linestyle="none",
                markersize=12,
                label="current field",
            )
        )

    colors = plt.get_cmap("tab10")
    belief = result["belief.pos"] if "belief.pos" in result.signals else None
    drift = _drift_signal(result)
    dmax = (
        float(np.nanmax(np.hypot(drift[..., 0], drift[..., 1])))
        if drift is not None and np.isfinite(drift).any()
        else 0.0
    )
    arrow_len = 0.06 * span
    for i, ent in enumerate(result.entities):
        c = colors(i % 10)
        ok = finite[i]
        if not ok.any():
            continue
        ax.plot(east[i, ok], north[i, ok], "-", color=c, lw=1.8, zorder=3, label=ent["name"])
        if belief is not None and np.isfinite(belief[i, :, :2]).any():
            ax.plot(belief[i, :, 1], belief[i, :, 0], ":", color=c, lw=1.3, alpha=0.9, zorder=3)
        first, last = np.flatnonzero(ok)[[0, -1]]
        ax.plot(east[i, first], north[i, first], "o", color=c, ms=8, mec="k", zorder=5)
        ax.plot(east[i, last], north[i, last], "s", color=c, ms=8, mec="k", zorder=5)
        if tg is not None:
            pts = tg[i][np.isfinite(tg[i]).all(axis=1)]
            if len(pts):
                keep = np.concatenate([[True], np.any(np.diff(pts, axis=0) != 0, axis=1)])
                pts = pts[keep]
                ax.plot(
                    pts[:, 1], pts[:, 0], "x--", color=c, ms=7, mew=2, lw=0.8, alpha=0.6, zorder=2
                )
        if drift is not None and dmax > 0:
            idx = np.flatnonzero(ok & np.isfinite(drift[i]).all(axis=1))
            if idx.size:
                sel = idx[np.linspace(0, idx.size - 1, min(arrows, idx.size)).astype(int)]
                du, dv = drift[i, sel, 0], drift[i, sel, 1]
                ax.quiver(
                    east[i, sel],
                    north[i, sel],
                    du / dmax * arrow_len,
                    dv / dmax * arrow_len,
                    angles="xy",
                    scale_units="xy",
                    scale=1.0,
                    color=c,
                    width=0.004,
                    edgecolor="k",
                    linewidth=0.4,
                    zorder=4,
                )
    handles = [*ax.get_legend_handles_labels()[0], *handles]
    handles.append(
        Line2D([], [], marker="o", color="gray", mec="k", linestyle="none", label="start")
    )
    handles.append(Line2D([], [], marker="s", color="gray", mec="k", linestyle="none", label="end"))
    if tg is not None:
        handles.append(Line2D([], [], marker="x", color="gray", linestyle="--", label="waypoints"))
    if belief is not None and np.isfinite(belief).any():
        handles.append(Line2D([], [], color="gray", linestyle=":", label="belief (navigation)"))
    if drift is not None and dmax > 0:
        handles.append(
            Line2D(
                [],
                [],
                marker=r"$\nearrow$",
                color="gray",
                linestyle="none",
                markersize=12,
                label=f"drift (longest = {dmax:.2f} m/s)",
            )
        )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(5, len(handles)),
        fontsize=9,
        framealpha=0.9,
    )
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.grid(True, alpha=0.3)
    man = result.manifest
    t_end = float(result.t[-1]) if len(result.t) else 0.0
    ax.set_title(
        title
        or f"{man.get('scenario', 'run')} — seed {man.get('seed')} — "
        f"t = {t_end:.0f} s — {man.get('status', '')}"
    )
    return fig


def _first(result: RunResult, suffix: str) -> np.ndarray | None:
    for name, sig in result.signals.items():
        if name.endswith(suffix):
            return sig.values[:, :, 0]
    return None


def _break_wraps(heading: np.ndarray) -> np.ndarray:
    """Headings with NaN inserted where they wrap through 0/360 (no vertical lines)."""
    h = np.asarray(heading, dtype=float).copy()
    jump = np.abs(np.diff(h)) > 180.0
    h[1:][jump] = np.nan
    return h


def timeseries_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Heading, speed and depth vs time with their setpoints (dashed) per vehicle."""
    plt = _plt()
    t = result.t
    fig, axes = plt.subplots(3, 1, figsize=(10, 8), dpi=100, sharex=True, layout="constrained")
    colors = plt.get_cmap("tab10")
    pos = result["truth.pos"]
    rows = [
        ("heading [deg]", result["truth.heading"][:, :, 0], _first(result, ".desired_heading")),
        ("speed [m/s]", result["truth.speed"][:, :, 0], _first(result, ".desired_speed")),
        ("depth [m]", pos[:, :, 2], _first(result, ".desired_depth")),
    ]
    for row, (ax, (label, val, des)) in enumerate(zip(axes, rows, strict=True)):
        for i, ent in enumerate(result.entities):
            c = colors(i % 10)
            y = _break_wraps(val[i]) if row == 0 else val[i]
            ax.plot(t, y, color=c, lw=1.2, label=ent["name"])
            if des is not None:
                yd = _break_wraps(des[i]) if row == 0 else des[i]
                ax.plot(t, yd, "--", color=c, lw=1.0, alpha=0.8)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[2].invert_yaxis()
    axes[0].set_ylim(-5, 365)
    axes[-1].set_xlabel("time [s]")
    axes[0].legend(loc="upper right", fontsize=8, ncols=min(4, max(1, len(result.entities))))
    man = result.manifest
    fig.suptitle(
        title
        or f"{man.get('scenario', 'run')} — seed {man.get('seed')} — solid: truth, dashed: desired"
    )
    return fig


def save_figures(
    result: RunResult, directory: str | Path, *, current: CurrentFn | None = None
) -> dict[str, Path]:
    """Write ``trajectory.png`` and ``timeseries.png``; return their paths."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    fig = trajectory_figure(result, current=current)
    p = out / "trajectory.png"
    fig.savefig(p)
    plt.close(fig)
    paths["trajectory"] = p
    fig = timeseries_figure(result)
    p = out / "timeseries.png"
    fig.savefig(p)
    plt.close(fig)
    paths["timeseries"] = p
    return paths
