"""Build a :class:`~marinesim.engine.simulation.Simulation` from a checked scenario.

``load_simulation("survey.yaml", variables=..., sets=..., seed=...)`` is the one-call API
(also reachable as ``Simulation.from_file``); bundled scenarios are addressed by name
(``load_simulation("demo_survey")``, see :func:`builtin_names`).
"""

from __future__ import annotations

import math
import re
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, ConfigWarning, UnknownNameError
from marinesim.core.registry import get as registry_get
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.env import Environment
from marinesim.engine.plugins.script import EventScript, EventScriptParams, ScriptEvent
from marinesim.engine.simulation import MetricCondition, Simulation
from marinesim.scenario.current_field import load_current_field
from marinesim.scenario.load import (
    LoadedScenario,
    load_file,
    load_text,
    mark_set_origin,
    resolved_text,
    scenario_hash,
    validate_model,
)
from marinesim.scenario.schema import CurrentField as CurrentFieldModel
from marinesim.scenario.schema import CurrentUniform, PluginEntry

__all__ = [
    "SEPARABLE_METRICS",
    "build_simulation",
    "builtin_names",
    "builtin_path",
    "load_scenario",
    "load_simulation",
    "parse_script_item",
    "stack_problems",
]

#: Metric plugins whose rows are per entity (their team rows are sums of entity rows), so
#: replicas stacked as extra rows give each replica the values of its own run.
SEPARABLE_METRICS = frozenset({"distance_travelled", "nav_error", "time_in_box", "energy"})

_KIND_LABEL = {
    "motion": "motion plugin",
    "controller": "controller plugin",
    "autonomy": "autonomy plugin",
    "sensor": "sensor plugin",
    "interaction": "interaction plugin",
    "metric": "metric plugin",
}

_SCRIPT_RE = re.compile(r"^\s*([^=\s]+)\s*=\s*(.*?)\s+at\s+(\S+)\s*(?:for\s+(\S+))?\s*$")


def builtin_names() -> list[str]:
    """Names of the bundled scenarios (``marinesim/scenario/builtin/*.yaml``)."""
    root = resources.files("marinesim.scenario") / "builtin"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def builtin_path(name: str) -> Path:
    """Path of a bundled scenario; unknown names raise UnknownNameError with suggestions."""
    if name not in builtin_names():
        raise UnknownNameError("bundled scenario", name, builtin_names())
    return Path(str(resources.files("marinesim.scenario") / "builtin" / f"{name}.yaml"))


def load_scenario(
    source: str | Path,
    *,
    variables: Any = None,
    sets: Any = None,
    seed: int | None = None,
) -> LoadedScenario:
    """Load a scenario file, or a bundled scenario by name (``demo_survey``)."""
    p = Path(source)
    if (
        not p.exists()
        and not str(source).endswith((".yaml", ".yml"))
        and str(source) in builtin_names()
    ):
        bp = builtin_path(str(source))
        text = bp.read_text(encoding="utf-8")
        return load_text(
            text,
            file=f"<builtin>/{source}.yaml",
            base_dir=bp.parent,
            variables=variables,
            sets=sets,
            seed=seed,
            builtin=str(source),
        )
    return load_file(p, variables=variables, sets=sets, seed=seed)


def load_simulation(
    source: str | Path,
    *,
    variables: Any = None,
    sets: Any = None,
    seed: int | None = None,
    time_warp: float | None = None,
) -> Simulation:
    """Load a scenario (file or bundled name) and build its simulation.

    Parameters
    ----------
    source : str or Path
        Scenario file, or the name of a bundled scenario.
    variables : mapping or list of "name=value", optional
        Template variables (``--var``).
    sets : mapping or list of "path=value", optional
        Overrides (``--set``), e.g. ``{"time.end": 60}``.
    seed : int, optional
        Overrides the scenario seed.
    time_warp : float, optional
        Overrides ``time.time_warp``.

    Returns
    -------
    Simulation
    """
    loaded = load_scenario(source, variables=variables, sets=sets, seed=seed)
    return build_simulation(loaded, time_warp=time_warp)


