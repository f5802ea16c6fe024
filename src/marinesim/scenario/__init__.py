"""Scenario files: YAML layout, loading with line marks, templating, bundled scenarios.

Quick start::

    from marinesim.scenario import load_simulation
    sim = load_simulation("demo_survey", sets={"time.end": 120})
    result = sim.run()
"""

from marinesim.scenario.build import (
    build_simulation,
    builtin_names,
    builtin_path,
    load_scenario,
    load_simulation,
)
from marinesim.scenario.load import LoadedScenario, load_file, load_text

__all__ = [
    "LoadedScenario",
    "build_simulation",
    "builtin_names",
    "builtin_path",
    "load_file",
    "load_scenario",
    "load_simulation",
    "load_text",
]
