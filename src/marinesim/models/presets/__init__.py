"""Vehicle presets: parameter sets with their sources and [unverified] flags.

Each preset is a YAML file shipped in this package (read through :mod:`importlib.resources`):
``name``, ``description``, ``source``, ``model`` (``fossen6dof`` or ``pvs``),
``reference_density``, ``reference_gravity``, optional ``flags`` / ``unverified``, and either
``params`` (:class:`marinesim.models.sixdof.fossen6dof.Params`) or ``constructor`` (a
PythonVehicleSimulator constructor, :mod:`marinesim.models.sixdof.pvs`).  Thruster and fin geometry
are data for the actuator and allocation layers.

>>> from marinesim.models import presets
>>> presets.names()[:2]
['bluerov2_heavy_vonbenzon2022', 'bluerov2_heavy_wu2018']
>>> model = presets.build("lauv")          # a built fossen6dof model
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from marinesim.core.errors import ConfigError, DataError, UnknownNameError

__all__ = ["Preset", "build", "get", "names"]


@dataclass(frozen=True)
class Preset:
    """One vehicle parameter set as shipped (values in marinesim conventions)."""

    name: str
    description: str
    source: str
    model: str
    data: dict[str, Any] = field(repr=False)

    @property
    def unverified(self) -> bool:
        """True when the preset carries the [unverified] flag."""
        return bool(self.data.get("unverified", False))

    @property
    def flags(self) -> dict[str, Any]:
        """Per-value notes and flags."""
        return dict(self.data.get("flags") or {})

    @property
    def params(self) -> dict[str, Any]:
        """Model parameters (fossen6dof presets) or {} (pvs presets)."""
        return dict(self.data.get("params") or {})


@lru_cache(maxsize=1)
def _index() -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    aliases: dict[str, str] = {}
    root = resources.files(__name__)
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        try:
            data = yaml.safe_load(entry.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise DataError(f"malformed preset: {exc}", file=entry.name) from None
        for key in ("name", "description", "source", "model"):
            if key not in (data or {}):
                raise DataError(f"preset lacks {key!r}", file=entry.name, param=key)
        p = Preset(
            data["name"],
            data["description"],
            " ".join(str(data["source"]).split()),
            data["model"],
            data,
        )
        out[p.name] = p
        for a in data.get("aliases") or ():
            aliases[a] = p.name
    for a, target in aliases.items():
        out.setdefault(a, out[target])
    return out


def names(*, include_aliases: bool = False) -> list[str]:
    """Sorted preset names (aliases only if asked; an alias that differs from its preset's name
    only in letter case, such as ``DSRV``, is never listed: lookups ignore case)."""
    idx = _index()
    canon = {p.name.lower() for p in idx.values()}
    return sorted(
        k
        for k, p in idx.items()
        if p.name == k or (include_aliases and k.lower() not in canon)
    )


def aliases_of(name: str) -> list[str]:
    """The other names of preset ``name`` that differ beyond letter case (``bluerov2_heavy``)."""
    idx = _index()
    target = get(name).name
    return sorted(
        k for k, p in idx.items() if p.name == target and k.lower() != target.lower()
    )


def get(name: str) -> Preset:
    """Return the preset ``name`` (aliases accepted; letter case ignored).

    Raises
    ------
    UnknownNameError
        With close matches (each preset once).
    """
    idx = _index()
    if name in idx:
        return idx[name]
    low = {k.lower(): p for k, p in idx.items()}
    if str(name).lower() in low:
        return low[str(name).lower()]
    raise UnknownNameError("vehicle preset", name, names(include_aliases=True))


def build(name: str, **overrides: Any) -> Any:
    """Build the model of a preset.

    Parameters
    ----------
    name : str
        Preset name.
    **overrides
        For ``fossen6dof`` presets: parameter values replacing the preset's
        (e.g. ``integrator="semi_implicit_euler"``); for ``pvs`` presets: keyword arguments of
        the PythonVehicleSimulator constructor (``control_system``, ``V_current`` ...).

    Returns
    -------
    marinesim.models.sixdof.fossen6dof.Fossen6Dof or marinesim.models.sixdof.pvs params
    """
    p = get(name)
    if p.model == "fossen6dof":
        from marinesim.models.sixdof import fossen6dof

        return fossen6dof.build({**p.params, **overrides})
    if p.model == "pvs":
        from marinesim.models.sixdof import pvs

        fn = {"remus100": pvs.remus100, "otter": pvs.otter}[p.name]
        return fn(**overrides)
    if p.model == "pvs_fleet":
        from marinesim.models.sixdof import fleet

        return fleet.build(str(p.data["vehicle"]), **overrides)
    raise ConfigError(f"preset {name!r} has unknown model {p.model!r}", param="model")
