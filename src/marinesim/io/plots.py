"""Figures of a run (matplotlib, Agg backend); every function returns a ``Figure``.

* :func:`trajectory_figure` — tracks per vehicle (east/north, equal aspect) with start and end
  markers, the belief track (dotted) where a navigation plugin writes belief, the waypoints the
  autonomy steered to, drift arrows along each track, and the current field as a background
  (quiver over a speed map).
* :func:`timeseries_figure` — heading (broken at 0/360 wraps), speed and depth against their
  setpoints, and an actuator panel (thrust/rudder/elevator of ``usm``; thruster commands of a
  6-DOF vehicle).
* :func:`save_figures` — both as PNG (or PDF/SVG) files, those that fit the run
  (:func:`figure_plan`: no trajectory for a vehicle that never moves horizontally, such as a
  SURFTRAK run; no heading or speed panel when they stay constant and have no setpoint).
* :func:`usm_run_figures` / :func:`save_usm_run_figures` — the same two figures for the table
  of ``marinesim usm run`` (a ``.moos`` mission).

Axes fit the motion (a station-keeping vehicle that moves centimetres is drawn at centimetre
scale), legends sit outside the axes, a uniform current is an arrow in the legend rather than
a colour map, and the trajectory marks start, end and time ticks and names the datum.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.results import RunResult

__all__ = [
    "current_from_manifest",
    "figure_plan",
    "save_figures",
    "save_usm_run_figures",
    "timeseries_figure",
    "trajectory_figure",
    "usm_run_figures",
]

#: Smallest extent of a trajectory axis [m]: below it, the motion is drawn at this scale.
MIN_SPAN_M = 0.5

CurrentFn = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _ensemble(kind: str, result: RunResult, title: str | None) -> Any:
    from marinesim.io.ensemble_plots import dispatch

    return dispatch(kind, result, title=title)


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

    f.uniform = fld is None  # type: ignore[attr-defined]
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


def _is_uniform(cur: CurrentFn, xlim: tuple[float, float], ylim: tuple[float, float]) -> bool:
    flag = getattr(cur, "uniform", None)
    if flag is not None:
        return bool(flag)
    ge, gn = np.meshgrid(np.linspace(*xlim, 7), np.linspace(*ylim, 7))
    u, v = cur(ge.ravel(), gn.ravel())
    return bool(np.ptp(u) < 1e-12 and np.ptp(v) < 1e-12)


def _datum_text(datum: Any) -> str:
    """``datum (0 N, 0 E) = 42.358456° N, 71.087589° W`` from [lat, lon] or a mapping."""
    if isinstance(datum, dict):
        lat = float(datum.get("latitude_deg", datum.get("lat", 0.0)))
        lon = float(datum.get("longitude_deg", datum.get("lon", 0.0)))
    else:
        lat, lon = (float(v) for v in list(datum)[:2])
    ns, ew = ("N" if lat >= 0 else "S"), ("E" if lon >= 0 else "W")
    return f"datum (0 N, 0 E) = {abs(lat):.6f}° {ns}, {abs(lon):.6f}° {ew}"


def _nice_step(total: float, n: int = 6) -> float:
    raw = max(total / n, 1e-9)
    mag = 10 ** np.floor(np.log10(raw))
    return float(min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=10 * mag))


def _time_ticks(
    ax: Any, t: np.ndarray, east: np.ndarray, north: np.ndarray, ok: np.ndarray, c: Any,
    *, label_them: bool,
) -> None:  # fmt: skip
    """Small markers on a track every 'nice' time step; labelled (t = … s) on one track."""
    idx = np.flatnonzero(ok)
    if idx.size < 3:
        return
    t0, t1 = float(t[idx[0]]), float(t[idx[-1]])
    step = _nice_step(t1 - t0)
    marks = np.arange(np.ceil(t0 / step) * step, t1, step)[1:] if t1 > t0 else []
    for tm in marks:
        j = idx[np.searchsorted(t[idx], tm).clip(0, idx.size - 1)]
        ax.plot(east[j], north[j], "|", color="k", ms=9, mew=1.2, zorder=6)
        if label_them:
            ax.annotate(f"{tm:g} s", (east[j], north[j]), xytext=(4, 4),
                        textcoords="offset points", fontsize=7, color=c, zorder=6)  # fmt: skip


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
    if (ens := _ensemble("trajectory", result, title)) is not None:
        return ens  # many entities: ensemble view (marinesim.io.ensemble_plots)
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
    span = max(e_hi - e_lo, n_hi - n_lo, MIN_SPAN_M)
    e_mid, n_mid = 0.5 * (e_lo + e_hi), 0.5 * (n_lo + n_hi)
    e_lo, e_hi = min(e_lo, e_mid - span / 2), max(e_hi, e_mid + span / 2)
    n_lo, n_hi = min(n_lo, n_mid - span / 2), max(n_hi, n_mid + span / 2)
    pad = 0.08 * span
    xlim = (e_lo - pad, e_hi + pad)
    ylim = (n_lo - pad, n_hi + pad)

    cur = current if current is not None else current_from_manifest(result)
    handles: list[Any] = []
    uniform = cur is not None and _is_uniform(cur, xlim, ylim)
    if uniform:
        assert cur is not None
        u0, v0 = (float(a[0]) for a in cur(np.array([xlim[0]]), np.array([ylim[0]])))
        spd = float(np.hypot(u0, v0))
        to = float(np.degrees(np.arctan2(u0, v0)) % 360.0)
        ax.annotate(
            "",
            xy=(0.93 + 0.05 * u0 / spd, 0.93 + 0.05 * v0 / spd),
            xytext=(0.93, 0.93),
            xycoords="axes fraction",
            arrowprops={"arrowstyle": "-|>", "color": "#2f4f7f", "lw": 2},
        )
        handles.append(
            Line2D([], [], color="#2f4f7f", marker=r"$\rightarrow$", linestyle="none",
                   markersize=12, label=f"uniform current {spd:.2f} m/s toward {to:.0f}°")
        )  # fmt: skip
    elif cur is not None:
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
        _time_ticks(ax, result.t, east[i], north[i], ok, c, label_them=(i == 0))
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
    handles.append(
        Line2D([], [], marker="|", color="k", linestyle="none", markersize=9,
               label="time ticks (labelled on the first track)")
    )  # fmt: skip
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
    datum = man.get("origin")
    if datum:
        ax.text(
            0.01, 0.01, _datum_text(datum), transform=ax.transAxes, fontsize=8,
            va="bottom", ha="left", bbox={"fc": "white", "alpha": 0.8, "lw": 0},
        )  # fmt: skip
    t_end = float(result.t[-1]) if len(result.t) else 0.0
    ax.set_title(
        title
        or f"{man.get('scenario', 'run')} — seed {man.get('seed')} — "
        f"t = {t_end:.0f} s — {man.get('status', '')}"
    )
    return fig


#: The time-series panels :func:`figure_plan` chooses from, in drawing order.
PANELS = ("heading", "speed", "depth")
_PLAN_FRAMES = 1500  # frames sampled to decide what a run has


def _varies(x: np.ndarray) -> bool:
    f = np.asarray(x, dtype=float)
    f = f[np.isfinite(f)]
    return f.size > 1 and float(f.max() - f.min()) > 0.0


def _has_suffix(result: RunResult, suffix: str) -> bool:
    return any(name.endswith(suffix) for name in result.signals)


def figure_plan(result: RunResult) -> dict[str, tuple[str, ...]]:
    """Which generic figures fit ``result``, from the signals it has.

    Returns
    -------
    dict
        ``"trajectory"`` → ``("track",)`` when some vehicle moves on the east/north plane or
        an autonomy logged targets (``*.target``); ``"timeseries"`` → the panels among
        :data:`PANELS` that change during the run or have a setpoint (``*.desired_heading``,
        ``*.desired_speed``, ``*.desired_depth``), plus ``"actuators"`` when there are
        actuator signals.  A figure with nothing to draw is left out: a SURFTRAK run (the
        vehicle only heaves) gets neither a trajectory nor heading and speed panels.
    """
    plan: dict[str, tuple[str, ...]] = {}
    if "truth.pos" not in result.signals:
        return plan
    _, pos = result.sample("truth.pos", _PLAN_FRAMES)
    if _varies(pos[:, :, 0]) or _varies(pos[:, :, 1]) or _has_suffix(result, ".target"):
        plan["trajectory"] = ("track",)
    panels = []
    for key, sig in (("heading", "truth.heading"), ("speed", "truth.speed")):
        if sig in result.signals:
            varies = _varies(result.sample(sig, _PLAN_FRAMES)[1][:, :, 0])
            if varies or _has_suffix(result, f".desired_{key}"):
                panels.append(key)
    if _varies(pos[:, :, 2]) or _has_suffix(result, ".desired_depth"):
        panels.append("depth")
    if _actuators(result) is not None:
        panels.append("actuators")
    if panels:
        plan["timeseries"] = tuple(panels)
    return plan


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


def _actuators(result: RunResult) -> tuple[str, list[tuple[str, np.ndarray]], bool] | None:
    """(panel label, [(series label, (N, T) values)], per_vehicle) of the actuator panel.

    ``usm``: the held thrust, rudder and elevator, all in percent (``*.actuators``; uSimMarine
    spec §1: ±100 % is full rudder or elevator, not an angle); a 6-DOF
    vehicle: the thruster commands (``alloc.force`` or ``*.thrust`` [N], one series per
    thruster, drawn for the first vehicle).
    """
    for name, sig in result.signals.items():
        if name.endswith(".actuators") and sig.values.shape[2] == 3:
            labels = ("thrust [%]", "rudder [%]", "elevator [%]")
            return (
                "actuators",
                [(lb, sig.values[:, :, j]) for j, lb in enumerate(labels)],
                True,
            )
    for suffix in (".force", ".thrust"):
        for name, sig in result.signals.items():
            if name.endswith(suffix) and sig.values.shape[2] >= 2:
                k = sig.values.shape[2]
                series = [(f"thruster {j + 1}", sig.values[:, :, j]) for j in range(k)]
                return (f"thruster command [{sig.unit or 'N'}]", series, False)
    return None


def _timeseries_axes(
    t: np.ndarray,
    entities: list[str],
    rows: list[tuple[str, np.ndarray, np.ndarray | None]],
    act: tuple[str, list[tuple[str, np.ndarray]], bool] | None,
    title: str,
) -> Any:
    """The time-series figure from arrays (shared by engine runs and ``usm run`` tables)."""
    plt = _plt()
    n_rows = len(rows) + (1 if act is not None else 0)
    fig, axes = plt.subplots(
        n_rows, 1, figsize=(11, 2.4 * n_rows + 1.0), dpi=100, sharex=True, layout="constrained",
        squeeze=False,
    )  # fmt: skip
    axes = axes[:, 0]
    colors = plt.get_cmap("tab10")
    for ax, (label, val, des) in zip(axes, rows, strict=False):
        wraps = label.startswith("heading")
        for i, ent in enumerate(entities):
            c = colors(i % 10)
            y = _break_wraps(val[i]) if wraps else val[i]
            ax.plot(t, y, color=c, lw=1.2, label=ent)
            if des is not None:
                yd = _break_wraps(des[i]) if wraps else des[i]
                ax.plot(t, yd, "--", color=c, lw=1.0, alpha=0.8)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if wraps:
            ax.set_ylim(-5, 365)
            ax.set_yticks([0, 90, 180, 270, 360])
        if label.startswith("depth"):
            ax.invert_yaxis()  # depth, positive down
    if act is not None:
        ax = axes[-1]
        panel, series, per_vehicle = act
        styles = ("-", "--", ":")
        if per_vehicle:
            for j, (lb, vals) in enumerate(series):
                for i in range(len(entities)):
                    ax.plot(t, vals[i], styles[j % 3], color=colors(i % 10), lw=1.0,
                            label=lb if i == 0 else None)  # fmt: skip
            ax.set_ylabel("thrust, rudder,\nelevator [%]")
        else:
            for j, (lb, vals) in enumerate(series):
                ax.plot(t, vals[0], color=plt.get_cmap("tab20")(j % 20), lw=1.0, label=lb)
            ax.set_ylabel(panel)
            ax.set_title(f"thruster commands of {entities[0]}", fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    axes[-1].set_xlabel("time [s]")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    fig.suptitle(title)
    return fig


def timeseries_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Heading, speed and depth vs time with their setpoints (dashed) per vehicle, and the
    actuators (thrust/rudder/elevator of ``usm``; thruster commands of a 6-DOF vehicle).

    Heading lines break at 0/360 wraps (NaN inserted) instead of drawing vertical jumps;
    legends are outside the axes.
    """
    if (ens := _ensemble("timeseries", result, title)) is not None:
        return ens  # many entities: ensemble view (marinesim.io.ensemble_plots)
    panels = figure_plan(result).get("timeseries", ("heading", "speed", "depth"))
    pos = result["truth.pos"]
    every = {
        "heading": lambda: ("heading [deg]", result["truth.heading"][:, :, 0],
                            _first(result, ".desired_heading")),
        "speed": lambda: ("speed [m/s]", result["truth.speed"][:, :, 0],
                          _first(result, ".desired_speed")),
        "depth": lambda: ("depth [m]", pos[:, :, 2], _first(result, ".desired_depth")),
    }  # fmt: skip
    rows = [every[k]() for k in PANELS if k in panels]
    man = result.manifest
    return _timeseries_axes(
        result.t,
        [e["name"] for e in result.entities],
        rows,
        _actuators(result),
        title
        or f"{man.get('scenario', 'run')} — seed {man.get('seed')} — solid: truth, dashed: desired",
    )