def _relocate(exc: ConfigError, sc: LoadedScenario) -> ConfigError:
    param = sc.display(exc.param) if exc.param else None
    line, col = exc.line, exc.column
    if line is None and exc.param:
        line, col = sc.where(exc.param)
    if isinstance(exc, UnknownNameError):
        new = UnknownNameError(
            exc.kind,
            exc.name,
            exc.known,
            file=exc.file or sc.file,
            line=line,
            column=col,
            param=param,
        )
        return new
    return ConfigError(exc.message, file=exc.file or sc.file, line=line, column=col, param=param)


def _warn(ws: list[Any], sc: LoadedScenario) -> None:
    for w in ws:
        if sc.model.strict:
            raise ConfigError(
                f"{w.message} (strict: warnings are errors)",
                file=w.file or sc.file,
                line=w.line,
                column=w.column,
                param=w.param,
            )
        warnings.warn(w, stacklevel=3)


def _make_plugin(
    kind: str, entry: PluginEntry, path: str, sc: LoadedScenario, loader: Any
) -> PluginSpec:
    try:
        cls = registry_get(kind, entry.plugin, label=_KIND_LABEL.get(kind, kind))
    except UnknownNameError as exc:
        line, col = sc.where(f"{path}.plugin")
        raise UnknownNameError(
            exc.kind,
            exc.name,
            exc.known,
            file=sc.file,
            line=line,
            column=col,
            param=sc.display(f"{path}.plugin"),
        ) from None
    if getattr(cls, "kind", None) != kind:
        raise sc.error(
            f"{entry.plugin!r} is a {getattr(cls, 'kind', '?')} plugin, not a {kind} plugin",
            f"{path}.plugin",
        )
    name = entry.name or entry.plugin
    prefix = f"{path}.params"
    try:
        if hasattr(cls, "build_params"):
            params, ws = cls.build_params(
                entry.params,
                file=sc.file,
                marks=sc.marks,
                prefix=prefix,
                base_dir=sc.base_dir,
                load_current_field=loader,
            )
            _warn(ws, sc)
        else:
            # ConfigWarnings of the parameter validators get the scenario location (and
            # become errors under strict: true)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConfigWarning)
                params = validate_model(
                    cls.Params, entry.params, sc.marks, sc.file, prefix=prefix, root=sc.data
                )
            for c in caught:
                w = c.message
                if not isinstance(w, ConfigWarning):
                    warnings.warn_explicit(w, c.category, c.filename, c.lineno)
                    continue
                if w.param and w.line is None:
                    full = f"{prefix}.{w.param}"
                    line, col = sc.where(full)
                    w = ConfigWarning(
                        w.message, file=sc.file, line=line, column=col, param=sc.display(full)
                    )
                _warn([w], sc)
        plugin = cls(name, params)
    except ConfigError as exc:
        raise mark_set_origin(_relocate(exc, sc), sc.data, sc.set_paths) from None
    return PluginSpec(plugin, entry.rate_hz, entry.offset_ticks, entry.uses_truth, entry.plugin)


def _current_loader(
    path: Any, *, file: Any = None, line: Any = None, param: str = "current_field"
) -> Any:
    return load_current_field(path, file=file, line=line, param=param)


def _terrain(sc: LoadedScenario, ter: Any) -> dict[str, Any]:
    """``environment.terrain`` → Environment keywords (flat depth or gridded bathymetry)."""
    if getattr(ter, "model", "") == "flat":
        return {"terrain": float(ter.depth), "terrain_source": "flat"}
    from marinesim.environment.terrain import parse_bathymetry

    p = Path(ter.file)
    if not p.is_absolute() and sc.base_dir is not None:
        p = sc.base_dir / p
    from marinesim.core.textio import read_input_text

    if not p.exists():
        raise sc.error(
            f"cannot read bathymetry file {str(p)!r}: not found", "environment.terrain.file"
        )
    line, _col = sc.where("environment.terrain.file")
    text = read_input_text(
        p, what="bathymetry file", ref_file=sc.file, ref_line=line,
        param="environment.terrain.file",
    )  # fmt: skip
    grid = parse_bathymetry(text, file=p)  # DataError with file:line for a malformed cell
    return {"terrain": grid, "terrain_source": str(p)}


