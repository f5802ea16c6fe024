"""Every figure that applies to a run, in one call (used by ``marinesim run`` and ``plot``).

The trajectory and time-series figures are always drawn; the navigation figures when a plugin
wrote a belief (``belief.pos``); the 6-DOF figures when a 6-DOF motion model logged attitudes
(a ``*.euler`` signal); the ship/AUV/DP figures (track, heading and rudder, DP error) when a
vehicle's own autopilot logged its states (a ``*.autopilot`` signal); the SURFTRAK figure when a ``surftrak`` controller logged its
rangefinder target (a ``*.rf_target`` signal).
"""

from __future__ import annotations

from pathlib import Path

from marinesim.engine.results import RunResult

__all__ = ["save_all_figures"]


def save_all_figures(
    result: RunResult, directory: str | Path, *, fmt: str = "png"
) -> dict[str, Path]:
    """Write all applicable figures of ``result`` under ``directory``; return name → path.

    Parameters
    ----------
    result : RunResult
    directory : str or Path
        Output folder (created).
    fmt : str
        png (default), pdf or svg.
    """
    from marinesim.io.plots import save_figures

    paths = dict(save_figures(result, directory, fmt=fmt))
    if "belief.pos" in result.signals:
        from marinesim.io.nav_plots import save_nav_figures

        paths.update(save_nav_figures(result, directory, fmt=fmt))
    if any(name.endswith(".euler") for name in result.signals):
        from marinesim.io.sixdof_plots import plot_run

        paths.update(plot_run(result, directory, fmt=fmt))
    if any(name.endswith(".autopilot") for name in result.signals):
        from marinesim.io.ship_plots import plot_ship_run

        paths.update(plot_ship_run(result, directory, fmt=fmt))
    from marinesim.io.surftrak_plot import save_engine_surftrak_figure

    path = save_engine_surftrak_figure(result, directory, fmt=fmt)
    if path is not None:
        paths["surftrak"] = path
    return paths
