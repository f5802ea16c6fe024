"""Sweep designs: grid and random samples over scenario parameters addressed by dotted path.

A sweep is a mapping (the scenario's ``sweep:`` key, or a YAML file given to ``--sweep``)::

    design: grid                 # grid (cartesian product) or random
    samples: 20                  # random only: number of points
    seed: 7                      # random only: sampling seed (default: the scenario seed)
    parameters:
      entities.ins_auv.autonomy.survey.params.speed: {values: [1.0, 1.5, 2.0]}
      entities.ins_auv.sensors.dvl.params.noise_std: {start: 0.01, stop: 0.05, num: 3}
      environment.current.speed: {distribution: uniform, low: 0, high: 0.6, unit: knot}

Paths are those of ``--set`` (list items by ``name`` or index).  Grid parameters take
``values`` or ``start``/``stop`` with ``num`` (inclusive linspace) or ``step``; random ones a
``distribution`` (uniform, normal, lognormal, loguniform, integers, choice).  ``unit`` converts
the values to the unit the parameter declares (knot → m/s, km → m, min → s, rad → deg, ...).
Sampling uses its own seed tree branch, so the points never depend on how runs are executed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, suggest

__all__ = ["DISTRIBUTIONS", "UNITS", "Parameter", "Sweep", "convert_unit", "parse_sweep"]

#: unit → (dimension, factor to the dimension's base unit).
UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "cm": ("length", 0.01),
    "mm": ("length", 0.001),
    "nmi": ("length", 1852.0),
    "ft": ("length", 0.3048),
    "m/s": ("speed", 1.0),
    "cm/s": ("speed", 0.01),
    "mm/s": ("speed", 0.001),
    "knot": ("speed", 1852.0 / 3600.0),
    "kn": ("speed", 1852.0 / 3600.0),
    "km/h": ("speed", 1000.0 / 3600.0),
    "s": ("time", 1.0),
    "ms": ("time", 0.001),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "Hz": ("frequency", 1.0),
    "deg": ("angle", math.pi / 180.0),
    "rad": ("angle", 1.0),
    "deg/s": ("angular rate", math.pi / 180.0),
    "rad/s": ("angular rate", 1.0),
    "m/s^2": ("acceleration", 1.0),
    "kg": ("mass", 1.0),
    "N": ("force", 1.0),
    "W": ("power", 1.0),
    "V": ("voltage", 1.0),
    "A": ("current", 1.0),
    "%": ("fraction", 0.01),
    "": ("dimensionless", 1.0),
}

DISTRIBUTIONS = {
    "uniform": ("low", "high"),
    "normal": ("mean", "std"),
    "lognormal": ("mean", "sigma"),
    "loguniform": ("low", "high"),
    "integers": ("low", "high"),
    "choice": ("values",),
}
_GRID_KEYS = {"values", "start", "stop", "num", "step", "unit"}
_DESIGN_KEYS = {"design", "samples", "seed", "parameters"}


def convert_unit(values: Any, given: str, declared: str | None, where: str) -> Any:
    """Convert numbers from ``given`` to ``declared`` (None: the parameter declares no unit).

    Raises
    ------
    ConfigError
        Unknown unit, or units of different dimensions (e.g. m/s for a depth).
    """
    if given not in UNITS:
        close = suggest(given, UNITS)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown unit {given!r}{hint}", param=where)
    if declared is None:
        raise ConfigError(
            f"unit {given!r} given but the parameter declares no unit; write plain values",
            param=where,
        )
    if declared == given:
        return values
    if declared not in UNITS:
        raise ConfigError(
            f"unit {given!r} given but the parameter's unit is {declared!r}; give values in "
            f"{declared!r}",
            param=where,
        )
    dim_g, f_g = UNITS[given]
    dim_d, f_d = UNITS[declared]
    if dim_g != dim_d:
        raise ConfigError(
            f"unit {given!r} ({dim_g}) does not fit the parameter's unit {declared!r} ({dim_d})",
            param=where,
        )
    scale = f_g / f_d
    if isinstance(values, list):
        return [v * scale if _is_number(v) else v for v in values]
    return values * scale


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Parameter:
    """One swept parameter.

    Attributes
    ----------
    path : str
        Dotted scenario path (as ``--set``).
    values : list, optional
        Grid values (already in the parameter's unit).
    distribution : str, optional
        Random design: the distribution name (see :data:`DISTRIBUTIONS`).
    args : dict
        Distribution arguments.
    unit : str or None
        Unit the values were written in.
    """

    path: str
    values: list[Any] | None = None
    distribution: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    unit: str | None = None

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        """``n`` draws (random design)."""
        d, a = self.distribution, self.args
        if d is None:  # a grid parameter inside a random design: cycle through its values
            assert self.values is not None
            return [self.values[int(i)] for i in rng.integers(0, len(self.values), n)]
        if d == "uniform":
            out = rng.uniform(a["low"], a["high"], n)
        elif d == "normal":
            out = rng.normal(a["mean"], a["std"], n)
        elif d == "lognormal":
            out = rng.lognormal(a["mean"], a["sigma"], n)
        elif d == "loguniform":
            out = np.exp(rng.uniform(math.log(a["low"]), math.log(a["high"]), n))
        elif d == "integers":
            return [int(v) for v in rng.integers(int(a["low"]), int(a["high"]) + 1, n)]
        else:  # choice
            return [a["values"][int(i)] for i in rng.integers(0, len(a["values"]), n)]
        return [float(v) for v in out]


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep: ``design`` (grid or random), parameters, random sample count and seed."""

    design: str
    parameters: tuple[Parameter, ...]
    samples: int = 0
    seed: int | None = None

    @property
    def paths(self) -> list[str]:
        """Swept parameter paths, in file order."""
        return [p.path for p in self.parameters]

    def points(self, default_seed: int = 0) -> list[dict[str, Any]]:
        """The design points: one ``{path: value}`` per point, in a fixed order.

        Grid: the cartesian product (last parameter fastest).  Random: ``samples`` points;
        parameter k draws from stream (seed, spawn_key=(3, k)) so adding a parameter leaves the
        others' draws unchanged.
        """
        if self.design == "grid":
            grids = [p.values or [] for p in self.parameters]
            return [
                dict(zip(self.paths, combo, strict=True)) for combo in itertools.product(*grids)
            ]
        seed = self.seed if self.seed is not None else default_seed
        cols = []
        for k, p in enumerate(self.parameters):
            g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(3, k))))
            cols.append(p.sample(g, self.samples))
        return [
            {p.path: cols[k][i] for k, p in enumerate(self.parameters)} for i in range(self.samples)
        ]