def _environment(sc: LoadedScenario) -> Environment:
    env = sc.model.environment
    kwargs: dict[str, Any] = {"density": env.water.density, "gravity": env.water.gravity}
    if env.terrain is not None:
        kwargs.update(_terrain(sc, env.terrain))
    cur = env.current
    if isinstance(cur, CurrentUniform):
        rad = math.radians(cur.direction_deg)
        kwargs["current_north"] = cur.speed * math.cos(rad)
        kwargs["current_east"] = cur.speed * math.sin(rad)
    elif isinstance(cur, CurrentFieldModel) and cur.active:
        p = Path(cur.file)
        if not p.is_absolute() and sc.base_dir is not None:
            p = sc.base_dir / p
        line, _col = sc.where("environment.current.file")
        fld, ws = _current_loader(p, file=sc.file, line=line, param="environment.current.file")
        _warn(ws, sc)
        if len(fld) == 0:
            raise sc.error(
                f"current-field file {str(p)!r} has no valid vector", "environment.current.file"
            )
        kwargs["current_field"] = fld
        kwargs["current_source"] = str(p)
    if sc.model.origin is not None:
        kwargs["origin"] = (sc.model.origin.latitude_deg, sc.model.origin.longitude_deg)
    return Environment(**kwargs)


def parse_script_item(item: Any) -> tuple[float, str, float | str, str]:
    """One ``script:`` entry → (t, var, value, target).

    Forms: ``"VAR=value at T [for TARGET]"`` (quoted value = string, number = double, other
    text = string) or ``{at: T, var: VAR, value: V, target: TARGET}``.

    Raises
    ------
    ValueError
        With the reason (the caller adds file and line).
    """
    if isinstance(item, str):
        m = _SCRIPT_RE.match(item)
        if not m:
            raise ValueError(
                f"malformed script line {item!r}; expected 'VAR=value at T' (optionally 'for TARGET')"
            )
        var, raw, at, target = m.group(1), m.group(2).strip(), m.group(3), m.group(4) or "all"
        try:
            t = float(at)
        except ValueError:
            raise ValueError(f"time {at!r} is not a number (in {item!r})") from None
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            value: float | str = raw[1:-1]
        else:
            try:
                value = float(raw)
            except ValueError:
                if raw == "":
                    raise ValueError(f"empty value in {item!r}") from None
                value = raw
        return t, var, value, target
    if isinstance(item, dict):
        extra = set(item) - {"at", "var", "value", "target"}
        if extra:
            raise ValueError(f"unknown script key(s) {sorted(extra)}; use at, var, value, target")
        for key in ("at", "var", "value"):
            if key not in item:
                raise ValueError(f"script entry needs '{key}'")
        if isinstance(item["at"], bool) or not isinstance(item["at"], (int, float)):
            raise ValueError(f"'at' must be a number of seconds, got {item['at']!r}")
        v = item["value"]
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError(
                f"value must be a number or a string, got {v!r} (quote it for a string)"
            )
        return (
            float(item["at"]),
            str(item["var"]),
            float(v) if not isinstance(v, str) else v,
            str(item.get("target", "all")),
        )
    raise ValueError(f"script entries are 'VAR=value at T' strings or mappings, got {item!r}")


