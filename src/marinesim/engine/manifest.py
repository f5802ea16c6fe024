"""The run manifest (engine spec §8): versions, seed, plugins, ending, wall time, bus counts."""

from __future__ import annotations

import functools
import platform
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from marinesim.core.libm import numpy_matches_libm
from marinesim.core.version import __version__
from marinesim.engine.plugin import PHASES

if TYPE_CHECKING:
    from marinesim.engine.simulation import Simulation

__all__ = ["build_manifest", "collect_metrics"]


@functools.cache
def _platform() -> str:
    """``platform.platform()`` (it reads the OS release files: once per process)."""
    return platform.platform()


def build_manifest(sim: Simulation, status: str | None = None) -> dict[str, Any]:
    """Run manifest of ``sim`` (versions, seed, plugins, status, ending, wall time, lag)."""

    perfect = [
        n
        for b in sim.blocks
        if b.belief is None and not any(s.plugin.writes_belief for s in b.spec.sensors)
        for n in b.names
    ]
    oracle = [
        f"{b.name}.{s.plugin.name}" for b in sim.blocks for s in b.spec.plugins() if s.uses_truth
    ]
    plugins = []
    for slot in sim.slots:
        plugins.append(
            {
                "block": slot.block.name if slot.block is not None else "",
                "name": slot.plugin.name,
                "plugin": slot.spec.registry_name or type(slot.plugin).__name__,
                "class": f"{type(slot.plugin).__module__}:{type(slot.plugin).__qualname__}",
                "kind": slot.plugin.kind,
                "rate_hz": slot.spec.rate_hz,
                "hooks": sorted(slot.hooks),
                "calls": dict(slot.calls),
                "reads_all_truth": bool(getattr(slot.plugin, "reads_all_truth", False)),
            }
        )
    man: dict[str, Any] = {
        "marinesim_version": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        # numpy's elementary functions give libm's bits here: the plugins' ticks and the
        # compiled tick agree bit for bit (else to rounding: docs/guide/engine.md)
        "numpy_libm": numpy_matches_libm(),
        "platform": _platform(),
        "scenario": sim.name,
        "seed": sim.seed,
        "seed_drawn_from_entropy": sim.seed_drawn,
        "replica": sim.replica,
        "status": status or sim.status,
        "ended_by": sim.ended_by,
        "ended_tick": sim.ended_tick,
        "ticks": sim.clock.k,
        "t_end": sim.clock.t,
        "dt": sim.clock.dt,
        "substeps": sim.clock.substeps,
        "time_warp": sim.clock.time_warp,
        "time_warp_lag": {"late_ticks": sim.clock.lag_ticks, "max_lag_s": sim.clock.lag_max},
        "wall_time_s": sim._wall,
        "perfect_navigation": perfect,
        "oracle": oracle,
        "plugins": plugins,
        "bus": sim.bus.stats(),
        "phases": list(PHASES),
        "log_every_ticks": sim._recorder.every,
        "compiled_ticks": getattr(sim._span, "ticks", 0) if sim._span else 0,
        "compiled_why_not": getattr(sim, "compiled_why_not", None),
        "log_columns": list(sim.log_columns) if sim.log_columns is not None else None,
    }
    if sim.error is not None:
        man["error"] = f"{type(sim.error).__name__}: {sim.error}"
        man["error_type"] = type(sim.error).__name__
    try:
        import scipy

        man["scipy"] = scipy.__version__
    except Exception:  # pragma: no cover
        pass
    if sim._worlds.stacked:
        man["worlds"] = sim._worlds.manifest()
    man.update(sim.extra_manifest)
    return man


def collect_metrics(sim: Simulation) -> list[dict[str, Any]]:
    """Rows of the metric summary table (``add_summary`` rows, then plugins' ``state["summary"]``)."""
    rows = [dict(r) for r in sim._metric_rows]
    for slot in sim.world_slots:  # plugins that keep their rows in state["summary"]
        for r in slot.state.get("summary", []) or []:
            if isinstance(r, dict):
                rows.append({"plugin": slot.plugin.name, **r})
    return rows