def _run_column(run: Any, name: str) -> np.ndarray:
    i = run.columns.index(name)
    return np.array([np.nan if r[i] in (None, "") else float(r[i]) for r in run.rows])


def usm_run_figures(run: Any, *, title: str = "usm run") -> dict[str, Any]:
    """Trajectory and time series of a ``marinesim usm run`` table (one vehicle).

    Parameters
    ----------
    run : UsmRun
        ``columns`` with ``t``, ``x`` (east), ``y`` (north), ``heading``, ``speed``, ``depth``
        and the held inputs ``DESIRED_THRUST`` [%], ``DESIRED_RUDDER``, ``DESIRED_ELEVATOR``
        [deg]; ``rows``.
    title : str

    Returns
    -------
    dict
        ``trajectory`` and ``timeseries`` Figures.
    """
    plt = _plt()
    t = _run_column(run, "t")
    x, y = _run_column(run, "x"), _run_column(run, "y")
    fig, ax = plt.subplots(figsize=(8, 8), dpi=100, layout="constrained")
    ax.plot(x, y, "-", lw=1.5, color="C0", label="track")
    ax.plot(x[0], y[0], "o", color="C0", mec="k", ms=8, label="start")
    ax.plot(x[-1], y[-1], "s", color="C0", mec="k", ms=8, label="end")
    _time_ticks(ax, t, x, y, np.isfinite(x) & np.isfinite(y), "C0", label_them=True)
    span = max(np.nanmax(x) - np.nanmin(x), np.nanmax(y) - np.nanmin(y), MIN_SPAN_M)
    pad = 0.08 * span
    cx, cy = 0.5 * (np.nanmax(x) + np.nanmin(x)), 0.5 * (np.nanmax(y) + np.nanmin(y))
    ax.set_xlim(cx - span / 2 - pad, cx + span / 2 + pad)
    ax.set_ylim(cy - span / 2 - pad, cy + span / 2 + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("x, east [m]")
    ax.set_ylabel("y, north [m]")
    ax.grid(True, alpha=0.3)
    fig.legend(loc="outside lower center", ncols=4, fontsize=9)
    ax.set_title(title)
    rows = [
        ("heading [deg]", _run_column(run, "heading")[None, :], None),
        ("speed [m/s]", _run_column(run, "speed")[None, :], None),
        ("depth [m]", _run_column(run, "depth")[None, :], None),
    ]
    act = None
    if "DESIRED_THRUST" in run.columns:
        act = (
            "actuators",
            [
                ("DESIRED_THRUST [%]", _run_column(run, "DESIRED_THRUST")[None, :]),
                ("DESIRED_RUDDER [%]", _run_column(run, "DESIRED_RUDDER")[None, :]),
                ("DESIRED_ELEVATOR [%]", _run_column(run, "DESIRED_ELEVATOR")[None, :]),
            ],
            True,
        )
    ts = _timeseries_axes(t, ["vehicle"], rows, act, title)
    return {"trajectory": fig, "timeseries": ts}


def save_usm_run_figures(
    run: Any, directory: str | Path, *, fmt: str = "png", title: str = "usm run"
) -> list[Path]:
    """Write :func:`usm_run_figures` as ``trajectory.<fmt>`` and ``timeseries.<fmt>``."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fig in usm_run_figures(run, title=title).items():
        p = out / f"{name}.{fmt}"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths


def save_figures(
    result: RunResult,
    directory: str | Path,
    *,
    current: CurrentFn | None = None,
    fmt: str = "png",
) -> dict[str, Path]:
    """Write ``trajectory.<fmt>`` and ``timeseries.<fmt>`` (png, pdf or svg) where they fit
    the run (:func:`figure_plan`); return the paths written."""
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    plan = figure_plan(result)
    if "trajectory" in plan:
        fig = trajectory_figure(result, current=current)
        p = out / f"trajectory.{fmt}"
        fig.savefig(p)
        plt.close(fig)
        paths["trajectory"] = p
    if "timeseries" in plan:
        fig = timeseries_figure(result)
        p = out / f"timeseries.{fmt}"
        fig.savefig(p)
        plt.close(fig)
        paths["timeseries"] = p
    return paths
