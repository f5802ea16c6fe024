"""Figures of truth vs belief: tracks with covariance ellipses, estimation error, contacts.

:func:`plot_run` returns matplotlib Figures built from a :class:`~marinesim.engine.results.
RunResult` (signals ``truth.pos``, ``belief.pos``, and where present ``<nav>.cov_ne``,
``<nav>.pos_std``, ``<metric>.error``, ``<sonar>.contact_pos``, ``<sonar>.detections``);
:func:`save_nav_figures` writes them as PNG files.  matplotlib is imported lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.results import RunResult
from marinesim.io import ensemble_plots

__all__ = ["contacts_figure", "error_figure", "plot_run", "save_nav_figures", "tracks_figure"]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _find(result: RunResult, suffix: str) -> np.ndarray | None:
    for name in sorted(result.signals):
        if name.endswith(suffix):
            return result[name]
    return None


def _ellipse(cov2: np.ndarray, k: float = 2.0, n: int = 48) -> np.ndarray:
    """(n, 2) points (north, east) of the k-σ ellipse of a 2×2 covariance."""
    w, v = np.linalg.eigh(0.5 * (cov2 + cov2.T))
    a = np.linspace(0.0, 2 * np.pi, n)
    circ = np.stack([np.cos(a), np.sin(a)], axis=1) * (k * np.sqrt(np.maximum(w, 0.0)))
    return circ @ v.T


def tracks_figure(result: RunResult, *, ellipse_every_s: float = 60.0, sigma: float = 2.0) -> Any:
    """Truth (solid) and belief (dashed) tracks, east right / north up, with k-σ ellipses.

    Parameters
    ----------
    result : RunResult
    ellipse_every_s : float
        Time between drawn covariance ellipses [s].
    sigma : float
        Ellipse size in standard deviations.

    Past :data:`~marinesim.io.ensemble_plots.MAX_INDIVIDUAL` entities: the ensemble view
    (:func:`~marinesim.io.ensemble_plots.nav_tracks_ensemble_figure`).
    """
    fig = ensemble_plots.dispatch("nav_tracks", result)
    if fig is not None:
        return fig
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 7))
    tp = result["truth.pos"]
    bp = result["belief.pos"] if "belief.pos" in result.signals else tp
    cov = _find(result, ".cov_ne")
    t = result.t
    step = max(1, int(round(ellipse_every_s / max(t[1] - t[0], 1e-9)))) if len(t) > 1 else 1
    for i, ent in enumerate(result.entities):
        line = ax.plot(tp[i, :, 1], tp[i, :, 0], "-", lw=1.2, label=f"{ent['name']} truth")[0]
        ax.plot(
            bp[i, :, 1],
            bp[i, :, 0],
            "--",
            lw=1.0,
            color=line.get_color(),
            label=f"{ent['name']} belief",
        )
        if cov is not None and np.isfinite(cov[i]).any():
            for k in range(0, len(t), step):
                c = cov[i, k].reshape(2, 2)
                if not np.all(np.isfinite(c)) or not np.all(np.isfinite(bp[i, k, :2])):
                    continue
                e = _ellipse(c, sigma) + bp[i, k, :2]
                ax.plot(e[:, 1], e[:, 0], "-", lw=0.6, color=line.get_color(), alpha=0.7)
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"truth vs belief ({sigma:g}-sigma position ellipses every {ellipse_every_s:g} s)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def error_figure(result: RunResult, *, sigma: float = 2.0) -> Any:
    """Horizontal estimation error ‖p̂ − p‖ over time with the k-σ bound from the covariance.

    Past :data:`~marinesim.io.ensemble_plots.MAX_INDIVIDUAL` entities: quantile bands over the
    fleet (:func:`~marinesim.io.ensemble_plots.nav_error_ensemble_figure`).
    """
    if ensemble_plots.is_ensemble(result):
        return ensemble_plots.nav_error_ensemble_figure(result, sigma=sigma)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    tp = result["truth.pos"]
    bp = result["belief.pos"] if "belief.pos" in result.signals else tp
    err = np.linalg.norm((bp - tp)[:, :, :2], axis=2)
    std = _find(result, ".pos_std")
    for i, ent in enumerate(result.entities):
        line = ax.plot(result.t, err[i], lw=1.0, label=f"{ent['name']} error")[0]
        if std is not None and np.isfinite(std[i]).any():
            bound = sigma * np.sqrt(std[i, :, 0] ** 2 + std[i, :, 1] ** 2)
            ax.plot(
                result.t,
                bound,
                ":",
                color=line.get_color(),
                lw=1.0,
                label=f"{ent['name']} {sigma:g}-sigma",
            )
    ax.set_xlabel("time [s]")
    ax.set_ylabel("horizontal error [m]")
    ax.set_title("estimation error (belief - truth)")
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def contacts_figure(result: RunResult) -> Any:
    """Contact detections: reported positions over the truth tracks, and detections per scan.

    Past :data:`~marinesim.io.ensemble_plots.MAX_INDIVIDUAL` entities: report density and
    detection bands (:func:`~marinesim.io.ensemble_plots.nav_contacts_ensemble_figure`).
    """
    fig = ensemble_plots.dispatch("nav_contacts", result)
    if fig is not None:
        return fig
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    tp = result["truth.pos"]
    cp = _find(result, ".contact_pos")
    det = _find(result, ".detections")
    for i, ent in enumerate(result.entities):
        line = ax.plot(tp[i, :, 1], tp[i, :, 0], "-", lw=0.8, label=f"{ent['name']} truth")[0]
        if cp is not None:
            ok = np.isfinite(cp[i, :, 0])
            ax.plot(
                cp[i, ok, 1],
                cp[i, ok, 0],
                "x",
                ms=4,
                color=line.get_color(),
                label=f"reported by {ent['name']}",
            )
        if det is not None:
            ax2.step(result.t, np.nan_to_num(det[i, :, 0]), where="post", lw=0.8, label=ent["name"])
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title("contact reports (x) over the truth tracks")
    ax.legend(fontsize=7)
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("detections per scan")
    ax2.set_title("contact detections")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_run(result: RunResult) -> dict[str, Any]:
    """All navigation figures of a run: ``tracks``, ``error`` and (with contacts) ``contacts``.

    Returns
    -------
    dict of str to matplotlib.figure.Figure
    """
    figs = {"tracks": tracks_figure(result), "error": error_figure(result)}
    if _find(result, ".detections") is not None:
        figs["contacts"] = contacts_figure(result)
    return figs


def save_nav_figures(
    result: RunResult, directory: str | Path, *, dpi: int = 120, fmt: str = "png"
) -> dict[str, Path]:
    """Write :func:`plot_run`'s figures as ``nav_<name>.<fmt>`` under ``directory``; return paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    plt = _plt()
    paths = {}
    for name, fig in plot_run(result).items():
        p = out / f"nav_{name}.{fmt}"
        fig.savefig(p, dpi=dpi)
        plt.close(fig)
        paths[name] = p
    return paths