def parse_sweep(
    data: Any,
    *,
    file: str | None = None,
    units: Any = None,
) -> Sweep:
    """Check a sweep mapping and build :class:`Sweep`.

    Parameters
    ----------
    data : mapping
        The ``sweep:`` block.
    file : str, optional
        For messages.
    units : callable, optional
        ``units(path) -> str | None``: the unit a parameter declares (for ``unit:`` conversion).

    Raises
    ------
    ConfigError
        Empty sweep, unknown keys or distributions (with suggestions), bad numbers.
    """
    if not isinstance(data, Mapping):
        raise ConfigError("a sweep must be a mapping with 'parameters'", file=file, param="sweep")
    for k in data:
        if k not in _DESIGN_KEYS:
            raise _unknown("sweep key", str(k), _DESIGN_KEYS, file, "sweep")
    design = data.get("design", "grid")
    if design not in ("grid", "random"):
        raise _unknown("design", str(design), ("grid", "random"), file, "sweep.design")
    params = data.get("parameters")
    if not isinstance(params, Mapping) or not params:
        raise ConfigError(
            "the sweep is empty: give at least one parameter under 'parameters:'",
            file=file,
            param="sweep.parameters",
        )
    samples = data.get("samples", 0 if design == "grid" else None)
    if design == "random":
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ConfigError(
                f"a random design needs 'samples' >= 1, got {samples!r}",
                file=file,
                param="sweep.samples",
            )
    elif "samples" in data:
        raise ConfigError(
            "'samples' applies to the random design only", file=file, param="sweep.samples"
        )
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ConfigError(
            f"sweep seed must be an integer >= 0, got {seed!r}", file=file, param="sweep.seed"
        )
    out = []
    for path, spec in params.items():
        where = f"sweep.parameters.{path}"
        if not isinstance(path, str) or not path or path.split(".")[0] in ("sweep", "replicas"):
            raise ConfigError(f"cannot sweep {path!r}", file=file, param=where)
        out.append(_parameter(str(path), spec, design, file, where, units))
    sweep = Sweep(design, tuple(out), int(samples or 0), seed)
    if design == "grid" and any(not p.values for p in sweep.parameters):
        raise ConfigError("a grid parameter needs at least one value", file=file, param="sweep")
    return sweep


