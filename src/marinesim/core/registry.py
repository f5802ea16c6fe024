"""Registry of named implementations (motion models, plugins, actuator variants, ...).

Entries are ``"module:Attr"`` strings imported lazily on first use, so importing marinesim
costs nothing and the layers stay independent.  Third parties register through the
entry-point group ``marinesim.plugins`` (entry-point name ``"<kind>/<name>"``, value
``"module:Attr"``).  A failed lookup raises :class:`~marinesim.core.errors.UnknownNameError`
with close matches.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from marinesim.core.errors import ConfigError, UnknownNameError

__all__ = ["get", "known", "names", "register", "resolve"]

#: Built-in entries: (kind, name) -> "module:Attr".  Kinds are free strings; the plugin kinds
#: of the engine are "motion", "sensor", "controller", "autonomy", "interaction", "metric",
#: "network"; model families use e.g. "thruster_dynamics", "thrust_conversion", "lift_drag".
_BUILTIN: dict[tuple[str, str], str] = {
    # --- engine plugins (marinesim.engine.plugins) ---
    ("motion", "usm"): "marinesim.engine.plugins.usm:UsmMotion",
    ("motion", "usm_v22"): "marinesim.engine.plugins.usm:UsmV22Motion",
    ("controller", "heading_speed_depth_pid"): "marinesim.engine.plugins.pid:HeadingSpeedDepthPid",
    ("autonomy", "waypoints"): "marinesim.engine.plugins.waypoints:Waypoints",
    ("autonomy", "event_script"): "marinesim.engine.plugins.script:EventScript",
    ("scenario_loader", "yaml"): "marinesim.scenario.build:load_simulation",
    # --- actuator model families (issue: 6-DOF and actuators) ---
    ("model", "fossen6dof"): "marinesim.models.fossen6dof",
    ("model", "pvs"): "marinesim.models.pvs",
    ("thruster_dynamics", "zero_order"): "marinesim.actuators.thruster_dynamics:ZERO_ORDER",
    ("thruster_dynamics", "first_order"): "marinesim.actuators.thruster_dynamics:FIRST_ORDER",
    ("thruster_dynamics", "yoerger"): "marinesim.actuators.thruster_dynamics:YOERGER",
    ("thruster_dynamics", "bessa"): "marinesim.actuators.thruster_dynamics:BESSA",
    ("thrust_conversion", "basic"): "marinesim.actuators.thrust_conversion:BASIC",
    ("thrust_conversion", "dead_zone"): "marinesim.actuators.thrust_conversion:DEAD_ZONE",
    ("thrust_conversion", "linear_interp"): "marinesim.actuators.thrust_conversion:LINEAR_INTERP",
    ("lift_drag", "quadratic"): "marinesim.actuators.lift_drag:QUADRATIC",
    ("lift_drag", "two_lines"): "marinesim.actuators.lift_drag:TWO_LINES",
    # --- allocation (issue: thruster allocation) ---
    ("allocator", "pinv"): "marinesim.allocation.solve:allocate_pinv",
    ("allocator", "qp"): "marinesim.allocation.solve:allocate_qp",
    ("allocator", "direct"): "marinesim.allocation.solve:allocate_direct",
    ("allocator", "redistributed_pinv"): "marinesim.allocation.solve:allocate_redistributed",
    ("allocator", "ardusub"): "marinesim.allocation.ardusub:mix",
    ("layout", "bluerov2_heavy"): "marinesim.allocation.vehicles:bluerov2_heavy",
    ("layout", "bluerov2_heavy_wu2018"): "marinesim.allocation.vehicles:bluerov2_heavy_wu2018",
    ("layout", "bluerov2_heavy_hippo"): "marinesim.allocation.vehicles:bluerov2_heavy_hippo",
    ("layout", "mrobosub"): "marinesim.allocation.vehicles:mrobosub",
    ("layout", "rexrov"): "marinesim.allocation.vehicles:rexrov",
    # --- 6-DOF and allocation in the loop (issue 3 §5, issue 4 §4) ---
    ("motion", "fossen6dof"): "marinesim.engine.plugins.sixdof:SixDofMotion",
    ("controller", "station_keeping_pid"): "marinesim.engine.plugins.wrench:StationKeepingPid",
    (
        "controller",
        "depth_heading_autopilot",
    ): "marinesim.engine.plugins.wrench:DepthHeadingAutopilot",
    ("controller", "thruster_allocator"): "marinesim.engine.plugins.wrench:ThrusterAllocator",
    ("model", "battery"): "marinesim.models.battery",
    # --- control / sensors (issue: SURFTRAK) ---
    ("controller", "surftrak"): "marinesim.engine.plugins.surftrak:SurftrakController",
    ("sensor", "rangefinder"): "marinesim.engine.plugins.rangefinder:RangefinderSensor",
    ("motion", "sitl_vertical"): "marinesim.engine.plugins.surftrak:SitlVerticalMotion",
    # --- sensors / estimation / metrics (issue: truth vs belief) ---
    ("sensor", "gps"): "marinesim.engine.plugins.sensors:GpsSensor",
    ("sensor", "depth_sensor"): "marinesim.engine.plugins.sensors:DepthSensor",
    ("sensor", "imu"): "marinesim.engine.plugins.sensors:ImuSensor",
    ("sensor", "ahrs"): "marinesim.engine.plugins.sensors:AhrsSensor",
    ("sensor", "dvl"): "marinesim.engine.plugins.sensors:DvlSensor",
    ("sensor", "noisy_state"): "marinesim.engine.plugins.sensors:NoisyStateSensor",
    ("sensor", "simple_ins"): "marinesim.engine.plugins.sensors:SimpleInsSensor",
    ("sensor", "nav_ekf"): "marinesim.engine.plugins.sensors:NavEkfEstimator",
    ("sensor", "contacts"): "marinesim.engine.plugins.sensors:ContactSensor",
    ("metric", "distance_travelled"): "marinesim.engine.plugins.metrics:DistanceTravelled",
    ("metric", "energy"): "marinesim.engine.plugins.metrics:Energy",
    ("metric", "min_separation"): "marinesim.engine.plugins.metrics:MinSeparation",
    ("metric", "time_in_box"): "marinesim.engine.plugins.metrics:TimeInBox",
    ("metric", "nav_error"): "marinesim.engine.plugins.metrics:NavError",
}

_LOADED: dict[tuple[str, str], Any] = {}
_ENTRY_POINTS_READ = False


def register(kind: str, name: str, target: str | Any, *, replace: bool = False) -> None:
    """Register ``target`` (an object or a ``"module:Attr"`` string) as ``name`` of ``kind``.

    Raises
    ------
    ConfigError
        If the name is already registered for that kind and ``replace`` is false.
    """
    _read_entry_points()
    key = (kind, name)
    if not replace and (key in _BUILTIN or key in _LOADED):
        raise ConfigError(f"duplicate {kind} name {name!r}: it is already registered")
    if isinstance(target, str):
        _BUILTIN[key] = target
        _LOADED.pop(key, None)
    else:
        _BUILTIN.pop(key, None)
        _LOADED[key] = target


def _read_entry_points() -> None:
    global _ENTRY_POINTS_READ
    if _ENTRY_POINTS_READ:
        return
    _ENTRY_POINTS_READ = True
    try:
        eps = metadata.entry_points(group="marinesim.plugins")
    except Exception:  # pragma: no cover - broken metadata of another package
        return
    for ep in eps:
        if "/" not in ep.name:
            continue
        kind, name = ep.name.split("/", 1)
        key = (kind, name)
        if key in _BUILTIN or key in _LOADED:
            raise ConfigError(
                f"entry point {ep.name!r} of {ep.value!r} duplicates an existing {kind} name"
            )
        _BUILTIN[key] = ep.value


def resolve(target: str) -> Any:
    """Import ``"package.module:Attr"`` and return the attribute."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


