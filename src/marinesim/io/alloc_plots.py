"""The figure of ``marinesim alloc report --plot``: attainable wrench and thruster usage.

Left: the largest pure-axis wrench per axis (X, Y, Z [N]; K, M, N [N·m]), positive and negative,
for the pseudo-inverse with exact scaling and for the constrained (LP) allocator, under the
T200 envelope and under the current limits.  Right: per-thruster usage at each axis maximum of
the pseudo-inverse (envelope), ``f_i / f_i,max`` on the side the force points to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["alloc_report_figure", "save_alloc_report_figure"]

AXES = ("X", "Y", "Z", "K", "M", "N")


def alloc_report_figure(report: dict[str, Any]) -> Any:
    """Draw the report of :func:`marinesim.cli.alloc.build_report`.

    Parameters
    ----------
    report : dict
        With ``max_wrench`` (``envelope`` and ``current_limited``: axis → ``pinv_pos``,
        ``pinv_neg``, ``constrained_pos``, ``constrained_neg``), ``tam_pinv`` (thrusters × 6),
        ``force_range_N.envelope`` (per thruster [min, max] N) and ``thrusters`` (names).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 5.5), layout="constrained")
    ax_w, ax_u = fig.subplots(1, 2, width_ratios=(1.3, 1.0))
    x = np.arange(6)
    w = 0.2
    styles = (
        ("envelope", "pinv", "pinv (envelope)", "#9ecae1"),
        ("envelope", "constrained", "LP (envelope)", "#3182bd"),
        ("current_limited", "pinv", "pinv (current-limited)", "#fdae6b"),
        ("current_limited", "constrained", "LP (current-limited)", "#e6550d"),
    )
    for j, (key, method, label, color) in enumerate(styles):
        m = report["max_wrench"][key]
        pos = np.array([m[a][f"{method}_pos"] for a in AXES])
        neg = np.array([m[a][f"{method}_neg"] for a in AXES])
        ax_w.bar(x + (j - 1.5) * w, pos, w, color=color, label=label)
        ax_w.bar(x + (j - 1.5) * w, -neg, w, color=color, alpha=0.6)
    ax_w.axhline(0.0, color="k", lw=0.8)
    ax_w.set_xticks(x, [f"{a} [{'N' if i < 3 else 'N·m'}]" for i, a in enumerate(AXES)])
    ax_w.set_ylabel("largest pure-axis wrench, + and − [N or N·m]")
    ax_w.set_title("attainable wrench per axis: LP vs pseudo-inverse")
    ax_w.grid(True, axis="y", alpha=0.3)
    ax_w.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), ncols=2, fontsize=8)

    pinv = np.asarray(report["tam_pinv"], dtype=float)  # (k, 6)
    rng = np.asarray(report["force_range_N"]["envelope"], dtype=float)  # (k, 2)
    env = report["max_wrench"]["envelope"]
    k = pinv.shape[0]
    usage = np.zeros((k, 6))
    for j, a in enumerate(AXES):
        f = pinv[:, j] * env[a]["pinv_pos"]
        lim = np.where(f >= 0, rng[:, 1], -rng[:, 0])
        usage[:, j] = np.divide(np.abs(f), np.abs(lim), out=np.zeros(k), where=lim != 0)
    im = ax_u.imshow(usage, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    for i in range(k):
        for j in range(6):
            ax_u.text(j, i, f"{usage[i, j]:.2f}", ha="center", va="center", fontsize=7,
                      color="w" if usage[i, j] < 0.6 else "k")  # fmt: skip
    ax_u.set_xticks(range(6), [f"+{a}" for a in AXES])
    ax_u.set_yticks(range(k), [f"{i + 1} {n}" for i, n in enumerate(report["thrusters"])])
    ax_u.set_xlabel("pure-axis maximum (pseudo-inverse, envelope)")
    ax_u.set_ylabel("thruster")
    ax_u.set_title("thruster usage |f| / f_max [-]")
    cb = fig.colorbar(im, ax=ax_u, shrink=0.9)
    cb.set_label("fraction of the thruster's force range [-]")
    fig.suptitle(f"{report['vehicle']} at {report['voltage_V']:g} V — allocation report")
    return fig


def save_alloc_report_figure(report: dict[str, Any], path: str | Path) -> Path:
    """Write :func:`alloc_report_figure` to ``path`` (format from its suffix)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    alloc_report_figure(report).savefig(p, dpi=100)
    return p
