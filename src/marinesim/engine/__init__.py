"""marinesim.engine: time, entities, plugins, the bus and run results.

Quick start::

    from marinesim.engine import Simulation
    sim = Simulation.from_file("scenario.yaml")
    result = sim.run()

Build simulations in code from :class:`BlockSpec` / :class:`PluginSpec`; write plugins by
subclassing :class:`Plugin` (hooks and phases: :data:`PHASES`, :data:`HOOKS`).
"""

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.env import Environment
from marinesim.engine.plugin import HOOKS, KINDS, PHASES, Plugin
from marinesim.engine.results import Event, RunResult, Signal
from marinesim.engine.simulation import HookContext, MetricCondition, Simulation, Snapshot

__all__ = [
    "HOOKS",
    "KINDS",
    "PHASES",
    "BlockSpec",
    "Environment",
    "Event",
    "HookContext",
    "MetricCondition",
    "Plugin",
    "PluginSpec",
    "RunResult",
    "Signal",
    "Simulation",
    "Snapshot",
    "Spawn",
]