def _unknown(kind: str, name: str, known: Any, file: str | None, where: str) -> ConfigError:
    close = suggest(name, [str(k) for k in known])
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(
        f"unknown {kind} {name!r}{hint} (known: {', '.join(sorted(map(str, known)))})",
        file=file,
        param=where,
    )


def _num(spec: Mapping[str, Any], key: str, file: str | None, where: str) -> float:
    v = spec.get(key)
    if not _is_number(v) or not math.isfinite(float(v)):
        raise ConfigError(f"{key!r} must be a finite number, got {v!r}", file=file, param=where)
    return float(v)


def _parameter(
    path: str, spec: Any, design: str, file: str | None, where: str, units: Any
) -> Parameter:
    if isinstance(spec, list):
        spec = {"values": spec}
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"expected a mapping (values: [...], or distribution: ...), got {spec!r}",
            file=file,
            param=where,
        )
    unit = spec.get("unit")
    if unit is not None and not isinstance(unit, str):
        raise ConfigError(f"unit must be a string, got {unit!r}", file=file, param=where)
    declared = units(path) if (units is not None and unit is not None) else None

    def conv(v: Any) -> Any:
        return convert_unit(v, unit, declared, where) if unit is not None else v

    if "distribution" in spec:
        if design != "random":
            raise ConfigError(
                "a distribution needs 'design: random' (grids take values or start/stop)",
                file=file,
                param=where,
            )
        dist = spec["distribution"]
        if dist not in DISTRIBUTIONS:
            raise _unknown("distribution", str(dist), DISTRIBUTIONS, file, f"{where}.distribution")
        need = DISTRIBUTIONS[dist]
        extra = set(spec) - {"distribution", "unit", *need}
        if extra:
            raise _unknown(f"{dist} argument", sorted(extra)[0], need, file, where)
        args: dict[str, Any] = {}
        if dist == "choice":
            vals = spec.get("values")
            if not isinstance(vals, list) or not vals:
                raise ConfigError("choice needs a non-empty 'values' list", file=file, param=where)
            args["values"] = conv(list(vals))
        else:
            for k in need:
                if k not in spec:
                    raise ConfigError(f"{dist} needs {k!r}", file=file, param=where)
                args[k] = _num(spec, k, file, where)
            if dist in ("uniform", "loguniform", "integers") and args["high"] < args["low"]:
                raise ConfigError("'high' must be >= 'low'", file=file, param=where)
            if dist == "loguniform" and args["low"] <= 0:
                raise ConfigError("loguniform needs 'low' > 0", file=file, param=where)
            if dist in ("normal", "lognormal") and args[need[1]] < 0:
                raise ConfigError(f"{need[1]!r} must be >= 0", file=file, param=where)
            if dist in ("uniform", "loguniform", "normal") and unit is not None:
                for k in ("low", "high", "mean", "std"):
                    if k in args:
                        args[k] = conv(args[k])
        return Parameter(path, None, str(dist), args, unit)
    extra = set(spec) - _GRID_KEYS
    if extra:
        raise _unknown(
            "sweep parameter key", sorted(extra)[0], _GRID_KEYS | {"distribution"}, file, where
        )
    if "values" in spec:
        vals = spec["values"]
        if not isinstance(vals, list) or not vals:
            raise ConfigError("'values' must be a non-empty list", file=file, param=where)
        return Parameter(path, conv(list(vals)), None, {}, unit)
    if "start" in spec and "stop" in spec:
        a, b = _num(spec, "start", file, where), _num(spec, "stop", file, where)
        if "num" in spec:
            n = spec["num"]
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ConfigError(
                    f"'num' must be an integer >= 1, got {n!r}", file=file, param=where
                )
            vals = [float(v) for v in np.linspace(a, b, n)]
        elif "step" in spec:
            s = _num(spec, "step", file, where)
            if s <= 0 or (b - a) / s > 1e6:
                raise ConfigError(
                    "'step' must be > 0 and give at most 1e6 values", file=file, param=where
                )
            k = int(math.floor((b - a) / s + 1e-9))
            vals = [a + i * s for i in range(k + 1)]
        else:
            raise ConfigError("start/stop needs 'num' or 'step'", file=file, param=where)
        if not vals:
            raise ConfigError("the range is empty (stop < start)", file=file, param=where)
        return Parameter(path, conv(vals), None, {}, unit)
    raise ConfigError(
        "give 'values: [...]', 'start'/'stop' with 'num' or 'step', or a 'distribution'",
        file=file,
        param=where,
    )
