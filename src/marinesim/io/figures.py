"""Every figure that applies to a run, in one call (used by ``marinesim run`` and ``plot``).

The trajectory and time-series figures are always drawn; the navigation figures when a plugin
wrote a belief (``belief.pos``); the 6-DOF figures when a 6-DOF motion model logged attitudes
(a ``*.euler`` signal).
"""

from __future__ import annotations

from pathlib import Path

from marinesim.engine.results import RunResult

__all__ = ["save_all_figures"]


def save_all_figures(result: RunResult, directory: str | Path) -> dict[str, Path]:
    """Write all applicable PNG figures of ``result`` under ``directory``; return name → path."""
    from marinesim.io.plots import save_figures

    paths = dict(save_figures(result, directory))
    if "belief.pos" in result.signals:
        from marinesim.io.nav_plots import save_nav_figures

        paths.update(save_nav_figures(result, directory))
    if any(name.endswith(".euler") for name in result.signals):
        from marinesim.io.sixdof_plots import plot_run

        paths.update(plot_run(result, directory))
    return paths
