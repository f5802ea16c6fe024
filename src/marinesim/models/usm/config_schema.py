"""The uSimMarine parameter schema: :class:`UsmConfig` (the resolved parameters) and the
table of every parameter with its type, default, variant and meaning (single source for the
parser, ``--example`` and ``check``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from marinesim.models.usm.thrustmap import (
    ThrustMap,
)

Compat = Literal["doc", "moos"]
Variant = Literal["usm", "usm_v22"]


@dataclass(frozen=True)
class UsmConfig:
    """Effective parameters of one uSimMarine vehicle block (spec usimmarine.md §5.2, §12).

    Every field has the program's default.  ``thrust_map`` is None until configured (the
    model then uses an empty map with ``thrust_factor`` 20 and no reflect).
    """

    variant: Variant = "usm"
    compat: Compat = "doc"
    # start state
    start_x: float = 0.0  # m, local east (UTM grid)
    start_y: float = 0.0  # m, local north (UTM grid)
    start_heading: float = 0.0  # deg, not wrapped
    start_speed: float = 0.0  # m/s
    start_depth: float = 0.0  # m, >= 0
    # dynamics
    buoyancy_rate: float = 0.025  # m/s, positive floats up
    max_acceleration: float = 0.0  # m/s^2, 0 = unlimited
    max_deceleration: float = 0.5  # m/s^2, 0 = unlimited
    max_depth_rate: float = 0.5  # m/s
    max_depth_rate_speed: float = 2.0  # m/s
    turn_rate: float = 70.0  # percent-ish, clipped to [0, 100]
    rotate_speed: float = 0.0  # deg/s
    turn_loss: float = 0.85  # fraction of speed lost at full rudder (V22: turn_spd_loss)
    max_rudder_degs_per_sec: float = 0.0  # %/s of rudder, 0 = off
    # drift and environment
    drift_x: float = 0.0  # m/s east
    drift_y: float = 0.0  # m/s north
    default_water_depth: float = 0.0  # m, 0 = unknown
    current_field: Any = None  # a marinesim.environment.current.CurrentField (or None)
    current_field_active: bool = True
    # thrust map
    thrust_map: ThrustMap | None = None
    # app
    dual_state: bool = False
    sim_pause: bool = False
    prefix: str = "USM"
    trim_tolerance: float = 5.0  # deg
    max_trim_delay: float = 10.0  # s
    app_tick: float | None = None  # Hz, from the .moos block (the step is 1/AppTick)
    lat_origin: float | None = None  # deg, global LatOrigin (None = no datum)
    long_origin: float | None = None  # deg, global LongOrigin (None = no datum)
    time_warp: float = 1.0  # global MOOSTimeWarp (pacing only, never dt)
    # V22 only
    turn_spd_map_full_speed: float = 5.0  # m/s (forced to 5 by the program every step)
    turn_spd_map_null_speed: float = 0.0  # m/s
    turn_spd_map_full_rate: float = 100.0  # percent
    turn_spd_map_null_rate: float = 0.0  # percent
    turn_radius: float = -1.0  # m, <= 0 = off
    max_speed: float = 5.0  # m/s, clamp of the published speed
    thrust_mode_diff: bool = False
    thrust_mode_reverse: bool = False
    extras: dict[str, str] = field(default_factory=dict)  # accepted but unmodelled keys
    origins: dict[str, int] = field(default_factory=dict)  # field -> config line that set it


# ---------------------------------------------------------------------------------------
# The parameter schema (single source for the parser, --example and `check`)
# ---------------------------------------------------------------------------------------

_BOTH: tuple[Variant, ...] = ("usm", "usm_v22")
_USM: tuple[Variant, ...] = ("usm",)
_V22: tuple[Variant, ...] = ("usm_v22",)
_SAME = object()


@dataclass(frozen=True)
class Param:
    """One configuration parameter of the ``uSimMarine`` / ``uSimMarineV22`` block.

    Attributes
    ----------
    name : str
        Key as written in the documentation (lower case).
    kind : str
        ``number``, ``bool``, ``string``, ``thrust_map``, ``drift_vector``, ``start_pos``,
        ``path``, ``app`` (MOOS/AppCasting key, kept in ``extras``) or ``unsupported``.
    default : Any
        The program's default (None = not set).
    unit : str
        Unit of the value ("" when dimensionless or text).
    description : str
        One line for ``--example`` and ``check``.
    variants : tuple of str
        Variants that know the key.
    doc_default : Any
        Default stated by the documentation's parameter list when it differs (§5.2).
    field : str or None
        :class:`UsmConfig` field set by the key.
    program : bool
        False when the real program does not handle the key (doc-only parameters).
    minimum, maximum : float or None
        Valid range of a number (documented mode: outside → ConfigError).
    example : str or None
        Value shown by ``--example`` (None: the default; "" : commented out).
    """

    name: str
    kind: str
    default: Any
    unit: str
    description: str
    variants: tuple[Variant, ...] = _BOTH
    doc_default: Any = _SAME
    field: str | None = None
    program: bool = True
    minimum: float | None = None
    maximum: float | None = None
    example: str | None = None


def _p(name: str, kind: str, default: Any, unit: str, description: str, **kw: Any) -> Param:
    if "field" not in kw and kind not in ("app", "unsupported", "start_pos", "drift_vector"):
        kw["field"] = name
    return Param(name, kind, default, unit, description, **kw)


#: The parameter table (spec §5.2 and §12).
PARAMS: tuple[Param, ...] = (
    _p("start_x", "number", 0.0, "m", "initial x (UTM-grid east of the datum)"),
    _p("start_y", "number", 0.0, "m", "initial y (UTM-grid north of the datum)"),
    _p("start_heading", "number", 0.0, "deg", "initial heading (not wrapped until the first step)"),
    _p("start_speed", "number", 0.0, "m/s", "initial speed (may be negative)"),
    _p("start_depth", "number", 0.0, "m", "initial depth (>= 0)", minimum=0.0),
    _p(
        "start_pos",
        "start_pos",
        None,
        "",
        "x=, y=, heading=, speed=, depth= in one line",
        example="x=0, y=0, speed=0, heading=0, depth=0",
    ),
    _p(
        "buoyancy_rate",
        "number",
        0.025,
        "m/s",
        "float-up rate at speed <= 0 (positive floats)",
        doc_default=0.0,
    ),
    _p(
        "max_acceleration",
        "number",
        0.0,
        "m/s^2",
        "acceleration limit, 0 = none (effective half)",
        doc_default=0.5,
        minimum=0.0,
    ),
    _p(
        "max_deceleration",
        "number",
        0.5,
        "m/s^2",
        "deceleration limit, 0 = none (effective half)",
        minimum=0.0,
    ),
    _p(
        "max_depth_rate",
        "number",
        0.5,
        "m/s",
        "depth rate at full elevator (accumulates per step)",
        minimum=0.0,
    ),
    _p(
        "max_depth_rate_speed",
        "number",
        2.0,
        "m/s",
        "speed at which max_depth_rate is reached",
        doc_default=2.5,
    ),
    _p(
        "turn_rate",
        "number",
        70.0,
        "%",
        "turn rate at full rudder and thrust 50 [deg/s], 0..100",
        minimum=0.0,
        maximum=100.0,
    ),
    _p("rotate_speed", "number", 0.0, "deg/s", "external rotation added every step (any sign)"),
    _p("drift_x", "number", 0.0, "m/s", "external drift east"),
    _p("drift_y", "number", 0.0, "m/s", "external drift north"),
    _p(
        "drift_vector",
        "drift_vector",
        None,
        "deg,m/s",
        "external drift as 'heading,magnitude'",
        example="0,0",
    ),
    _p(
        "default_water_depth",
        "number",
        0.0,
        "m",
        "water depth for the altitude, 0 = unknown",
        minimum=0.0,
    ),
    _p(
        "thrust_map",
        "thrust_map",
        None,
        "%:m/s",
        "thrust:speed pairs (spec §4)",
        example="0:0, 20:1, 40:2, 60:3, 80:5, 100:5",
    ),
    _p(
        "thrust_factor",
        "number",
        20.0,
        "%/(m/s)",
        "speed = thrust/factor without positive pairs",
        minimum=0.0,
    ),
    _p("thrust_reflect", "bool", False, "", "mirror positive pairs for negative thrust"),
    _p(
        "max_rudder_degs_per_sec",
        "number",
        0.0,
        "%/s",
        "rudder slew limit per message, 0 = off",
        minimum=0.0,
    ),
    _p("dual_state", "bool", False, "", "keep a NAV record without drift and a GT record with it"),
    _p("sim_pause", "bool", False, "", "start paused"),
    _p("prefix", "string", "USM", "", "prefix of the published variables (missions use NAV)"),
    _p("trim_tolerance", "number", 5.0, "deg", "pitch tolerance of the TRIM_CONTROL handshake"),
    _p("max_trim_delay", "number", 10.0, "s", "longest TRIM_CONTROL handshake"),
    _p(
        "turn_loss",
        "number",
        0.85,
        "",
        "speed fraction lost at full rudder, 0..1 (documented)",
        variants=_USM,
        program=False,
        minimum=0.0,
        maximum=1.0,
    ),
    _p(
        "current_field",
        "path",
        None,
        "",
        "current-field file (.cfd), relative to this file",
        program=False,
        example="",
    ),
    _p(
        "current_field_active",
        "bool",
        True,
        "",
        "use the configured current field",
        program=False,
        example="",
    ),
    # --- uSimMarineV22 only (§12) ---
    _p(
        "turn_spd_loss",
        "number",
        0.85,
        "",
        "speed fraction lost at full rudder, 0..1",
        variants=_V22,
        field="turn_loss",
        minimum=0.0,
        maximum=1.0,
    ),
    _p(
        "turn_spd_map_full_speed",
        "number",
        5.0,
        "m/s",
        "TurnSpeedMap full speed (forced to 5)",
        variants=_V22,
        minimum=0.0,
    ),
    _p(
        "turn_spd_map_null_speed",
        "number",
        0.0,
        "m/s",
        "TurnSpeedMap null speed",
        variants=_V22,
        minimum=0.0,
    ),
    _p(
        "turn_spd_map_full_rate",
        "number",
        100.0,
        "%",
        "TurnSpeedMap full rate",
        variants=_V22,
        minimum=0.0,
    ),
    _p(
        "turn_spd_map_null_rate",
        "number",
        0.0,
        "%",
        "TurnSpeedMap null rate",
        variants=_V22,
        minimum=0.0,
    ),
    _p("turn_radius", "number", -1.0, "m", "turn-radius clamp, <= 0 = off", variants=_V22),
    _p(
        "max_speed",
        "number",
        5.0,
        "m/s",
        "clamp of the published speed",
        variants=_V22,
        minimum=0.0,
    ),
    _p("thrust_mode_diff", "bool", False, "", "start in differential thrust mode", variants=_V22),
    _p("thrust_mode_reverse", "bool", False, "", "start in reverse thrust mode", variants=_V22),
    _p(
        "post_des_thrust",
        "app",
        None,
        "",
        "extra variable for the PID's thrust",
        variants=_V22,
        example="",
    ),
    _p(
        "post_des_rudder",
        "app",
        None,
        "",
        "extra variable for the PID's rudder",
        variants=_V22,
        example="",
    ),
    _p(
        "post_navpos_summary", "app", None, "", "post USM_NAVPOS_SUMMARY", variants=_V22, example=""
    ),
    _p(
        "wormhole",
        "unsupported",
        None,
        "",
        "wormhole teleport (not supported yet)",
        variants=_V22,
        example="",
    ),
    _p(
        "wind_conditions",
        "unsupported",
        None,
        "",
        "sailing wind (not supported yet)",
        variants=_V22,
        example="",
    ),
    _p(
        "polar_plot",
        "unsupported",
        None,
        "",
        "sailing polar plot (not supported yet)",
        variants=_V22,
        example="",
    ),
    # --- MOOS / AppCasting keys (known in both modes; only AppTick has an effect) ---
    _p(
        "apptick",
        "number",
        None,
        "Hz",
        "iterations per second; the step is 1/AppTick",
        field="app_tick",
        example="10",
    ),
    _p("commstick", "app", None, "Hz", "MOOS comms rate (no effect)", example="10"),
    _p("maxapptick", "app", None, "Hz", "MOOS (no effect)", example=""),
    _p("iteratemode", "app", None, "", "MOOS (no effect)", example=""),
    _p("app_logging", "app", None, "", "AppCasting (no effect)", example=""),
    _p(
        "deprecated_ok",
        "app",
        None,
        "",
        "silence the deprecation notice (no effect)",
        example="",
    ),
    _p("term_reporting", "app", None, "", "AppCasting (no effect)", example=""),
    _p("max_appcast_events", "app", None, "", "AppCasting (no effect)", example=""),
    _p("max_appcast_run_warnings", "app", None, "", "AppCasting (no effect)", example=""),
)

_BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}

#: Deprecated keys of uSimMarine (§5.1), mapped with a warning (``usm`` only).
DEPRECATED: dict[str, str] = {
    "force_x": "drift_x",
    "force_y": "drift_y",
    "startheading": "start_heading",
    "startdepth": "start_depth",
    "startspeed": "start_speed",
    "force_theta": "rotate_speed",
    "force_vector": "drift_vector",
}

#: Prefixes/names of uSimMarineV22's embedded PID keys (not supported yet).
_V22_PID_PREFIXES = ("yaw_pid_", "speed_pid_", "z_to_pitch_pid_", "pitch_pid_", "depth_pid_")
_V22_PID_NAMES = frozenset(
    {
        "maxrudder",
        "maxthrust",
        "maxpitch",
        "maxelevator",
        "depth_control",
        "speed_factor",
        "sim_instability",
        "active_start",
        "tardy_helm_threshold",
        "tardy_nav_threshold",
    }
)

_TRUE_FALSE = ("true", "false")


def _known_names(variant: Variant) -> list[str]:
    return [p.name for p in PARAMS if variant in p.variants]
