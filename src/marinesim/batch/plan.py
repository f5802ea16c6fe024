"""A batch plan: the scenario source, the sweep points, the replicas and the runs they make.

Every run is (point p, replica r): the scenario with the point's values applied as ``--set``
overrides, simulated with stream keys starting with r (engine spec §10.5).  All points share
the replica streams (common random numbers), so two points differ only by their parameters.
A worker rebuilds a run from :class:`BatchSource` (the scenario text, not its path), so results
depend on nothing but the plan.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel

from marinesim.batch.design import Sweep, parse_sweep
from marinesim.core.errors import ConfigError, MarinesimError
from marinesim.core.params import field_units
from marinesim.core.registry import get as registry_get
from marinesim.scenario.build import build_simulation, builtin_names, builtin_path, stack_problems
from marinesim.scenario.load import LoadedScenario, load_text, scenario_hash
from marinesim.scenario.schema import ScenarioModel
from marinesim.scenario.templating import apply_sets, parse_assignments

__all__ = ["BatchSource", "Plan", "RunSpec", "make_plan"]

_GROUP_KIND = {
    "motion": "motion",
    "controllers": "controller",
    "autonomy": "autonomy",
    "sensors": "sensor",
    "interactions": "interaction",
    "metrics": "metric",
}


@dataclass(frozen=True)
class BatchSource:
    """Everything a worker needs to load the scenario of any run."""

    text: str
    file: str
    base_dir: str | None
    builtin: str | None
    variables: dict[str, Any]
    sets: dict[str, Any]
    seed: int

    def load(self, values: dict[str, Any] | None = None) -> LoadedScenario:
        """The scenario with the batch's overrides and a point's values applied."""
        return load_text(
            self.text,
            file=self.file,
            base_dir=self.base_dir,
            variables=self.variables,
            sets={**self.sets, **(values or {})},
            seed=self.seed,
            builtin=self.builtin,
        )


@dataclass(frozen=True)
class RunSpec:
    """One run: id, design point, replica and the point's parameter values."""

    run_id: str
    point: int
    replica: int
    values: dict[str, Any]