def names(kind: str) -> list[str]:
    """Sorted registered names of one kind."""
    _read_entry_points()
    return sorted({n for (k, n) in list(_BUILTIN) + list(_LOADED) if k == kind})


def known() -> dict[str, list[str]]:
    """All kinds and their names."""
    _read_entry_points()
    kinds = sorted({k for (k, _) in list(_BUILTIN) + list(_LOADED)})
    return {k: names(k) for k in kinds}


def get(kind: str, name: str, *, label: str | None = None) -> Any:
    """Return the implementation registered as ``name`` of ``kind`` (imported on first use).

    Parameters
    ----------
    kind : str
        Registry kind, e.g. ``"motion"``.
    name : str
        Registered name, e.g. ``"usm"``.
    label : str, optional
        How to call the kind in an error (default: ``kind`` with underscores as blanks,
        e.g. ``"motion model"`` can be passed for motion).

    Raises
    ------
    UnknownNameError
        With did-you-mean suggestions and the list of known names.
    """
    _read_entry_points()
    key = (kind, name)
    if key in _LOADED:
        return _LOADED[key]
    if key not in _BUILTIN:
        raise UnknownNameError(label or kind.replace("_", " "), name, names(kind))
    obj = resolve(_BUILTIN[key])
    _LOADED[key] = obj
    return obj
