"""Figures a ship, AUV or DP user expects from a vehicle on its own control system.

Drawn for runs whose motion plugin logged the states of the vehicle's autopilot
(``<motion>.autopilot``: a PythonVehicleSimulator fleet vehicle in closed loop, e.g. the
bundled ``torpedo_depth_heading``, ``tanker_heading_autopilot``, ``supply_dp_current``):

* ``track`` — north/east track of every vehicle, start and end marked, the DP set-point
  (filtered ``x_d``, ``y_d`` at the end) where there is one;
* ``autopilot`` — heading against the autopilot's reference ψ_d, yaw rate against r_d, depth
  against z_d (AUVs), and the rudders/fins and propellers (``<motion>.actuators``);
* ``dp_error`` — DP vessels: horizontal distance to the (filtered) set-point [m] and heading
  error [deg] over time, with the final values in the title.

Every function takes a :class:`~marinesim.engine.results.RunResult` and returns a matplotlib
``Figure`` (Agg backend when none is set); :func:`plot_ship_run` writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.frames import wrap_pi
from marinesim.engine.results import RunResult
from marinesim.io.sixdof_plots import _plt  # the one Agg-backend guard of the figures

__all__ = ["autopilot_figure", "dp_error_figure", "plot_ship_run", "track_figure"]

F64 = NDArray[np.float64]


def _find(result: RunResult, suffix: str) -> str | None:
    for name in result.signals:
        if name.endswith("." + suffix):
            return name
    return None


def _columns(result: RunResult, name: str | None) -> dict[str, F64]:
    """Columns of a signal by label, each (N, T)."""
    if name is None:
        return {}
    sig = result.signal(name)
    return {lab: sig.values[:, :, j] for j, lab in enumerate(sig.labels)}


def _name(result: RunResult, i: int) -> str:
    return str(result.entities[i]["name"]) if i < len(result.entities) else f"row {i}"


def track_figure(result: RunResult) -> Any:
    """North/east track (east right, north up) with start, end and DP set-point markers."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 7))
    pos = result["truth.pos"]
    ap = _columns(result, _find(result, "autopilot"))
    for i in range(pos.shape[0]):
        (line,) = ax.plot(pos[i, :, 1], pos[i, :, 0], label=_name(result, i))
        ax.plot(pos[i, 0, 1], pos[i, 0, 0], "o", color=line.get_color())
        ax.plot(pos[i, -1, 1], pos[i, -1, 0], "s", color=line.get_color())
        if "x_d" in ap and "y_d" in ap:
            ax.plot(ap["y_d"][i, -1], ap["x_d"][i, -1], "x", ms=12, color="k", label="set-point")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True)
    ax.legend(loc="best", fontsize=8)
    ax.set_title("track (o start, □ end)")
    fig.tight_layout()
    return fig


def autopilot_figure(result: RunResult) -> Any:
    """Heading vs ψ_d, yaw rate vs r_d, depth vs z_d (if logged), actuators."""
    plt = _plt()
    t = result.t
    ap = _columns(result, _find(result, "autopilot"))
    eul_name = _find(result, "euler")
    nu_name = _find(result, "nu")
    act_name = _find(result, "actuators")
    depth = "z_d" in ap
    panels = 4 if depth else 3
    fig, ax = plt.subplots(panels, 1, figsize=(9, 2.4 * panels), sharex=True)
    pos = result["truth.pos"]
    for i in range(pos.shape[0]):
        lab = _name(result, i)
        if eul_name is not None:
            yaw = np.radians(result[eul_name][i, :, 2])
            ax[0].plot(t, np.degrees(yaw), label=f"{lab} ψ")
            if "psi_d" in ap:
                # the reference is unwrapped inside the autopilot: show it next to ψ
                psi_d = ap["psi_d"][i]
                ax[0].plot(t, np.degrees(yaw + wrap_pi(psi_d - yaw)), "--", label=f"{lab} ψ_d")
        if nu_name is not None:
            ax[1].plot(t, np.degrees(result[nu_name][i, :, 5]), label=f"{lab} r")
            if "r_d" in ap:
                ax[1].plot(t, np.degrees(ap["r_d"][i]), "--", label=f"{lab} r_d")
        if depth:
            ax[2].plot(t, pos[i, :, 2], label=f"{lab} z")
            ax[2].plot(t, ap["z_d"][i], "--", label=f"{lab} z_d")
        if act_name is not None:
            sig = result.signal(act_name)
            k = sig.values.shape[2]
            units = sig.units
            names = list(sig.labels) if len(sig.labels) == k else [f"u{j}" for j in range(k)]
            for j in range(k):
                if units[j] == "deg":
                    ax[-1].plot(t, sig.values[i, :, j], label=f"{lab} {names[j]}")
    ax[0].set_ylabel("heading [deg]")
    ax[1].set_ylabel("yaw rate [deg/s]")
    if depth:
        ax[2].set_ylabel("depth [m]")
        ax[2].invert_yaxis()
    ax[-1].set_ylabel("rudder / fins [deg]")
    ax[-1].set_xlabel("time [s]")
    for a in ax:
        a.grid(True)
        if a.lines:
            a.legend(loc="best", fontsize=7)
    fig.tight_layout()
    return fig


def dp_error_figure(result: RunResult) -> Any:
    """Horizontal distance to the DP set-point [m] and heading error [deg] over time."""
    plt = _plt()
    t = result.t
    ap = _columns(result, _find(result, "autopilot"))
    pos = result["truth.pos"]
    eul_name = _find(result, "euler")
    fig, ax = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    finals = []
    for i in range(pos.shape[0]):
        lab = _name(result, i)
        dist = np.hypot(pos[i, :, 0] - ap["x_d"][i], pos[i, :, 1] - ap["y_d"][i])
        ax[0].plot(t, dist, label=lab)
        if eul_name is not None and "psi_d" in ap:
            err = np.degrees(wrap_pi(np.radians(result[eul_name][i, :, 2]) - ap["psi_d"][i]))
            ax[1].plot(t, err, label=lab)
            finals.append(f"{lab}: {dist[-1]:.2f} m, {err[-1]:.1f}°")
    ax[0].set_ylabel("position error [m]")
    ax[1].set_ylabel("heading error [deg]")
    ax[1].set_xlabel("time [s]")
    for a in ax:
        a.grid(True)
        a.legend(loc="best", fontsize=8)
    ax[0].set_title("DP error to the set-point; final " + "; ".join(finals))
    fig.tight_layout()
    return fig


def plot_ship_run(result: RunResult, directory: str | Path, *, fmt: str = "png") -> dict[str, Path]:
    """Write the figures that apply (``track``, ``autopilot``, ``dp_error``); name → path.

    Parameters
    ----------
    result : RunResult
    directory : str or Path
        Output folder (created).
    fmt : str
        png, pdf or svg.
    """
    plt = _plt()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    ap = _columns(result, _find(result, "autopilot"))
    figs = {"track": track_figure(result), "autopilot": autopilot_figure(result)}
    if "x_d" in ap and "y_d" in ap:
        figs["dp_error"] = dp_error_figure(result)
    paths: dict[str, Path] = {}
    for key, fig in figs.items():
        p = out / f"{key}.{fmt}"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths[key] = p
    return paths