@dataclass
class Plan:
    """The runs of a batch and how replicas may be grouped."""

    source: BatchSource
    sweep: Sweep | None
    points: list[dict[str, Any]]
    replicas: int
    runs: list[RunSpec]
    stack_problems: list[str] = field(default_factory=list)
    scenario_sha256: str = ""

    @property
    def stackable(self) -> bool:
        """Whether replicas of one point can share a simulation as extra rows."""
        return not self.stack_problems

    def fingerprint(self) -> str:
        """SHA-256 of what determines the results (for ``--resume``)."""
        blob = json.dumps(
            {
                "scenario": self.scenario_sha256,
                "points": self.points,
                "replicas": self.replicas,
                "seed": self.source.seed,
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


def _read_source(scenario: str | Path) -> tuple[str, str, str | None, str | None]:
    p = Path(scenario)
    if not p.exists() and not str(scenario).endswith((".yaml", ".yml")):
        if str(scenario) in builtin_names():
            bp = builtin_path(str(scenario))
            return (
                bp.read_text(encoding="utf-8"),
                f"<builtin>/{scenario}.yaml",
                str(bp.parent),
                str(scenario),
            )
        builtin_path(str(scenario))  # UnknownNameError with suggestions
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"scenario file {str(p)!r} not found") from None
    except OSError as exc:
        raise ConfigError(f"cannot read scenario file {str(p)!r}: {exc.strerror}") from None
    return text, str(p), str(p.resolve().parent), None


def _models(ann: Any) -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    for a in typing.get_args(ann):
        out += _models(a)
    return out


def declared_unit(sc: LoadedScenario, path: str) -> str | None:
    """The unit the parameter at ``path`` declares (None when unknown or dimensionless)."""
    node: Any = sc.data
    models: list[type[BaseModel]] = [ScenarioModel]
    parts = path.split(".")
    unit: str | None = None
    for i, part in enumerate(parts):
        if isinstance(node, list):  # list item by name or index; models stay the item's
            names = [it.get("name") if isinstance(it, dict) else None for it in node]
            if part in names:
                node = node[names.index(part)]
            elif part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                node = node[int(part)]
            else:
                return None
            continue
        if part == "params" and isinstance(node, dict) and "plugin" in node and i >= 1:
            group = parts[i - 1] if parts[i - 1] in _GROUP_KIND else parts[i - 2] if i >= 2 else ""
            try:
                cls = registry_get(_GROUP_KIND.get(group, ""), str(node["plugin"]))
            except MarinesimError:
                return None
            models = [cls.Params] if hasattr(cls, "Params") else []
            node = node.get("params") or {}
            continue
        hits = [m for m in models if part in m.model_fields]
        if not hits:
            return None
        unit = field_units(hits[0]).get(part) or None
        models = _models(hits[0].model_fields[part].annotation)
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            node = {}
    return unit


def _check_paths(sc: LoadedScenario, source: BatchSource, sweep: Sweep) -> None:
    """Unknown sweep parameters → ConfigError with did-you-mean (before any run)."""
    data = copy.deepcopy(sc.data)
    for p in sweep.parameters:
        try:
            apply_sets(copy.deepcopy(data), {p.path: 0})
        except ConfigError as exc:
            raise ConfigError(
                f"unknown sweep parameter {p.path!r}: {exc.message.split(': ', 1)[-1]}",
                file=sc.file,
                param=f"sweep.parameters.{p.path}",
            ) from None
    first = sweep.points(source.seed)[0]
    for p in sweep.parameters:
        # build with only this parameter changed: an unknown key fails as "extra field"
        try:
            build_simulation(source.load({p.path: first[p.path]}), replicas=[0])
        except ConfigError as exc:
            if "extra field not permitted" in exc.message or "extra inputs" in exc.message:
                raise ConfigError(
                    f"unknown sweep parameter {p.path!r}: {exc.message.replace(' (value from --set)', '')}",
                    file=sc.file,
                    param=f"sweep.parameters.{p.path}",
                ) from None
            # any other error is a value problem: it becomes the error of the runs concerned


def make_plan(
    scenario: str | Path,
    *,
    replicas: int | None = None,
    sweep: Any = None,
    sweep_file: str | None = None,
    variables: Any = None,
    sets: Any = None,
    seed: int | None = None,
) -> Plan:
    """Load and check everything a batch needs before its first run.

    Parameters
    ----------
    scenario : str or Path
        Scenario file or bundled name.
    replicas : int, optional
        Replicas per design point (default: the scenario's ``replicas``).
    sweep : mapping or str or Path, optional
        A sweep mapping, or a YAML file holding one (default: the scenario's ``sweep:``).
    variables, sets : mapping or list of "k=v", optional
        ``--var`` and ``--set``.
    seed : int, optional
        Root seed (default: the scenario's; drawn from OS entropy when it has none).

    Raises
    ------
    ConfigError
        Bad scenario, replicas <= 0, empty or unknown sweep parameters (did-you-mean).
    """
    text, file, base_dir, builtin = _read_source(scenario)
    vars_ = (
        parse_assignments(variables, option="--var")
        if isinstance(variables, (list, tuple))
        else dict(variables or {})
    )
    sets_ = (
        parse_assignments(sets, option="--set")
        if isinstance(sets, (list, tuple))
        else dict(sets or {})
    )
    probe = load_text(
        text, file=file, base_dir=base_dir, variables=vars_, sets=sets_, seed=seed, builtin=builtin
    )
    root = probe.model.seed if seed is None else seed
    if root is None:
        root = int(np.random.SeedSequence().entropy % (2**63 - 1))
    source = BatchSource(text, file, base_dir, builtin, vars_, sets_, int(root))
    sc = source.load()
    if replicas is None:
        replicas = sc.model.replicas
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas <= 0:
        raise ConfigError(f"replicas must be an integer >= 1, got {replicas!r}", param="--replicas")
    build_simulation(sc, replicas=[0])  # the base scenario itself must build
    sw_data, sw_file = (
        (sc.data.get("sweep"), sc.file) if sweep is None and sweep_file is None else (sweep, None)
    )
    if sweep_file is not None:
        sw_file = str(sweep_file)
        try:
            raw = Path(sweep_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot read sweep file {sw_file!r}: {exc.strerror}", param="--sweep"
            ) from None
        try:
            sw_data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ConfigError(
                f"sweep file is not valid YAML: {getattr(exc, 'problem', exc)}",
                file=sw_file,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None
        if isinstance(sw_data, dict) and "sweep" in sw_data and len(sw_data) == 1:
            sw_data = sw_data["sweep"]
    sw: Sweep | None = None
    if sw_data is not None:
        sw = parse_sweep(sw_data, file=sw_file, units=lambda path: declared_unit(sc, path))
        _check_paths(sc, source, sw)
    points = sw.points(source.seed) if sw is not None else [{}]
    points = [{k: _plain(v) for k, v in pt.items()} for pt in points]
    wp = max(4, len(str(len(points) - 1)))
    wr = max(5, len(str(replicas - 1)))
    runs = [
        RunSpec(f"p{p:0{wp}d}r{r:0{wr}d}", p, r, pt)
        for p, pt in enumerate(points)
        for r in range(replicas)
    ]
    return Plan(source, sw, points, replicas, runs, stack_problems(sc), scenario_hash(sc.data))


def _plain(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def chunk_size(
    replicas: int, workers: int, cap: int = 256, tasks_per_worker: int = 4, floor: int = 16
) -> int:
    """Replicas per task: about ``tasks_per_worker`` tasks per worker (so the progress bar
    moves while the batch runs), never fewer than ``floor`` stacked replicas per task (the
    vectorised step stays worth it) and at most ``cap``."""
    w = max(workers, 1)
    per = math.ceil(replicas / (w * max(tasks_per_worker, 1)))
    size = min(max(per, min(floor, math.ceil(replicas / w))), cap)
    return max(1, size)
