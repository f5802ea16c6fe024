"""Figures of 6-DOF runs: PythonVehicleSimulator-like time series, 3-D track, thruster usage.

Every function takes a :class:`~marinesim.engine.results.RunResult` and returns a matplotlib
``Figure`` (imported lazily, Agg backend when none is set); :func:`plot_run` writes the PNGs.
Signals are found by their suffix (the motion plugin's instance name is free):
``<motion>.euler``, ``<motion>.nu``, ``<motion>.actuators`` (fins, rudders, propellers of a
PythonVehicleSimulator vehicle, split by unit),
``<motion>.thrust`` / ``.current_total`` / ``.voltage`` (plant) and ``<alloc>.pwm`` /
``.current_limit`` (allocator).

>>> from marinesim.io.sixdof_plots import plot_run
>>> paths = plot_run(result, "runs/rov")            # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.results import RunResult

__all__ = [
    "plot_run",
    "thruster_usage_figure",
    "timeseries_6dof_figure",
    "track3d_figure",
]


def _ensemble(kind: str, result: RunResult, title: str | None) -> Any:
    from marinesim.io.ensemble_plots import dispatch

    return dispatch(kind, result, title=title)


def _plt() -> Any:
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo"):
        with contextlib.suppress(Exception):  # backend already fixed by the user
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _find(result: RunResult, suffix: str) -> str | None:
    """First signal whose name ends with ``.<suffix>`` (None if absent)."""
    for name in result.signals:
        if name.endswith("." + suffix):
            return name
    return None


def _rows_with(result: RunResult, name: str | None) -> list[int]:
    """Entity rows where a signal has any finite value."""
    if name is None:
        return []
    v = result[name]
    return [i for i in range(v.shape[0]) if np.any(np.isfinite(v[i]))]


def _label(result: RunResult, i: int) -> str:
    return str(result.entities[i]["name"])


def timeseries_6dof_figure(result: RunResult, *, title: str | None = None) -> Any:
    """PVS-style states of every 6-DOF vehicle: positions, attitudes, velocities, actuators.

    Panels: north/east [m], depth [m], roll/pitch [deg], heading [deg], u/v/w [m/s],
    p/q/r [deg/s], and the actuator states (fin angles [deg] and propeller [rpm], or the
    thrust of every thruster [N]).

    Parameters
    ----------
    result : RunResult
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if (ens := _ensemble("timeseries_6dof", result, title)) is not None:
        return ens  # many entities: ensemble view (marinesim.io.ensemble_plots)
    plt = _plt()
    t = result.t
    eul_name = _find(result, "euler")
    nu_name = _find(result, "nu")
    rows = _rows_with(result, eul_name) or list(range(result.n))
    fig, axes = plt.subplots(4, 2, figsize=(12, 11), sharex=True)
    ax = axes.ravel()
    pos = result["truth.pos"]
    for i in rows:
        lab = _label(result, i)
        ax[0].plot(t, pos[i, :, 0], label=f"{lab} north")
        ax[0].plot(t, pos[i, :, 1], "--", label=f"{lab} east")
        ax[1].plot(t, pos[i, :, 2], label=lab)
        if eul_name is not None:
            e = result[eul_name][i]
            ax[2].plot(t, e[:, 0], label=f"{lab} roll")
            ax[2].plot(t, e[:, 1], "--", label=f"{lab} pitch")
        hd = result["truth.heading"][i, :, 0]
        ok = np.isfinite(hd)
        unwrapped = np.full_like(hd, np.nan)
        unwrapped[ok] = np.degrees(np.unwrap(np.radians(hd[ok])))
        ax[3].plot(t, unwrapped, label=lab)
        if nu_name is not None:
            nu = result[nu_name][i]
            for j, (c, st) in enumerate(zip("uvw", ("-", "--", ":"), strict=True)):
                ax[4].plot(t, nu[:, j], st, label=f"{lab} {c}")
            for j, (c, st) in enumerate(zip("pqr", ("-", "--", ":"), strict=True)):
                ax[5].plot(t, np.degrees(nu[:, 3 + j]), st, label=f"{lab} {c}")
    act = _find(result, "actuators")
    thr = _find(result, "thrust")
    if act is not None:
        # any vehicle's actuators: angle columns (unit deg) above, the others (rpm, rad/s) below
        sig = result.signal(act)
        k = sig.values.shape[2]
        units = sig.units
        names = [
            lab.removesuffix("_deg").removesuffix("_rpm") for lab in sig.labels
        ] if len(sig.labels) == k else [f"actuator {j}" for j in range(k)]  # fmt: skip
        other = sorted({u for u in units if u != "deg"})
        for i in _rows_with(result, act):
            a = result[act][i]
            for j in range(k):
                axis = ax[6] if units[j] == "deg" else ax[7]
                axis.plot(t, a[:, j], "-" if j % 2 == 0 else "--",
                          label=f"{_label(result, i)} {names[j].replace('_', ' ')}")  # fmt: skip
        ax[6].set_ylabel("fin / rudder angle [deg]")
        ax[7].set_ylabel(f"propeller [{', '.join(other)}]" if other else "propeller")
    elif thr is not None:
        w = _find(result, "wrench")
        for i in _rows_with(result, thr):
            f = result[thr][i]
            for j in range(f.shape[1]):
                ax[6].plot(
                    t, f[:, j], label=f"{_label(result, i)} t{j}" if len(rows) > 1 else f"t{j}"
                )
            if w is not None:
                ww = result[w][i]
                for j, c in enumerate("XYZ"):
                    ax[7].plot(t, ww[:, j], label=f"{_label(result, i)} {c}")
        ax[6].set_ylabel("thrust [N]")
        ax[7].set_ylabel("body force [N]")
    ylabels = [
        "position [m]",
        "depth [m]",
        "roll, pitch [deg]",
        "heading, unwrapped [deg]",
        "u, v, w [m/s]",
        "p, q, r [deg/s]",
    ]
    for a, lab in zip(ax[:6], ylabels, strict=True):
        a.set_ylabel(lab)
    ax[1].invert_yaxis()
    for a in ax:
        a.grid(True, alpha=0.3)
        if a.lines:
            a.legend(fontsize=6, loc="best")
    ax[6].set_xlabel("time [s]")
    ax[7].set_xlabel("time [s]")
    fig.suptitle(title or f"{result.manifest.get('scenario', 'run')} — 6-DOF states")
    fig.tight_layout()
    return fig


