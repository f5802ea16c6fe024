"""Effective configuration of the uSimMarine model (``usm`` and ``usm_v22``).

:class:`UsmConfig` holds the values the model runs with after the configuration lines have
been applied by :func:`configure` in either mode (``compat="doc"``, the documented behaviour;
``compat="moos"``, the real program's parsing; spec usimmarine.md §5, §10, §12).  Units: m,
m/s, m/s², deg, deg/s, percent, s.

API
---
``configure(lines, *, variant="usm", compat="doc", file=None, globals=None, base_dir=None,
load_current_field=None) -> (UsmConfig, list[ConfigWarning])``
    ``lines``: ``(key, value, line)`` or ``(key, value)`` tuples or ``"key = value"`` strings,
    in file order, as written.  Warnings include every parameter whose effective value would
    differ in the other mode (§10.3).
``config_from_mapping(mapping, *, variant="usm", compat="doc", file=None, marks=None, ...)``
    The same rules for a YAML ``params:`` mapping (``compat``/``variant`` keys allowed).
``PARAMS``
    The single parameter schema (name, kind, default, unit, description, variants, doc
    default) from which the parser, :func:`example_block` and :func:`effective_rows` derive.

This module is pure (layer L1): it never opens files.  A ``current_field`` value is handed to
the ``load_current_field(path, file=, line=)`` callable supplied by the caller
(:func:`marinesim.interop.moos.files.load_current_field`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from marinesim.core.errors import ConfigError, ConfigWarning, suggest
from marinesim.models.thrustmap import (
    ThrustMap,
    format_number_x,
    is_moos_number,
    moos_atof,
    parse_number,
)

__all__ = [
    "PARAMS",
    "Param",
    "UsmConfig",
    "config_from_mapping",
    "configure",
    "drift_from_vector",
    "effective_rows",
    "example_block",
    "parse_start_pos",
    "split_config_line",
]

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
        "max_depth_rate", "number", 0.5, "m/s", "depth rate at full elevator (accumulates per step)"
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


# ---------------------------------------------------------------------------------------
# Small program-exact helpers
# ---------------------------------------------------------------------------------------


def split_config_line(text: str) -> tuple[str, str] | None:
    """Apply MOOS's line rules to ``"key = value // comment"`` (§5.1).

    Comments (``//``) are removed, then every blank, tab and CR is deleted; the line is split at
    the first '='.

    Returns
    -------
    (key, value) or None
        None when the line has no '=' or an empty key or value (MOOS drops it).
    """
    if "//" in text:
        text = text[: text.index("//")]
    text = text.replace(" ", "").replace("\t", "").replace("\r", "")
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        return None
    return key, value


def _angle360(a: float) -> float:
    if not math.isfinite(a):
        return a
    if abs(a) > 1e6:
        a = math.fmod(a, 360.0)
    while a < 0.0:
        a += 360.0
    while a >= 360.0:
        a -= 360.0
    return a


def drift_from_vector(ang: float, mag: float) -> tuple[float, float]:
    """Drift components (east, north) [m/s] of a compass angle [deg] and magnitude [m/s].

    The program's arithmetic (§3.10): angle360, θ = ((90 − ang)·π)/180 wrapped once into
    [−π, π], then (cos θ·mag, sin θ·mag).  A negative magnitude flips the direction.
    """
    a = _angle360(ang)
    theta = ((90.0 - a) * math.pi) / 180.0
    if theta > math.pi:
        theta -= 2.0 * math.pi
    elif theta < -math.pi:
        theta += 2.0 * math.pi
    return math.cos(theta) * mag, math.sin(theta) * mag


_START_KEYS = {
    "x": "start_x",
    "y": "start_y",
    "heading": "start_heading",
    "deg": "start_heading",
    "hdg": "start_heading",
    "speed": "start_speed",
    "spd": "start_speed",
    "depth": "start_depth",
    "dep": "start_depth",
}
_START_POSITIONAL = ("start_x", "start_y", "start_heading", "start_speed", "start_depth")


def parse_start_pos(value: str, compat: Compat = "moos") -> tuple[dict[str, float], str | None]:
    """Parse a ``start_pos`` / ``USM_RESET`` value (§3.12).

    Parameters
    ----------
    value : str
        Comma-separated ``key=value`` items (or bare values taken by position).
    compat : {"doc", "moos"}
        ``"moos"``: values read with ``atof`` (junk → 0); ``"doc"``: a value that is not a
        number is a problem.

    Returns
    -------
    (dict, str or None)
        The fields applied (``start_x`` …) before the first problem, and the problem (None
        when the whole value was read).
    """
    out: dict[str, float] = {}
    for i, raw in enumerate(value.split(",")):
        item = raw.strip().lower()
        key, sep, val = item.partition("=")
        if not sep:
            val = key
            name = _START_POSITIONAL[i] if i < len(_START_POSITIONAL) else None
            if name is None:
                return out, f"item {raw.strip()!r} has no key and position {i + 1} has none"
        else:
            name = _START_KEYS.get(key.strip())
            if name is None:
                return out, f"unknown key {key.strip()!r} in item {raw.strip()!r}"
        if compat == "doc":
            num = parse_number(val, "doc")
            if num is None:
                return out, f"value {val.strip()!r} of item {raw.strip()!r} is not a number"
        else:
            num = moos_atof(val.strip())
        out[name] = num
    return out, None


def _bool_value(text: str) -> bool | None:
    low = text.strip().lower()
    if low in _TRUE_FALSE:
        return low == "true"
    return None


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_number_x(value, 6)
    if isinstance(value, ThrustMap):
        text = value.to_text() or "(empty)"
        extra = f"; factor {format_number_x(value.thrust_factor)}"
        if value.reflect:
            extra += "; reflect"
        return text + extra
    name = getattr(value, "name", None)
    if name is not None and hasattr(value, "radius"):
        return f"field {name!r} ({len(value)} vectors, radius {format_number_x(value.radius)} m)"
    return str(value)


# ---------------------------------------------------------------------------------------
# One evaluation of the lines under one rule set
# ---------------------------------------------------------------------------------------


@dataclass
class _Line:
    key: str  # as written (blanks deleted)
    value: str  # blanks deleted
    line: int | None
    raw_value: str  # value as written (for YAML-like strict checks)


LoadCurrentField = Callable[..., Any]


class _Eval:
    """Applies the lines under one rule set, collecting values, warnings and errors."""

    def __init__(
        self,
        variant: Variant,
        compat: Compat,
        file: str | None,
        base_dir: Path | None,
        loader: LoadCurrentField | None,
        primary: bool,
    ) -> None:
        self.variant = variant
        self.compat = compat
        self.file = file
        self.base_dir = base_dir
        self.loader = loader
        self.primary = primary
        self.values: dict[str, Any] = {}
        self.origins: dict[str, int | None] = {}
        self.extras: dict[str, str] = {}
        self.tm = ThrustMap(20.0, False)
        self.tm_lines = 0
        self.warnings: list[ConfigWarning] = []
        self.errors: list[ConfigError] = []
        self.noted: set[str] = set()
        self.counts: dict[str, int] = {}

    # -- reporting
    def warn(self, msg: str, ln: _Line, param: str) -> None:
        self.warnings.append(ConfigWarning(msg, file=self.file, line=ln.line, param=param))

    def invalid(self, msg: str, ln: _Line, param: str, moos_action: str) -> None:
        """A known parameter with an invalid value: doc → error, moos → program + warning."""
        p = _BY_NAME.get(param)
        self.noted.add(p.field if p is not None and p.field else param)
        if self.compat == "doc":
            self.errors.append(ConfigError(msg, file=self.file, line=ln.line, param=param))
        else:
            self.warn(f"{msg}; {moos_action}", ln, param)

    def set(self, name: str, value: Any, ln: _Line) -> None:
        self.values[name] = value
        self.origins[name] = ln.line
        self.counts[name] = self.counts.get(name, 0) + 1

    # -- numbers
    def number(self, ln: _Line, p: Param) -> float | None:
        v = parse_number(ln.value, self.compat)
        doc_v = parse_number(ln.value, "doc")
        if doc_v is not None and not is_moos_number(ln.value):
            # row 6: an exponent (or another form the program rejects), warned in both modes
            self.noted.add(p.field or p.name)
            self.warn(
                f"value {ln.value!r} is written with an exponent: documented mode reads "
                f'{format_number_x(doc_v, 9)}, compat="moos" rejects the line as the program '
                "does (unhandled config line, the previous value stays)",
                ln,
                p.name,
            )
        if v is None:
            if self.compat == "doc":
                self.errors.append(
                    ConfigError(
                        f"expected a number, got {ln.value!r}",
                        file=self.file,
                        line=ln.line,
                        param=p.name,
                    )
                )
            elif doc_v is None:
                self.warn(
                    f"value {ln.value!r} is not a number: unhandled config line, "
                    "the previous value stays",
                    ln,
                    p.name,
                )
        return v

    # -- apply one line
    def apply(self, ln: _Line) -> None:
        key = ln.key.lower() if self.variant == "usm_v22" else ln.key.upper().lower()
        if self.variant == "usm" and key in DEPRECATED:
            new = DEPRECATED[key]
            self.warn(f"deprecated parameter {ln.key!r}: use {new!r}", ln, ln.key)
            key = new
        if self.variant == "usm_v22" and key == "turn_loss" and self.compat == "doc":
            key = "turn_spd_loss"  # documented name accepted as an alias in default mode
        if self.compat == "doc" and len(ln.value) >= 2 and ln.value[0] == ln.value[-1] == '"':
            # the documentation quotes some values (thrust_map = "..."); the program does not
            # strip quotes, so compat="moos" sees a malformed value (reported as a difference)
            ln = _Line(ln.key, ln.value[1:-1], ln.line, ln.raw_value)
        p = _BY_NAME.get(key)
        if p is None or self.variant not in p.variants:
            if self.variant == "usm_v22" and (
                key in _V22_PID_NAMES or key.startswith(_V22_PID_PREFIXES)
            ):
                self._unsupported(ln, key, "uSimMarineV22's embedded PID")
                return
            close = suggest(key, _known_names(self.variant))
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.noted.add("unknown:" + key)
            if self.compat == "doc":
                self.errors.append(
                    ConfigError(
                        f"unknown parameter {ln.key!r}{hint}",
                        file=self.file,
                        line=ln.line,
                        param=ln.key,
                    )
                )
            else:
                self.warn(
                    f"unknown parameter {ln.key!r} (unhandled config line, ignored){hint}",
                    ln,
                    ln.key,
                )
            return
        getattr(self, "_k_" + p.kind)(ln, p)

    def _unsupported(self, ln: _Line, key: str, what: str) -> None:
        msg = f"{what} ({key!r}) is not supported yet"
        if self.compat == "doc":
            self.errors.append(ConfigError(msg, file=self.file, line=ln.line, param=key))
        else:
            self.warn(msg + "; line ignored", ln, key)

    def _k_unsupported(self, ln: _Line, p: Param) -> None:
        self._unsupported(ln, p.name, "parameter")

    def _k_app(self, ln: _Line, p: Param) -> None:
        self.extras[p.name] = ln.value

    def _k_string(self, ln: _Line, p: Param) -> None:
        self.set(p.field or p.name, ln.value, ln)

    def _k_bool(self, ln: _Line, p: Param) -> None:
        b = _bool_value(ln.value)
        low = ln.value.strip().lower()
        if self.variant == "usm_v22":
            # uSimMarineV22's own vocabularies (both modes: they are its documented values)
            if p.name == "thrust_mode_diff" and low in ("differential", "normal"):
                b = low == "differential"
            elif p.name == "thrust_mode_reverse" and low in ("reverse", "normal"):
                b = low == "reverse"
            elif (
                b is None
                and self.compat == "moos"
                and p.name in ("sim_pause", "dual_state")
                and low in ("on", "yes", "off", "no")
            ):
                b = low in ("on", "yes")  # setBooleanOnString
        if not p.program:
            return self._doc_only(ln, p, b)
        if b is None:
            self.invalid(
                f"expected true or false, got {ln.value!r}",
                ln,
                p.name,
                "unhandled config line, the previous value stays",
            )
            return
        if p.name == "thrust_reflect":
            self.tm.set_reflect(b)
            self.origins["thrust_reflect"] = ln.line
            return
        self.set(p.field or p.name, b, ln)

    def _k_number(self, ln: _Line, p: Param) -> None:
        if self.variant == "usm_v22" and p.name == "turn_spd_loss" and self.compat == "moos":
            v: float | None = moos_atof(ln.value)  # the program reads it with atof
            if not is_moos_number(ln.value):
                self.warn(
                    f"value {ln.value!r} is read with atof as {format_number_x(v or 0.0, 9)} "
                    "by the program",
                    ln,
                    p.name,
                )
        else:
            v = self.number(ln, p)
        if v is None:
            return
        if not p.program:
            return self._doc_only(ln, p, v)
        name = p.field or p.name
        lo, hi = p.minimum, p.maximum
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"[{format_number_x(lo) if lo is not None else '-inf'}, " + (
                f"{format_number_x(hi)}]" if hi is not None else "inf)"
            )
            msg = f"value {format_number_x(v, 9)} is outside {rng}"
            if p.name in ("start_depth", "max_acceleration", "max_deceleration"):
                self.invalid(msg, ln, p.name, "the program uses 0")
                if self.compat == "moos":
                    self.set(name, 0.0, ln)
            elif p.name == "turn_rate":
                c = min(max(v, 0.0), 100.0)
                self.invalid(msg, ln, p.name, f"the program clips it to {format_number_x(c)}")
                if self.compat == "moos":
                    self.set(name, c, ln)
            else:
                action = "unhandled config line, the previous value stays"
                if p.name == "thrust_factor":
                    action = "the program ignores a negative factor"
                self.invalid(msg, ln, p.name, action)
            return
        if p.name == "thrust_factor":
            self.tm.set_thrust_factor(v)
            self.origins["thrust_factor"] = ln.line
            return
        self.set(name, v, ln)

    def _doc_only(self, ln: _Line, p: Param, v: Any) -> None:
        """turn_loss, current_field_active: honoured in doc, ignored by the program."""
        name = p.field or p.name
        if self.compat == "moos":
            same = p.name == "turn_loss" and v == 0.85
            if not same:
                self.noted.add(name)
                self.warn(
                    f"{p.name!r} is not a parameter of the program (unhandled config line): "
                    f'compat="moos" ignores it'
                    + (" and uses 0.85" if p.name == "turn_loss" else "")
                    + f"; documented mode uses {_fmt(v)}",
                    ln,
                    p.name,
                )
            return
        if v is None:
            self.errors.append(
                ConfigError(
                    f"expected true or false, got {ln.value!r}",
                    file=self.file,
                    line=ln.line,
                    param=p.name,
                )
            )
            return
        if (
            p.minimum is not None
            and isinstance(v, float)
            and not (p.minimum <= v <= (p.maximum if p.maximum is not None else math.inf))
        ):
            self.errors.append(
                ConfigError(
                    f"value {format_number_x(v, 9)} is outside [{format_number_x(p.minimum)}, "
                    f"{format_number_x(p.maximum or math.inf)}]",
                    file=self.file,
                    line=ln.line,
                    param=p.name,
                )
            )
            return
        if p.name == "turn_loss" and v != 0.85:
            self.noted.add(name)
            self.warn(
                f"turn_loss {format_number_x(v, 9)} is honoured in documented mode; the real "
                'program has no such parameter (0.85 is hard-coded) and compat="moos" '
                "ignores it",
                ln,
                p.name,
            )
        elif p.name == "current_field_active":
            self.noted.add(name)
            self.warn(
                "current_field_active is honoured in documented mode; the real program ignores "
                'it (compat="moos")',
                ln,
                p.name,
            )
        self.set(name, v, ln)

    def _k_path(self, ln: _Line, p: Param) -> None:
        self.noted.add("current_field")
        if self.compat == "moos":
            self.warn(
                "current_field is not implemented by the program (unhandled config line): "
                'compat="moos" ignores it; documented mode loads the field',
                ln,
                p.name,
            )
            return
        path = Path(ln.value)
        if not path.is_absolute() and self.base_dir is not None:
            path = Path(self.base_dir) / path
        self.warn(
            "current_field is honoured in documented mode; the real program ignores it "
            '(compat="moos")',
            ln,
            p.name,
        )
        if not self.primary:
            self.set("current_field", str(path), ln)
            return
        if self.loader is None:
            self.errors.append(
                ConfigError(
                    "current_field needs a file reader: load the configuration through "
                    "marinesim.interop.moos (or pass load_current_field=)",
                    file=self.file,
                    line=ln.line,
                    param=p.name,
                )
            )
            return
        try:
            loaded = self.loader(path, file=self.file, line=ln.line)
        except ConfigError as exc:
            self.errors.append(exc)
            return
        fld, warns = loaded if isinstance(loaded, tuple) else (loaded, [])
        self.warnings.extend(warns)
        self.set("current_field", fld, ln)

    def _k_drift_vector(self, ln: _Line, p: Param) -> None:
        ang_t, sep, mag_t = ln.value.partition(",")
        ang = parse_number(ang_t, self.compat) if sep else None
        mag = parse_number(mag_t, self.compat) if sep else None
        if ang is None or mag is None:
            doc_ok = sep and parse_number(ang_t, "doc") is not None
            doc_ok = doc_ok and parse_number(mag_t, "doc") is not None
            if doc_ok and self.compat == "moos":
                self.noted.add("drift_x")
                self.noted.add("drift_y")
                self.warn(
                    f"value {ln.value!r} uses an exponent: the program rejects the line "
                    "(unhandled), documented mode accepts it",
                    ln,
                    p.name,
                )
                return
            self.invalid(
                f"expected 'angle,magnitude' (two numbers), got {ln.value!r}",
                ln,
                p.name,
                "unhandled config line, the drift stays",
            )
            return
        dx, dy = drift_from_vector(ang, mag)
        self.set("drift_x", dx, ln)
        self.set("drift_y", dy, ln)

    def _k_start_pos(self, ln: _Line, p: Param) -> None:
        vals, problem = parse_start_pos(ln.value, self.compat)
        if problem is not None:
            if self.compat == "doc":
                self.errors.append(ConfigError(problem, file=self.file, line=ln.line, param=p.name))
                return
            self.noted.update(_START_POSITIONAL)
            self.warn(
                f"{problem}: the program keeps the items before it and reports the line "
                "as unhandled",
                ln,
                p.name,
            )
        for k, v in vals.items():
            self.set(k, v, ln)

    def _k_thrust_map(self, ln: _Line, p: Param) -> None:
        self.tm_lines += 1
        self.origins["thrust_map"] = ln.line
        try:
            warns = self.tm.add_text(ln.value, self.compat, file=self.file, line=ln.line)
        except ConfigError as exc:
            self.errors.append(exc)
            self.noted.add("thrust_map")
            return
        if warns:
            self.noted.add("thrust_map")
        self.warnings.extend(warns)


def _order(variant: Variant, compat: Compat, lines: list[_Line]) -> list[_Line]:
    if variant == "usm" and compat == "moos":
        return list(reversed(lines))
    return list(lines)


def _normalise(lines: Iterable[Any], file: str | None) -> list[_Line]:
    out: list[_Line] = []
    for i, item in enumerate(lines, start=1):
        if isinstance(item, str):
            text, lineno = item, i
        else:
            seq = tuple(item)
            if len(seq) == 3:
                key, value, lineno = seq
            elif len(seq) == 2:
                key, value = seq
                lineno = i
            else:
                raise ConfigError(
                    f"configuration item {item!r} is not (key, value[, line])", file=file
                )
            text = f"{key}={value}"
        split = split_config_line(str(text))
        if split is None:
            continue
        key, value = split
        raw = str(text).partition("=")[2].strip()
        out.append(_Line(key, value, int(lineno) if lineno is not None else None, raw))
    return out


def _evaluate(
    lines: list[_Line],
    variant: Variant,
    compat: Compat,
    file: str | None,
    base_dir: Path | None,
    loader: LoadCurrentField | None,
    primary: bool,
) -> _Eval:
    ev = _Eval(variant, compat, file, base_dir, loader, primary)
    for ln in _order(variant, compat, lines):
        ev.apply(ln)
    return ev


def _globals_values(
    gl: Mapping[str, Any] | None, file: str | None, compat: Compat
) -> tuple[dict[str, Any], list[ConfigWarning]]:
    out: dict[str, Any] = {}
    warns: list[ConfigWarning] = []
    if not gl:
        return out, warns
    low = {str(k).lower(): v for k, v in gl.items()}

    def num(name: str) -> float | None:
        raw = low.get(name.lower())
        if raw is None:
            return None
        try:
            v = float(str(raw).strip())
        except ValueError:
            v = math.nan
        if not math.isfinite(v):
            warns.append(
                ConfigWarning(
                    f"global {name} = {raw!r} is not a number; ignored", file=file, param=name
                )
            )
            return None
        return v

    lat, lon = num("LatOrigin"), num("LongOrigin")
    if lat is not None and lon is not None:
        if -80.0 <= lat <= 84.0 and -180.0 <= lon <= 180.0:
            out["lat_origin"], out["long_origin"] = lat, lon
        else:
            warns.append(
                ConfigWarning(
                    f"datum ({format_number_x(lat, 6)}, {format_number_x(lon, 6)}) is outside the "
                    "UTM range (lat [-80, 84], lon [-180, 180]): no lat/long is published",
                    file=file,
                    param="LatOrigin",
                )
            )
    elif (lat is None) != (lon is None):
        warns.append(
            ConfigWarning(
                "only one of LatOrigin/LongOrigin is set: no datum, no lat/long is published",
                file=file,
                param="LatOrigin" if lat is None else "LongOrigin",
            )
        )
    warp = num("MOOSTimeWarp")
    if warp is not None and warp > 0:
        out["time_warp"] = warp
    return out, warns


def _diff_warnings(a: _Eval, b: _Eval, primary: Compat, file: str | None) -> list[ConfigWarning]:
    """§10.3: report every parameter whose effective value differs between the modes."""
    doc, moos = (a, b) if primary == "doc" else (b, a)
    noted = a.noted  # differences the primary mode has already explained line by line
    out: list[ConfigWarning] = []
    names = [n for n in dict.fromkeys(list(doc.values) + list(moos.values))]
    defaults = {f.name: f.default for f in fields(UsmConfig)}
    for name in names:
        if name in noted:
            continue
        dv = doc.values.get(name, defaults.get(name))
        mv = moos.values.get(name, defaults.get(name))
        if dv == mv:
            continue
        line = a.origins.get(name) if name in a.origins else b.origins.get(name)
        dl, ml = doc.origins.get(name), moos.origins.get(name)
        order = (
            " (the program applies the lines in reverse order: the first occurrence wins)"
            if doc.variant == "usm" and max(doc.counts.get(name, 0), moos.counts.get(name, 0)) > 1
            else ""
        )
        out.append(
            ConfigWarning(
                f"effective value differs between modes: documented mode gives {_fmt(dv)}"
                + (f" (line {dl})" if dl is not None else "")
                + f', compat="moos" gives {_fmt(mv)}'
                + (f" (line {ml})" if ml is not None else "")
                + order,
                file=file,
                line=line,
                param=name,
            )
        )
    if doc.tm != moos.tm and ("thrust_map" not in noted or doc.tm_lines > 1):
        line = a.origins.get("thrust_map") or b.origins.get("thrust_map")
        out.append(
            ConfigWarning(
                f"the thrust map differs between modes: documented mode gives {_fmt(doc.tm)}, "
                f'compat="moos" gives {_fmt(moos.tm)}'
                + (
                    " (several thrust_map lines are added in reverse order by the program)"
                    if doc.tm_lines > 1 and doc.variant == "usm"
                    else ""
                ),
                file=file,
                line=line,
                param="thrust_map",
            )
        )
    return out


def configure(
    lines: Iterable[Any],
    *,
    variant: Variant = "usm",
    compat: Compat = "doc",
    file: str | Path | None = None,
    globals: Mapping[str, Any] | None = None,  # noqa: A002 - the MOOS word
    base_dir: str | Path | None = None,
    load_current_field: LoadCurrentField | None = None,
) -> tuple[UsmConfig, list[ConfigWarning]]:
    """Apply the lines of a ``ProcessConfig = uSimMarine`` block (spec §5, §10, §12).

    Parameters
    ----------
    lines : iterable
        In file order: ``(key, value, line)`` or ``(key, value)`` tuples, or
        ``"key = value"`` strings.  MOOS's rules apply in both modes: ``//`` comments removed,
        all blanks deleted, empty values dropped, keys case-insensitive.
    variant : {"usm", "usm_v22"}
        uSimMarine or uSimMarineV22 (file order, lower-case keys, no deprecated aliases, V22
        keys).
    compat : {"doc", "moos"}
        ``"doc"`` (default): the documented behaviour, file order, unknown or invalid values
        raise.  ``"moos"``: the real program (reverse order for ``usm``, exponent numbers and
        unknown keys rejected with a warning, thrust maps truncated at the first bad item).
    file : str or Path, optional
        File named in messages.
    globals : mapping, optional
        The ``.moos`` globals (``LatOrigin``, ``LongOrigin``, ``MOOSTimeWarp``).
    base_dir : str or Path, optional
        Directory against which ``current_field`` is resolved (the file's directory).
    load_current_field : callable, optional
        ``(path, file=, line=) -> CurrentField | (CurrentField, warnings)``, raising
        :class:`ConfigError` for a missing or empty file.  Needed for ``current_field`` in
        documented mode.

    Returns
    -------
    (UsmConfig, list of ConfigWarning)
        The effective configuration (its ``thrust_map`` is always set and frozen) and the
        warnings: the mode's own ones plus every parameter whose value would differ in the
        other mode (file, line, parameter, both values).

    Raises
    ------
    ConfigError
        ``compat="doc"``: the first unknown parameter (with a suggestion), invalid value or
        malformed thrust-map item, by file line.  Either mode: a bad ``variant``/``compat``.
    """
    if variant not in ("usm", "usm_v22"):
        raise ConfigError(f"variant must be 'usm' or 'usm_v22', not {variant!r}", param="variant")
    if compat not in ("doc", "moos"):
        raise ConfigError(f"compat must be 'doc' or 'moos', not {compat!r}", param="compat")
    fname = str(file) if file is not None else None
    bdir = Path(base_dir) if base_dir is not None else None
    norm = _normalise(lines, fname)
    main = _evaluate(norm, variant, compat, fname, bdir, load_current_field, True)
    other_mode: Compat = "moos" if compat == "doc" else "doc"
    other = _evaluate(norm, variant, other_mode, fname, bdir, None, False)
    if main.errors:
        raise sorted(main.errors, key=lambda e: e.line or 0)[0]
    warnings = list(main.warnings)
    warnings.extend(_diff_warnings(main, other, compat, fname))
    gvals, gwarns = _globals_values(globals, fname, compat)
    warnings.extend(gwarns)
    values = dict(main.values)
    values.update(gvals)
    tm = main.tm
    if main.values.get("current_field") is not None and compat == "moos":  # pragma: no cover
        values.pop("current_field")
    origins = {k: v for k, v in main.origins.items() if v is not None}
    cfg = UsmConfig(
        variant=variant,
        compat=compat,
        thrust_map=tm.freeze(),
        extras=dict(main.extras),
        origins=origins,
    )
    known = {f.name for f in fields(UsmConfig)}
    cfg = replace(cfg, **{k: v for k, v in values.items() if k in known})
    return cfg, warnings


def config_from_mapping(
    mapping: Mapping[str, Any] | None,
    *,
    variant: Variant = "usm",
    compat: Compat = "doc",
    file: str | Path | None = None,
    marks: Mapping[str, tuple[int, int]] | None = None,
    prefix: str = "",
    base_dir: str | Path | None = None,
    load_current_field: LoadCurrentField | None = None,
) -> tuple[UsmConfig, list[ConfigWarning]]:
    """Build the configuration from a YAML ``params:`` mapping with the rules of :func:`configure`.

    Parameters
    ----------
    mapping : mapping
        Parameter name → value (numbers, booleans or strings), in file order.  A ``compat``
        key overrides the ``compat`` argument; a ``variant`` key must match ``variant``.
    variant, compat, file, base_dir, load_current_field
        As for :func:`configure`.
    marks : mapping, optional
        Dotted path → (line, column) of the YAML nodes (line numbers in messages).
    prefix : str
        Dotted path of the mapping inside the file (``entities.0.motion.params``).

    Returns
    -------
    (UsmConfig, list of ConfigWarning)
    """
    data = dict(mapping or {})
    path = (prefix + ".") if prefix else ""

    def line_of(key: str) -> int | None:
        if marks and (path + key) in marks:
            return marks[path + key][0]
        return None

    if "compat" in data:
        compat = data.pop("compat")
        if compat not in ("doc", "moos"):
            raise ConfigError(
                f"compat must be 'doc' or 'moos', not {compat!r}",
                file=file,
                line=line_of("compat"),
                param=path + "compat",
            )
    if "variant" in data:
        v = data.pop("variant")
        if v != variant:
            raise ConfigError(
                f"variant {v!r} does not match the model {variant!r}",
                file=file,
                line=line_of("variant"),
                param=path + "variant",
            )
    items: list[tuple[str, str, int | None]] = []
    for key, value in data.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(
                    f"value {value!r} is not finite",
                    file=file,
                    line=line_of(key),
                    param=path + str(key),
                )
            # positional digits (never an exponent the user did not write), exact round trip
            text = (
                np.format_float_positional(value, unique=True, trim="-")
                if isinstance(value, float)
                else str(value)
            )
        elif isinstance(value, str):
            text = value
        elif isinstance(value, Sequence) and key == "thrust_map":
            text = ", ".join(f"{t}:{s}" for t, s in value)
        else:
            raise ConfigError(
                f"expected a number, boolean or string, got {value!r}",
                file=file,
                line=line_of(key),
                param=path + str(key),
            )
        items.append((str(key), text, line_of(key)))
    return configure(
        items,
        variant=variant,
        compat=compat,
        file=file,
        base_dir=base_dir,
        load_current_field=load_current_field,
    )


# ---------------------------------------------------------------------------------------
# Generated text: --example and the `check` table
# ---------------------------------------------------------------------------------------

_BLOCK_NAME = {"usm": "uSimMarine", "usm_v22": "uSimMarineV22"}


def example_block(variant: Variant = "usm") -> str:
    """The ``--example`` configuration block, generated from :data:`PARAMS`.

    Every line is valid and means the same in both modes (parsing it back gives no error and
    no warning); documented-only parameters are shown commented out.
    """
    rows: list[tuple[str, str, str]] = []
    for p in PARAMS:
        if variant not in p.variants or p.kind == "unsupported":
            continue
        if p.name in ("apptick", "commstick"):
            continue
        if p.example == "":
            value = {"path": "field.cfd", "bool": "true"}.get(p.kind, "")
            if not value:
                continue
            rows.append(("// " + p.name, value, p.description))
            continue
        value = p.example if p.example is not None else _fmt(p.default)
        note = p.description + (f" [{p.unit}]" if p.unit else "")
        if p.doc_default is not _SAME:
            note += f" (documentation list says {_fmt(p.doc_default)})"
        if p.name == "turn_loss":
            rows.append(("// " + p.name, value, note + "; honoured in documented mode only"))
            continue
        rows.append((p.name, value, note))
    width = max(len(r[0]) for r in rows)
    vwidth = min(max(len(r[1]) for r in rows), 24)
    out = [
        "=" * 70,
        f"{_BLOCK_NAME[variant]} Example MOOS Configuration (generated by marinesim)",
        "=" * 70,
        "",
        f"ProcessConfig = {_BLOCK_NAME[variant]}",
        "{",
        "  AppTick   = 10     // the model step is 1/AppTick",
        "  CommsTick = 10",
        "",
    ]
    for name, value, note in rows:
        out.append(f"  {name.ljust(width)} = {value.ljust(vwidth)}  // {note}")
    out.append("}")
    return "\n".join(out) + "\n"


def effective_rows(cfg: UsmConfig) -> list[tuple[str, str, str, str]]:
    """Rows ``(parameter, value, unit, source)`` of the effective configuration for ``check``.

    ``source`` is ``"line N"`` for a value set by the file, else ``"default"``.
    """
    rows: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()
    for p in PARAMS:
        if cfg.variant not in p.variants or p.field is None or p.field in seen:
            continue
        if p.kind == "path" and cfg.compat == "moos":
            continue
        if p.name == "turn_loss" and cfg.compat == "moos":
            continue
        seen.add(p.field)
        if p.name == "thrust_factor":
            value: Any = cfg.thrust_map.thrust_factor if cfg.thrust_map else 20.0
        elif p.name == "thrust_reflect":
            value = cfg.thrust_map.reflect if cfg.thrust_map else False
        elif p.name == "thrust_map":
            tm = cfg.thrust_map
            value = tm.to_text() if tm and (tm.pos_pairs or tm.neg_pairs) else "(empty)"
        else:
            value = getattr(cfg, p.field)
        line = cfg.origins.get(p.field) or cfg.origins.get(p.name)
        rows.append((p.name, _fmt(value), p.unit, f"line {line}" if line else "default"))
    for key, value in cfg.extras.items():
        rows.append((key, value, "", "moos/appcast key (no effect)"))
    if cfg.lat_origin is not None:
        rows.append(("LatOrigin", _fmt(cfg.lat_origin), "deg", "global"))
        rows.append(("LongOrigin", _fmt(cfg.long_origin), "deg", "global"))
    return rows
