"""The small public API: ``make_model``, ``load`` and ``run`` (re-exported by ``marinesim``).

>>> import marinesim
>>> model = marinesim.make_model("torpedo", control_system="depthHeadingAutopilot", r_z=10)
>>> x = model.init(4)                              # 4 vehicles
>>> x = model.step(x, cmd=None, dt=0.02)           # one step of all 4
>>> result = marinesim.run("remus100_survey", time__end=5.0)   # doctest: +SKIP
>>> result["truth.pos"].shape                      # (vehicles, samples, 3)  # doctest: +SKIP

* :func:`make_model` — any model by name (``usm``, ``fossen6dof``, a vehicle preset such as
  ``remus100``, ``bluerov2_heavy``, ``tanker``) with ``init(n, ...)`` and
  ``step(state, cmd, dt, env=None)``, N vehicles at once
  (:func:`marinesim.models.make_model`, which documents units and shapes per family).
* :func:`load` — a scenario (file or bundled name) built into an engine
  :class:`~marinesim.engine.simulation.Simulation`, not yet run.
* :func:`run` — the same, run to its end; a :class:`~marinesim.engine.results.RunResult`
  (signals ``(vehicles, samples, columns)``, events, summary).

Overrides: a keyword with ``__`` (or a ``.`` via ``**{"time.end": 60}``) is a scenario path
as ``marinesim run --set`` takes it (``time__end=60`` → ``time.end=60`` [s]); a plain keyword
is a template variable ``${name}`` of the scenario (``--var``, e.g. ``depth=15``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from marinesim.core.errors import ConfigError
from marinesim.models import Model, make_model

if TYPE_CHECKING:
    from marinesim.engine.results import RunResult
    from marinesim.engine.simulation import Simulation

__all__ = ["Model", "load", "make_model", "run"]


def _split(overrides: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(template variables, --set paths) of the keyword overrides."""
    variables: dict[str, Any] = {}
    sets: dict[str, Any] = {}
    for key, value in overrides.items():
        if "__" in key or "." in key:
            sets[key.replace("__", ".")] = value
        else:
            variables[key] = value
    return variables, sets


def load(scenario: str | Path, *, seed: int | None = None, **overrides: Any) -> Simulation:
    """Load a scenario and build its simulation (not run).

    Parameters
    ----------
    scenario : str or Path
        Scenario YAML file, or a bundled scenario name (``marinesim scenarios``).
    seed : int, optional
        Overrides the scenario's seed.
    **overrides
        ``path__to__key=value`` sets a scenario value (``time__end=60`` [s]); ``name=value``
        a template variable ``${name}``.

    Returns
    -------
    Simulation
        Call ``.run()`` (or use :func:`run`).

    Raises
    ------
    ConfigError
        An unknown scenario, parameter or override, with file, line and parameter.
    """
    from marinesim.scenario import load_simulation

    variables, sets = _split(overrides)
    return load_simulation(scenario, variables=variables or None, sets=sets or None, seed=seed)


def run(
    scenario: str | Path,
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    fmt: str = "parquet",
    **overrides: Any,
) -> RunResult:
    """Run a scenario to its end.

    Parameters
    ----------
    scenario : str or Path
        Scenario YAML file, or a bundled scenario name.
    seed : int, optional
        Overrides the scenario's seed.
    out : str or Path, optional
        Folder to stream the log (and manifest) to as the run goes; default: in memory.
    fmt : str
        Log format with ``out``: ``parquet`` (default), ``csv`` or ``both``.
    **overrides
        As :func:`load`.

    Returns
    -------
    RunResult
        ``result["truth.pos"]`` is (vehicles, samples, 3) [m], ``result.t`` (samples,) [s].

    Raises
    ------
    ConfigError
        Invalid scenario or overrides.
    """
    if fmt not in ("parquet", "csv", "both"):
        raise ConfigError(f"unknown log format {fmt!r}; use parquet, csv or both", param="fmt")
    sim = load(scenario, seed=seed, **overrides)
    if out is not None:
        sim.stream_to(out, fmt)
    return sim.run()