def track3d_figure(result: RunResult, *, title: str | None = None) -> Any:
    """3-D track (east, north, depth down) of every entity, start and end marked.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if (ens := _ensemble("track3d", result, title)) is not None:
        return ens  # many entities: ensemble view (marinesim.io.ensemble_plots)
    plt = _plt()
    fig = plt.figure(figsize=(8, 7))
    ax = fig.add_subplot(projection="3d")
    pos = result["truth.pos"]
    for i in range(result.n):
        p = pos[i]
        ok = np.all(np.isfinite(p), axis=1)
        if not np.any(ok):
            continue
        p = p[ok]
        ax.plot(p[:, 1], p[:, 0], p[:, 2], label=_label(result, i))
        ax.scatter([p[0, 1]], [p[0, 0]], [p[0, 2]], marker="o", s=20)
        ax.scatter([p[-1, 1]], [p[-1, 0]], [p[-1, 2]], marker="x", s=30)
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_zlabel("depth [m]")
    ax.invert_zaxis()
    ax.legend(fontsize=7)
    ax.set_title(title or f"{result.manifest.get('scenario', 'run')} — 3-D track (o start, x end)")
    return fig


def thruster_usage_figure(result: RunResult, *, title: str | None = None) -> Any:
    """Per-thruster PWM, total current against its limit, and the battery voltage.

    Raises
    ------
    ConfigError
        If the run has no thruster signals.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from marinesim.core.errors import ConfigError

    pwm = _find(result, "pwm")
    cur = _find(result, "current_total")
    if pwm is None and cur is None:
        raise ConfigError("the run has no thruster signals (no thruster_allocator / thrusters)")
    if (ens := _ensemble("thruster_usage", result, title)) is not None:
        return ens  # many entities: ensemble view (marinesim.io.ensemble_plots)
    plt = _plt()
    t = result.t
    rows = _rows_with(result, pwm) or _rows_with(result, cur)
    fig, axes = plt.subplots(len(rows) + 1, 1, figsize=(11, 3.2 * (len(rows) + 1)), sharex=True)
    axes = np.atleast_1d(axes)
    for a, i in zip(axes[:-1], rows, strict=False):
        if pwm is not None:
            v = result[pwm][i]
            for j in range(v.shape[1]):
                a.plot(t, v[:, j], label=f"t{j}")
        a.set_ylabel("PWM [µs]")
        a.set_title(f"{_label(result, i)}: thruster commands", fontsize=9)
        a.axhline(1500.0, color="k", lw=0.5)
        a.legend(fontsize=6, ncol=8, loc="upper right")
        a.grid(True, alpha=0.3)
    ax = axes[-1]
    volt = _find(result, "voltage")
    lim_name = _find(result, "current_limit")
    plant_cur = [n for n in result.signals if n.endswith(".current_total")]
    for i in rows:
        for name in plant_cur:
            v = result[name][i, :, 0]
            if np.any(np.isfinite(v)):
                ax.plot(t, v, label=f"{_label(result, i)} {name}")
        if lim_name is not None:
            lim = result[lim_name][i, :, 0]
            if np.any(np.isfinite(lim)):
                ax.plot(t, lim, "k--", lw=1, label=f"{_label(result, i)} limit")
    ax.set_ylabel("total current [A]")
    ax.set_xlabel("time [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, loc="upper left")
    if volt is not None:
        ax2 = ax.twinx()
        for i in rows:
            v = result[volt][i, :, 0]
            if np.any(np.isfinite(v)):
                ax2.plot(t, v, ":", label=f"{_label(result, i)} battery")
        ax2.set_ylabel("voltage [V]")
        ax2.legend(fontsize=6, loc="upper right")
    fig.suptitle(title or f"{result.manifest.get('scenario', 'run')} — thruster usage")
    fig.tight_layout()
    return fig


def plot_run(result: RunResult, directory: str | Path, *, fmt: str = "png") -> dict[str, Path]:
    """Write the 6-DOF figures that apply to a run.

    Parameters
    ----------
    result : RunResult
    directory : str or Path
        Output folder (created).
    fmt : str
        Figure format (png, pdf, svg).

    Returns
    -------
    dict of str to Path
        ``sixdof_timeseries``, ``track3d`` and, with thrusters, ``thruster_usage`` PNGs.
    """
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    figs = {
        "sixdof_timeseries": timeseries_6dof_figure(result),
        "track3d": track3d_figure(result),
    }
    if _find(result, "pwm") is not None or _find(result, "current_total") is not None:
        figs["thruster_usage"] = thruster_usage_figure(result)
    for key, fig in figs.items():
        p = out / f"{key}.{fmt}"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths[key] = p
    return paths