def _script(
    sc: LoadedScenario,
    blocks: dict[str, list[PluginSpec]],
    sizes: dict[str, int],
    var_types: dict[str, dict[str, str]],
) -> dict[str, list[ScriptEvent]]:
    per_block: dict[str, list[ScriptEvent]] = {b: [] for b in blocks}
    entity_names = {f"{b}[{i}]": (b, i) for b, n in sizes.items() for i in range(n)}
    for k, item in enumerate(sc.model.script):
        path = f"script.{k}"
        try:
            t, var, value, target = parse_script_item(item)
            if not math.isfinite(t) or t < 0:
                raise ValueError(f"time must be finite and >= 0, got {t!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(
                    f"{var}: non-finite value {value!r} (a command must be a finite number)"
                )
        except ValueError as exc:
            raise sc.error(str(exc), path) from None
        if target == "all":
            targets = [(b, None) for b in blocks]
        elif target in blocks:
            targets = [(target, None)]
        elif target in entity_names:
            b, i = entity_names[target]
            targets = [(b, [i])]
        else:
            exc2 = UnknownNameError("script target", target, ["all", *blocks, *entity_names])
            line, col = sc.where(path)
            raise UnknownNameError(
                exc2.kind, exc2.name, exc2.known, file=sc.file, line=line, column=col, param=path
            )
        for b, rows in targets:
            types = var_types[b]
            if var not in types:
                close = [n for n in types if n != "*"]
                from marinesim.core.errors import suggest

                sug = suggest(var, close)
                hint = f" (did you mean {sug[0]!r}?)" if sug else ""
                _warn(
                    [
                        ConfigWarning(
                            f"no plugin of block {b!r} subscribes to {var!r}{hint}",
                            file=sc.file,
                            line=sc.where(path)[0],
                            column=sc.where(path)[1],
                            param=path,
                        )
                    ],
                    sc,
                )
            else:
                typ = types[var]
                if typ == "double" and isinstance(value, str):
                    raise sc.error(
                        f"{var} takes a number, got the non-numeric value {value!r}", path
                    )
                if typ == "string" and not isinstance(value, str):
                    raise sc.error(
                        f'{var} takes a string; quote the value: {var}="{value:g}"', path
                    )
            per_block[b].append(ScriptEvent(at=t, var=var, value=value, rows=rows))
    return per_block


def _world_aware(kind: str, name: str) -> bool:
    """Whether a plugin couples entities only within a world (``world_aware``; the older
    ``replica_aware`` means the same)."""
    try:
        cls = registry_get(kind, name)
    except ConfigError:
        return False
    return bool(getattr(cls, "world_aware", False) or getattr(cls, "replica_aware", False))


def stack_problems(sc: LoadedScenario) -> list[str]:
    """Why the replicas of ``sc`` cannot be stacked as worlds of one simulation (§10.5).

    Stacking is exact when nothing couples the rows of different worlds: the end conditions
    ``time``, ``all_done``, ``all_inactive`` and ``one_team`` are evaluated per world (a world
    that ends is frozen), lawnmower lanes are split per world, and plugins that look at other
    entities must be ``world_aware`` (contacts, min_separation) or per-entity metrics
    (:data:`SEPARABLE_METRICS`).  What still couples: interaction plugins that are not
    world-aware, other metrics, sensors reading every entity's truth without being
    world-aware, and metric end conditions (a metric value is one number for the whole
    simulation).  An empty list means stacking is exact.
    """
    m = sc.model
    out: list[str] = []
    for e in m.interactions:
        if not _world_aware("interaction", e.plugin):
            out.append(f"interaction plugin {e.name or e.plugin!r} couples entities of all worlds")
    for e in m.metrics:
        if e.plugin not in SEPARABLE_METRICS and not _world_aware("metric", e.plugin):
            out.append(f"metric {e.name or e.plugin!r} ({e.plugin}) compares entities")
    for c in m.end_conditions:
        if not isinstance(c, str):
            out.append(
                f"end condition 'metric {c.metric}' reads one value for the whole simulation"
            )
    for ent in m.entities:
        for entry in ent.sensors:
            try:
                cls = registry_get("sensor", entry.plugin)
            except ConfigError:
                continue  # reported by the build
            if getattr(cls, "reads_all_truth", False) and not _world_aware("sensor", entry.plugin):
                out.append(
                    f"sensor {ent.name}.{entry.name or entry.plugin} observes other entities"
                )
    return out


def _stacked_entry(entry: PluginEntry, count: int, reps: int) -> PluginEntry:
    """A plugin entry for ``reps`` stacked worlds of a ``count``-vehicle block."""
    if entry.plugin != "waypoints" or reps <= 1:
        return entry
    params = dict(entry.params)
    off = params.get("member_offset_ne")
    if isinstance(off, list):
        params["member_offset_ne"] = list(off) * reps
    return entry.model_copy(update={"params": params})


def build_simulation(
    sc: LoadedScenario,
    *,
    time_warp: float | None = None,
    replicas: Any = None,
) -> Simulation:
    """Instantiate every plugin and the simulation of a loaded scenario.

    Parameters
    ----------
    sc : LoadedScenario
    time_warp : float, optional
        Overrides ``time.time_warp``.
    replicas : sequence of int, optional
        Replica indices to simulate (default ``range(replicas)`` of the scenario).  One index
        r gives the single run of replica r (stream keys start with r); several are stacked
        as extra rows of every block (``name[i]@r``), which requires :func:`stack_problems`
        to be empty.

    Raises
    ------
    ConfigError
        Unknown plugins (with suggestions), bad params (file:line:column: path: message),
        unsupported features ("not supported yet").
    """
    m = sc.model
    reps = tuple(int(r) for r in (range(m.replicas) if replicas is None else replicas))
    if not reps or any(r < 0 for r in reps):
        raise sc.error(f"replica indices must be >= 0 and at least one, got {reps}", "replicas")
    if len(reps) > 1:
        problems = stack_problems(sc)
        if problems:
            raise sc.error(
                f"{len(reps)} replicas cannot share one simulation: {'; '.join(problems)}; "
                "run them with 'marinesim batch' (one simulation per replica)",
                "replicas",
            )
    stacked = reps if len(reps) > 1 else ()
    n_rep = max(len(stacked), 1)
    if m.networks:
        raise sc.error("networks are not supported yet", "networks")
    data = sc.data
    if m.seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63 - 1))
        data["seed"] = seed
        seed_drawn = True
    else:
        seed = m.seed
        seed_drawn = False
    env = _environment(sc)
    loader = _current_loader
    block_plugins: dict[str, list[PluginSpec]] = {}
    specs: dict[str, dict[str, Any]] = {}
    sizes: dict[str, int] = {}
    var_types: dict[str, dict[str, str]] = {}
    for i, ent in enumerate(m.entities):
        base = f"entities.{i}"
        if ent.generate is not None:
            raise sc.error(
                "runtime generation ('generate') is not supported yet", f"{base}.generate"
            )
        motion = _make_plugin("motion", ent.motion, f"{base}.motion", sc, loader)
        ctrls = [
            _make_plugin("controller", e, f"{base}.controllers.{j}", sc, loader)
            for j, e in enumerate(ent.controllers)
        ]
        autos = [
            _make_plugin(
                "autonomy", _stacked_entry(e, ent.count, n_rep), f"{base}.autonomy.{j}", sc, loader
            )
            for j, e in enumerate(ent.autonomy)
        ]
        sens = [
            _make_plugin("sensor", e, f"{base}.sensors.{j}", sc, loader)
            for j, e in enumerate(ent.sensors)
        ]
        specs[ent.name] = {
            "motion": motion,
            "controllers": ctrls,
            "autonomy": autos,
            "sensors": sens,
            "model": ent,
        }
        sizes[ent.name] = ent.count
        types: dict[str, str] = {}
        for ps in (motion, *ctrls, *autos, *sens):
            types.update(ps.plugin.subscribes)
        var_types[ent.name] = types
        block_plugins[ent.name] = [motion, *ctrls, *autos, *sens]
    scripts = _script(sc, block_plugins, sizes, var_types) if m.script else {}
    blocks = []
    for name, s in specs.items():
        ent = s["model"]
        autos = list(s["autonomy"])
        evs = scripts.get(name)
        if evs and stacked:  # a member's events go to that member in every replica
            evs = [
                ev.model_copy(
                    update={"rows": [k * ent.count + i for k in range(n_rep) for i in ev.rows]}
                )
                if ev.rows is not None
                else ev
                for ev in evs
            ]
        if evs:
            pname = "script"
            taken = {p.plugin.name for p in block_plugins[name]}
            while pname in taken:
                pname += "_"
            autos.append(
                PluginSpec(
                    EventScript(pname, EventScriptParams(events=evs)), registry_name="event_script"
                )
            )
        sp = ent.spawn
        spread = sp.spread
        offsets = None
        if sp.step is not None:
            k = np.arange(ent.count)[:, None]
            offsets = k * np.array(
                [sp.step.north, sp.step.east, sp.step.depth, sp.step.heading_deg]
            )
        spawn = Spawn(
            north=sp.north,
            east=sp.east,
            depth=sp.depth,
            heading_deg=sp.heading_deg,
            speed=sp.speed,
            distribution=spread.distribution if spread else "normal",
            spread={k: getattr(spread, k) for k in ("north", "east", "depth", "heading_deg")}
            if spread
            else {},
            offsets=offsets,
        )
        blocks.append(
            BlockSpec(
                name,
                ent.count,
                s["motion"],
                tuple(s["controllers"]),
                tuple(autos),
                tuple(s["sensors"]),
                spawn,
                ent.team,
                ent.radius,
                ent.contact_type,
                dict(ent.properties),
                stacked,
            )
        )
    world = [
        _make_plugin("interaction", e, f"interactions.{j}", sc, loader)
        for j, e in enumerate(m.interactions)
    ]
    world += [
        _make_plugin("metric", e, f"metrics.{j}", sc, loader) for j, e in enumerate(m.metrics)
    ]
    ends: list[Any] = [
        c if isinstance(c, str) else MetricCondition(c.metric, c.op, c.value)
        for c in m.end_conditions
    ]
    resolved = resolved_text(data)
    manifest = {
        **({"replicas": list(stacked)} if stacked else {}),
        "scenario_file": sc.file,
        "scenario_sha256": scenario_hash(data),
        "builtin_scenario": sc.builtin,
        "current_field_file": env.current_source or None,
        "current_uniform": [env.current_north, env.current_east],
        "origin": list(env.origin) if env.origin else None,
    }
    try:
        sim = Simulation(
            blocks,
            dt=m.time.dt,
            substeps=m.time.substeps,
            start=m.time.start,
            end=m.time.end,
            time_warp=m.time.time_warp if time_warp is None else time_warp,
            seed=seed,
            end_conditions=ends,
            on_nonfinite=m.on_nonfinite,
            env=env,
            world=world,
            name=m.name,
            replica=reps[0],
            manifest=manifest,
            resolved_scenario=resolved,
            log_rate=m.log_rate,
            log_columns=m.log_columns,
        )
    except ConfigError as exc:
        raise _relocate_engine(exc, sc) from None
    sim.seed_drawn = seed_drawn
    sim.scenario = sc  # type: ignore[attr-defined]
    return sim


def _relocate_engine(exc: ConfigError, sc: LoadedScenario) -> ConfigError:
    """Engine errors name paths with block names (entities.auv.pid.rate_hz): find their lines."""
    param = exc.param or ""
    idx_path = param
    parts = param.split(".")
    if parts and parts[0] == "entities" and len(parts) > 1:
        names = [e.name for e in sc.model.entities]
        if parts[1] in names:
            bi = names.index(parts[1])
            idx_path = f"entities.{bi}"
            rest = parts[2:]
            if rest:
                ent = sc.model.entities[bi]
                found = None
                for group in ("motion", "controllers", "autonomy", "sensors"):
                    entries = [ent.motion] if group == "motion" else getattr(ent, group)
                    for j, e in enumerate(entries):
                        if (e.name or e.plugin) == rest[0]:
                            found = (
                                f"{idx_path}.motion"
                                if group == "motion"
                                else f"{idx_path}.{group}.{j}"
                            )
                if found is not None:
                    idx_path = ".".join([found, *rest[1:]])
                else:
                    idx_path = ".".join([idx_path, *rest])
    line, col = sc.where(idx_path) if idx_path else (None, None)
    return ConfigError(exc.message, file=sc.file, line=line, column=col, param=param or None)
