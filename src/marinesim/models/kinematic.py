"""The uSimMarine kinematic vehicle model (``usm``) and its V22 variant (``usm_v22``).

Batched over N vehicles: every state field is an array with a leading vehicle axis, and N = 1
runs the very same code.  The arithmetic reproduces the real programs operation by operation
(spec ``usimmarine.md``; MOOS-IvP ``dep_uSimMarine`` and ``uSimMarineV22``): speed averaging,
the pitch sawtooth, per-message rudder slewing, the vector-mean heading, ``relAng`` for the
heading over ground, the truncated pause clock and so on.

Three entry points play the program's MOOS cycle (spec §2):

* :func:`init` — start-up (§2.1): the record time stamp is the MOOS time at start-up;
* :func:`apply_mail` — one typed MOOS message (§6), applied to some or all vehicles;
* :func:`iterate` — one ``Iterate()`` (§2.2): propagate (§2.3, §3), then publish (§7).

:func:`step` is the architecture's ``step(params, state, cmd, env, dt)`` form used by the
engine: it advances each vehicle's MOOS time by ``dt``, hands the desired actuators over as
mail and iterates once.

Units: m, m/s, m/s², compass degrees (0 = north, clockwise) for heading, radians for pitch
and yaw, percent for thrust/rudder/elevator, seconds for time.  Local frame: x east, y north
(UTM grid), depth positive down.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError
from marinesim.models.thrustmap import (
    ThrustMap,
    format_number_x,
    is_moos_number,
    moos_atof,
)
from marinesim.models.usm_config import UsmConfig

__all__ = [
    "PUBLICATIONS",
    "Params",
    "SUBSCRIPTIONS",
    "UsmState",
    "apply_mail",
    "bench_config",
    "drift_summary",
    "init",
    "iterate",
    "measure_throughput",
    "rel_ang",
    "snap_speed",
    "step",
]

#: The model's parameter type (architecture contract: ``Params``; ``init``; ``step``).
Params = UsmConfig

F64 = NDArray[np.float64]
BoolA = NDArray[np.bool_]

#: π as MOOS-IvP's AngleUtils uses it (M_PI).
_PI = math.pi
#: The truncated π of the reverse-mode yaw copy (§2.2).
_PI_TRUNC = 3.1415926
#: Hard-coded program constants (§5.2).
_DIFF_FULL_RATE = 36.0  # deg/s at full differential thrust
_BUOYANCY_DELAY = 5.0  # s
_REPORT_INTERVAL = 5.0  # s
_V22_FULL_SPEED = 5.0  # m/s, forced every heading step (§12)


# --------------------------------------------------------------------------------------
# declarations (used by ``--interface`` and the generated docs)
# --------------------------------------------------------------------------------------

#: Subscribed variables: (name, type, unit, description, variants).
SUBSCRIPTIONS: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("DESIRED_THRUST", "double", "%", "thrust; ignored while differential", ("usm", "usm_v22")),
    (
        "DESIRED_RUDDER",
        "double",
        "%",
        "rudder, rate-limited per message (§3.9)",
        ("usm", "usm_v22"),
    ),
    ("DESIRED_ELEVATOR", "double", "%", "elevator (clipped to ±100 when used)", ("usm", "usm_v22")),
    ("DESIRED_THRUST_L", "double", "%", "left thrust, differential mode only", ("usm", "usm_v22")),
    ("DESIRED_THRUST_R", "double", "%", "right thrust, differential mode only", ("usm", "usm_v22")),
    (
        "THRUST_MODE_DIFFERENTIAL",
        "string",
        "",
        "true/false: differential thrust mode",
        ("usm", "usm_v22"),
    ),
    ("THRUST_MODE_REVERSE", "string", "", "true/false: reverse thrust mode", ("usm", "usm_v22")),
    (
        "USM_SIM_PAUSED",
        "string",
        "",
        "TRUE pauses, anything else resumes (§3.11)",
        ("usm", "usm_v22"),
    ),
    ("BUOYANCY_RATE", "double", "m/s", "buoyancy rate, positive floats up", ("usm", "usm_v22")),
    ("ROTATE_SPEED", "double", "deg/s", "external rotation, any sign", ("usm", "usm_v22")),
    ("DRIFT_X", "double", "m/s", "drift east", ("usm", "usm_v22")),
    ("CURRENT_X", "double", "m/s", "alias of DRIFT_X", ("usm", "usm_v22")),
    ("DRIFT_Y", "double", "m/s", "drift north", ("usm", "usm_v22")),
    ("CURRENT_Y", "double", "m/s", "alias of DRIFT_Y", ("usm", "usm_v22")),
    ("DRIFT_VECTOR", "string", "deg,m/s", "'ang,mag' sets the drift", ("usm", "usm_v22")),
    ("DRIFT_VECTOR_ADD", "string", "deg,m/s", "'ang,mag' added to the drift", ("usm", "usm_v22")),
    (
        "DRIFT_VECTOR_MULT",
        "double",
        "",
        "drift magnitude multiplier (negative reverses)",
        ("usm", "usm_v22"),
    ),
    ("WATER_DEPTH", "double", "m", "water depth (>= 0; 0 = unknown)", ("usm", "usm_v22")),
    (
        "USM_RESET",
        "string",
        "",
        "'x=,y=,heading=,speed=,depth=' or positional (§3.12)",
        ("usm", "usm_v22"),
    ),
    ("USM_TURN_RATE", "double", "%", "turn rate, clipped to [0, 100]", ("usm", "usm_v22")),
    ("USM_ENABLED", "string", "", "true/false: publish (usm) or run (V22)", ("usm", "usm_v22")),
    (
        "OBSTACLE_HIT",
        "any",
        "",
        "freezes the simulation for good (V22: string 'true' only)",
        ("usm", "usm_v22"),
    ),
    ("BUOYANCY_CONTROL", "string", "", "'true' starts the buoyancy handshake", ("usm", "usm_v22")),
    ("TRIM_CONTROL", "string", "", "'true' starts the trim handshake", ("usm", "usm_v22")),
    (
        "USM_BUOYANCY_RATE",
        "double",
        "m/s",
        "documented alias of BUOYANCY_RATE (default mode)",
        ("usm", "usm_v22"),
    ),
    (
        "USM_WATER_DEPTH",
        "double",
        "m",
        "documented alias of WATER_DEPTH (default mode)",
        ("usm", "usm_v22"),
    ),
    (
        "USM_CURRENT_FIELD",
        "string",
        "",
        "true/false: configured current field active (default mode)",
        ("usm", "usm_v22"),
    ),
    ("NAV_X", "double", "m", "overwrites x while disabled", ("usm_v22",)),
    ("NAV_Y", "double", "m", "overwrites y while disabled", ("usm_v22",)),
    ("NAV_HEADING", "double", "deg", "overwrites the heading while disabled", ("usm_v22",)),
    ("USM_RESET_NAV", "string", "", "copies the GT record into the NAV record", ("usm_v22",)),
    ("USM_TURN_RADIUS", "double", "m", "turn-radius limit (>= 0; 0 = off)", ("usm_v22",)),
]

#: Published variables: (name, type, unit, description, variants); <P> is the prefix.
PUBLICATIONS: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("<P>_X", "double", "m", "x east (UTM grid)", ("usm", "usm_v22")),
    ("<P>_Y", "double", "m", "y north (UTM grid)", ("usm", "usm_v22")),
    ("<P>_LAT", "double", "deg", "latitude (with a datum)", ("usm", "usm_v22")),
    ("<P>_LONG", "double", "deg", "longitude (with a datum)", ("usm", "usm_v22")),
    ("<P>_HEADING", "double", "deg", "heading (+180 in reverse mode)", ("usm", "usm_v22")),
    (
        "<P>_SPEED",
        "double",
        "m/s",
        "speed (snapped to 0.01 in compat='moos'; V22 clamped to max_speed)",
        ("usm", "usm_v22"),
    ),
    ("<P>_DEPTH", "double", "m", "depth", ("usm", "usm_v22")),
    ("SIMULATION_MODE", "string", "", "'TRUE'", ("usm",)),
    ("<P>_Z", "double", "m", "-depth", ("usm",)),
    ("<P>_PITCH", "double", "rad", "pitch", ("usm",)),
    ("<P>_YAW", "double", "rad", "yaw (+3.1415926 in reverse mode)", ("usm", "usm_v22")),
    ("TRUE_X", "double", "m", "x (with dual_state: the GT value)", ("usm",)),
    ("TRUE_Y", "double", "m", "y (with dual_state: the GT value)", ("usm",)),
    ("<P>_HEADING_OVER_GROUND", "double", "deg", "heading over ground", ("usm", "usm_v22")),
    ("<P>_SPEED_OVER_GROUND", "double", "m/s", "speed over ground", ("usm", "usm_v22")),
    ("<P>_ALTITUDE", "double", "m", "altitude, once a water depth was known", ("usm", "usm_v22")),
    (
        "<P>_GT_*",
        "double",
        "",
        "the same set for the ground-truth record (dual_state)",
        ("usm", "usm_v22"),
    ),
    ("USM_FSUMMARY", "string", "", "drift summary 'ang=, mag=, xmag=, ymag='", ("usm",)),
    (
        "USM_DRIFT_SUMMARY",
        "string",
        "",
        "drift summary 'ang=, mag=, xmag=, ymag='",
        ("usm", "usm_v22"),
    ),
    ("USM_RESET_COUNT", "double", "", "number of USM_RESET messages", ("usm", "usm_v22")),
    ("BUOYANCY_REPORT", "string", "", "buoyancy handshake status", ("usm", "usm_v22")),
    ("TRIM_REPORT", "string", "", "trim handshake status", ("usm", "usm_v22")),
]

_DOUBLE_VARS = frozenset(
    {
        "DESIRED_THRUST",
        "DESIRED_RUDDER",
        "DESIRED_ELEVATOR",
        "DESIRED_THRUST_L",
        "DESIRED_THRUST_R",
        "BUOYANCY_RATE",
        "ROTATE_SPEED",
        "DRIFT_X",
        "CURRENT_X",
        "DRIFT_Y",
        "CURRENT_Y",
        "DRIFT_VECTOR_MULT",
        "WATER_DEPTH",
        "USM_TURN_RATE",
        "USM_BUOYANCY_RATE",
        "USM_WATER_DEPTH",
        "NAV_X",
        "NAV_Y",
        "NAV_HEADING",
        "USM_TURN_RADIUS",
    }
)
_STRING_VARS = frozenset(
    {
        "THRUST_MODE_DIFFERENTIAL",
        "THRUST_MODE_REVERSE",
        "USM_SIM_PAUSED",
        "DRIFT_VECTOR",
        "DRIFT_VECTOR_ADD",
        "USM_RESET",
        "USM_ENABLED",
        "BUOYANCY_CONTROL",
        "TRIM_CONTROL",
        "USM_CURRENT_FIELD",
        "USM_RESET_NAV",
    }
)
_DEAD_ALIASES = frozenset(
    {
        "USM_FORCE_X",
        "USM_FORCE_Y",
        "USM_FORCE_THETA",
        "USM_FORCE_VECTOR",
        "USM_FORCE_VECTOR_ADD",
        "USM_FORCE_VECTOR_MULT",
    }
)
_V22_ONLY = frozenset({"NAV_X", "NAV_Y", "NAV_HEADING", "USM_RESET_NAV", "USM_TURN_RADIUS"})


# --------------------------------------------------------------------------------------
# state
# --------------------------------------------------------------------------------------

_RECORD = (
    "x",
    "y",
    "heading",
    "speed",
    "depth",
    "pitch",
    "yaw",
    "altitude",
    "altitude_set",
    "sog",
    "hog",
    "hsin",
    "hcos",
    "hkey",
    "psin",
    "pkey",
    "geo_x",
    "geo_y",
)


@dataclass(frozen=True, eq=False)
class UsmState:
    """State of N uSimMarine vehicles (spec §1); every array has shape (N,).

    NAV record: ``x, y`` [m], ``heading`` [deg, 0 ≤ h < 360], ``speed`` [m/s, signed],
    ``depth`` [m, ≥ 0], ``pitch``, ``yaw`` [rad], ``altitude`` [m] with ``altitude_set``,
    ``sog`` [m/s], ``hog`` [deg], ``ts`` [s, MOOS time of the last propagation].  The ``gt_*``
    fields are the ground-truth record (propagated with drift when ``dual_state``; otherwise
    a copy kept by resets only).  ``propagated`` tells whether the record has moved at least
    once (yaw, pitch, SOG and HOG are not defined before).

    Caches (refreshed automatically when stale): ``hsin``/``hcos`` = sin/cos of the heading
    in radians (exact) for the heading ``hkey``; ``psin`` = sin(pitch) (to 1 ulp: the model
    stores −q/v for pitch = −asin(q/v)) for the pitch ``pkey`` (and the ``gt_`` versions).
    Whoever changes ``heading`` or ``pitch`` need not touch them.
    ``geo_x``/``geo_y``: the position at the last propagation (V22 computes lat/long inside
    the model, so its published lat/long follow this position, not later resets).

    Actuators [%]: ``thrust``, ``rudder`` (applied, after the rate limit), ``rudder_prev``,
    ``rudder_tstamp`` [s], ``elevator``, ``thrust_l``, ``thrust_r``; ``diff_mode`` (the
    model's thrust mode is differential), ``diff_flag`` (the app's differential flag, usm),
    ``reverse``.

    Mail-settable parameters: ``turn_rate`` [%], ``turn_radius`` [m, V22; 0 = off],
    ``rotate_speed`` [deg/s], ``buoyancy_rate``
    [m/s], ``water_depth`` [m], ``drift_x``, ``drift_y`` [m/s], ``drift_fresh``;
    V22's turn-speed map ``tsm_full_rate``, ``tsm_null_rate`` [%], ``tsm_null_speed`` [m/s];
    ``current_active`` and the current-field contribution of the last step ``current_x``,
    ``current_y`` [m/s] (default mode only).

    App: ``paused``, ``pause_start`` [s], ``pause_ticks`` (total paused time in 1/100 s),
    ``enabled``, ``obstacle_hit``, ``reset_count``, ``iteration``, ``moos_time`` [s, the time
    of the last iteration or start-up], and the buoyancy/trim handshake (``buoy_req``,
    ``buoy_req_time``, ``trim_req``, ``trim_req_time``, ``last_report``).

    Actuator cache (refreshed automatically when stale, like ``hsin``): for the thrust
    ``act_thrust``, rudder ``act_rudder`` and turn rate ``act_tau`` it holds the demanded
    speed ``act_vs`` [m/s] (thrust map and turn loss), the thrust gain ``act_gain``
    (1 + (thrust − 50)/50) and ``act_rt`` = clip(rudder)·turn_rate/100 [deg/s]; valid for
    the configuration ``act_config`` only.

    Non-array fields: ``geodesy`` (a :class:`~marinesim.core.geodesy.MoosGeodesy` or None),
    ``drift_sources`` (V22: per vehicle, the senders of drift mail seen so far) and ``warned``
    (variables already warned about once).
    """

    x: F64
    y: F64
    heading: F64
    speed: F64
    depth: F64
    pitch: F64
    yaw: F64
    altitude: F64
    altitude_set: BoolA
    sog: F64
    hog: F64
    ts: F64
    gt_x: F64
    gt_y: F64
    gt_heading: F64
    gt_speed: F64
    gt_depth: F64
    gt_pitch: F64
    gt_yaw: F64
    gt_altitude: F64
    gt_altitude_set: BoolA
    gt_sog: F64
    gt_hog: F64
    hsin: F64
    hcos: F64
    hkey: F64
    psin: F64
    pkey: F64
    gt_hsin: F64
    gt_hcos: F64
    gt_hkey: F64
    gt_psin: F64
    gt_pkey: F64
    geo_x: F64
    geo_y: F64
    gt_geo_x: F64
    gt_geo_y: F64
    propagated: BoolA
    thrust: F64
    rudder: F64
    rudder_prev: F64
    rudder_tstamp: F64
    elevator: F64
    thrust_l: F64
    thrust_r: F64
    diff_mode: BoolA
    diff_flag: BoolA
    reverse: BoolA
    turn_rate: F64
    turn_radius: F64
    rotate_speed: F64
    buoyancy_rate: F64
    water_depth: F64
    drift_x: F64
    drift_y: F64
    drift_fresh: BoolA
    tsm_full_rate: F64
    tsm_null_rate: F64
    tsm_null_speed: F64
    current_active: BoolA
    current_x: F64
    current_y: F64
    paused: BoolA
    pause_start: F64
    pause_ticks: NDArray[np.int64]
    enabled: BoolA
    obstacle_hit: BoolA
    reset_count: NDArray[np.int64]
    iteration: NDArray[np.int64]
    moos_time: F64
    buoy_req: BoolA
    buoy_req_time: F64
    trim_req: BoolA
    trim_req_time: F64
    last_report: F64
    act_thrust: F64
    act_rudder: F64
    act_tau: F64
    act_vs: F64
    act_gain: F64
    act_rt: F64
    geodesy: Any = None
    drift_sources: tuple[frozenset[str], ...] = ()
    warned: frozenset[str] = frozenset()
    act_config: Any = None

    @property
    def n(self) -> int:
        """Number of vehicles N."""
        return int(self.x.shape[0])


_FIELD_NAMES = tuple(f.name for f in fields(UsmState))


def _evolve(state: UsmState, changes: Mapping[str, Any]) -> UsmState:
    """A new state with some fields replaced (cheap: no per-field validation)."""
    new = object.__new__(UsmState)
    d = dict(state.__dict__)
    d.update(changes)
    new.__dict__.update(d)
    return new


def _geodesy_for(config: UsmConfig, datum: tuple[float, float] | None) -> Any:
    if datum is None:
        lat = getattr(config, "lat_origin", None)
        lon = getattr(config, "long_origin", getattr(config, "lon_origin", None))
        if lat is None or lon is None:
            ex = getattr(config, "extras", {}) or {}
            lat = ex.get("LatOrigin", ex.get("latorigin"))
            lon = ex.get("LongOrigin", ex.get("longorigin"))
        if lat is None or lon is None:
            return None
        datum = (float(lat), float(lon))
    from marinesim.core.geodesy import MoosGeodesy

    lat0, lon0 = float(datum[0]), float(datum[1])
    if not (-80.0 <= lat0 <= 84.0 and -180.0 <= lon0 <= 180.0):
        return None  # the program rejects the datum: no lat/long
    return MoosGeodesy(lat0, lon0)


def init(
    config: UsmConfig,
    n: int,
    moos_time: float = 0.0,
    *,
    datum: tuple[float, float] | None = None,
) -> UsmState:
    """Start-up state of N identical vehicles (spec §2.1, §5).

    Parameters
    ----------
    config : UsmConfig
        Effective parameters (from :func:`marinesim.models.usm_config.configure`).
    n : int
        Number of vehicles N ≥ 1.
    moos_time : float
        MOOS time at start-up [s]; becomes the record time stamp ``ts``.
    datum : (float, float), optional
        ``(LatOrigin, LongOrigin)`` [deg].  Without it (and without a datum in the config)
        nothing is projected to lat/long.  An out-of-range datum gives no lat/long, as in the
        program.

    Returns
    -------
    UsmState
        Arrays of shape (N,).

    Raises
    ------
    ConfigError
        ``n < 1`` or an unknown variant.
    """
    n = int(n)
    if n < 1:
        raise ConfigError(f"number of vehicles must be >= 1, got {n}", param="n")
    if config.variant not in ("usm", "usm_v22"):
        raise ConfigError(f"unknown uSimMarine variant {config.variant!r}", param="variant")

    def full(v: float) -> F64:
        return np.full(n, float(v), dtype=np.float64)

    def flag(v: bool) -> BoolA:
        return np.full(n, bool(v), dtype=bool)

    zeros = np.zeros(n, dtype=np.float64)
    start_depth = max(float(config.start_depth), 0.0)
    rec = {
        "x": full(config.start_x),
        "y": full(config.start_y),
        "heading": full(config.start_heading),
        "speed": full(config.start_speed),
        "depth": full(start_depth),
        "pitch": zeros.copy(),
        "yaw": zeros.copy(),
        "altitude": zeros.copy(),
        "altitude_set": flag(False),
        "sog": zeros.copy(),
        "hog": zeros.copy(),
    }
    r0 = _deg2rad(rec["heading"])
    rec.update(
        hsin=np.sin(r0),
        hcos=np.cos(r0),
        hkey=rec["heading"].copy(),
        psin=zeros.copy(),
        pkey=zeros.copy(),
        geo_x=rec["x"].copy(),
        geo_y=rec["y"].copy(),
    )
    gt = {"gt_" + k: v.copy() for k, v in rec.items()}
    v22 = config.variant == "usm_v22"
    t0 = float(moos_time)
    paused = bool(config.sim_pause)
    diff = bool(config.thrust_mode_diff) if v22 else False
    st = UsmState(
        **rec,
        ts=full(t0),
        **gt,
        propagated=flag(False),
        thrust=zeros.copy(),
        rudder=zeros.copy(),
        rudder_prev=zeros.copy(),
        rudder_tstamp=zeros.copy(),
        elevator=zeros.copy(),
        thrust_l=zeros.copy(),
        thrust_r=zeros.copy(),
        diff_mode=flag(diff),
        diff_flag=flag(False),
        reverse=flag(bool(config.thrust_mode_reverse) if v22 else False),
        turn_rate=full(min(max(config.turn_rate, 0.0), 100.0)),
        turn_radius=full(max(config.turn_radius, 0.0) if v22 else 0.0),
        rotate_speed=full(config.rotate_speed),
        buoyancy_rate=full(config.buoyancy_rate),
        water_depth=full(max(config.default_water_depth, 0.0)),
        drift_x=full(config.drift_x),
        drift_y=full(config.drift_y),
        drift_fresh=flag(True),
        tsm_full_rate=full(config.turn_spd_map_full_rate),
        tsm_null_rate=full(config.turn_spd_map_null_rate),
        tsm_null_speed=full(config.turn_spd_map_null_speed),
        current_active=flag(
            config.current_field is not None
            and bool(config.current_field_active)
            and config.compat == "doc"
        ),
        current_x=zeros.copy(),
        current_y=zeros.copy(),
        paused=flag(paused),
        pause_start=full(t0),
        pause_ticks=np.zeros(n, dtype=np.int64),
        enabled=flag(True),
        obstacle_hit=flag(False),
        reset_count=np.zeros(n, dtype=np.int64),
        iteration=np.zeros(n, dtype=np.int64),
        moos_time=full(t0),
        buoy_req=flag(False),
        buoy_req_time=zeros.copy(),
        trim_req=flag(False),
        trim_req_time=zeros.copy(),
        last_report=zeros.copy(),
        act_thrust=full(math.nan),
        act_rudder=full(math.nan),
        act_tau=full(math.nan),
        act_vs=zeros.copy(),
        act_gain=zeros.copy(),
        act_rt=zeros.copy(),
        geodesy=_geodesy_for(config, datum),
        drift_sources=tuple(frozenset() for _ in range(n)),
        warned=frozenset(),
    )
    return st


# --------------------------------------------------------------------------------------
# MOOS-IvP helpers, vectorised
# --------------------------------------------------------------------------------------


def _angle360(a: F64) -> F64:
    """MOOS-IvP ``angle360``: subtract/add 360 until 0 ≤ a < 360 (repeated, not fmod)."""
    if a.size and a.min() >= 0.0 and a.max() < 360.0:
        return a  # already in range (the usual case): two reductions, no temporaries
    hi = a >= 360.0
    while hi.any():
        a = np.where(hi, a - 360.0, a)
        hi = a >= 360.0
    lo = a < 0.0
    while lo.any():
        a = np.where(lo, a + 360.0, a)
        lo = a < 0.0
    return a


def _angle180(a: F64) -> F64:
    a = _angle360(a)
    return a - 360.0 * (a > 180.0)  # a - 360 where a > 180, a - 0.0 (= a) elsewhere


def _deg2rad(d: ArrayLike) -> Any:
    return (np.asarray(d) / 180.0) * _PI


def _heading_to_radians(ang: ArrayLike) -> Any:
    """MOOS-IvP ``headingToRadians``: wrap((90 − ang)·π/180) once into [−π, π]."""
    r = ((90.0 - np.asarray(ang, dtype=np.float64)) * _PI) / 180.0
    r = np.where(r > _PI, r - 2 * _PI, r)
    return np.where(r < -_PI, r + 2 * _PI, r)


def rel_ang(xa: ArrayLike, ya: ArrayLike, xb: ArrayLike, yb: ArrayLike) -> F64:
    """MOOS-IvP ``relAng``: compass bearing [deg] from point A to point B, element-wise.

    Parameters
    ----------
    xa, ya, xb, yb : array_like
        Coordinates [m] (broadcast together).

    Returns
    -------
    ndarray
        Degrees in [0, 360): 0 for identical points, exactly 0/90/180/270 along the axes,
        otherwise angle360(±deg(atan(|Δy|/|Δx|)) + 90 or 270) as the program computes it.
    """
    dx = np.subtract(xb, xa, dtype=np.float64)
    dy = np.subtract(yb, ya, dtype=np.float64)
    with np.errstate(all="ignore"):
        # sign(Δx)·sign(Δy)·deg(atan(|Δy|/|Δx|)) = deg(atan(Δy/Δx)): division, atan (odd),
        # /π and ·180 are all sign-symmetric, and the quotient keeps the sign bit even
        # when it underflows to ±0 (Δy = 0 gives ±0, so ret = w exactly), in place
        aval = np.divide(dy, dx, out=np.empty(np.broadcast_shapes(dx.shape, dy.shape)))
        np.arctan(aval, out=aval)
        np.divide(aval, _PI, out=aval)
        np.multiply(aval, 180.0, out=aval)
    # w = 180 - 90·sign(Δx): 90 east of A, 270 west (Δx = 0 is replaced below)
    ret = np.copysign(90.0, dx, out=np.empty_like(aval))
    np.subtract(180.0, ret, out=ret)
    ret -= aval
    if not dx.all():  # some Δx = 0: straight north (0), south (180) or no move (0)
        ret = np.where(dx == 0.0, np.where(dy < 0.0, 180.0, 0.0), ret)
    if ret.ndim == 0:
        return _angle360(ret[()])
    return _angle360(ret)


def snap_speed(v: ArrayLike) -> F64:
    """MOOS-IvP ``snapToStep(v, 0.01)``: half away from zero, published as n·0.01.

    Parameters
    ----------
    v : array_like
        Speed [m/s].

    Returns
    -------
    ndarray
        Snapped speed [m/s].
    """
    q = np.asarray(v, dtype=np.float64) / 0.01
    if q.ndim == 0:
        return np.trunc(q + np.copysign(0.5, q)) * 0.01
    # q ± 0.5 away from zero (copysign: q - 0.5 for q < 0, q + 0.5 otherwise; -0.0 gives
    # -0.5, which truncates to -0.0 instead of 0.0: the same published number)
    h = np.copysign(0.5, q)
    q += h
    np.trunc(q, out=q)
    q *= 0.01
    return q


def _set_boolean_on_string(old: bool, text: str) -> bool:
    """MBUtils ``setBooleanOnString`` (case-insensitive); unknown text leaves the value."""
    s = text.lower()
    if s in ("true", "on", "yes"):
        return True
    if s in ("false", "off", "no"):
        return False
    if s == "toggle":
        return not old
    return old


def drift_summary(dx: float, dy: float) -> str:
    """The program's drift summary string (§7): ``"ang=A, mag=M, xmag=X, ymag=Y"``.

    Parameters
    ----------
    dx, dy : float
        Drift [m/s] east and north.

    Returns
    -------
    str
        With 2/2/3/3 decimals, trailing zeros removed and "-0" printed as "0".
    """
    mag = math.sqrt(dx * dx + dy * dy)
    ang = float(rel_ang(0.0, 0.0, dx, dy))
    return (
        f"ang={format_number_x(ang, 2)}, mag={format_number_x(mag, 2)}, "
        f"xmag={format_number_x(dx, 3)}, ymag={format_number_x(dy, 3)}"
    )


@lru_cache(maxsize=8)
def _const_strings(n: int, text: str) -> NDArray[np.object_]:
    a = np.full(n, text, dtype=object)
    a.flags.writeable = False
    return a


_DEFAULT_MAP = ThrustMap(20.0, False).freeze()


def _thrust_map(config: UsmConfig) -> ThrustMap:
    return config.thrust_map if config.thrust_map is not None else _DEFAULT_MAP


# --------------------------------------------------------------------------------------
# propagation (§2.3, §2.4, §3)
# --------------------------------------------------------------------------------------


def _sin_cos_deg(h: F64) -> tuple[F64, F64]:
    r = _deg2rad(h)
    return np.sin(r), np.cos(r)


def _refresh(key: F64, val: F64, s: F64, c: F64 | None) -> tuple[F64, F64 | None, bool]:
    """Recompute cached sin (and cos) where the cache key no longer matches the value."""
    if key is val:  # the key is the value array itself (state arrays are never mutated)
        return s, c, False
    stale = key != val
    if not stale.any():
        return s, c, False
    if stale.all():
        r = _deg2rad(val)
        return np.sin(r), (np.cos(r) if c is not None else None), True
    idx = np.flatnonzero(stale)
    r = _deg2rad(val[idx])
    s = s.copy()
    s[idx] = np.sin(r)
    if c is not None:
        c = c.copy()
        c[idx] = np.cos(r)
    return s, c, True


def _yaw_of(h: F64) -> F64:
    """``-deg2rad(angle180(h))`` for h already in [0, 360), with fewer temporaries.

    ``(a / -180) · π`` is bit-identical to ``-((a / 180) · π)`` (division and
    multiplication round sign-symmetrically).
    """
    y = np.multiply(h > 180.0, 360.0)
    np.subtract(h, y, out=y)
    y /= -180.0
    y *= _PI
    return y


def _clip100(a: F64) -> F64:
    """clip(a, -100, 100)."""
    return np.clip(a, -100.0, 100.0)


def _speed_lookup(config: UsmConfig, thrust: F64) -> F64:
    tm = _thrust_map(config)
    if tm.using_thrust_factor and not tm.neg_pairs and not tm.reflect:
        # factor rule, nothing for negative thrust (the default uSimMarine map)
        f = tm.thrust_factor
        if f == 0:
            return np.zeros_like(thrust)
        v = np.maximum(thrust, 0.0)
        v /= f
        return v
    return tm.speed(thrust)


def _demanded_speed(config: UsmConfig, t_sp: F64, r_sp: F64) -> F64:
    """Speed [m/s] the thrust asks for, less the turn loss: vs · (1 − |clip(r)|/100 · loss)."""
    vs = _speed_lookup(config, t_sp)
    if r_sp.any():
        vpct = _clip100(r_sp)
        np.abs(vpct, out=vpct)
        vpct /= 100
        vpct *= config.turn_loss
        np.subtract(1.0, vpct, out=vpct)
        vpct *= vs
        vs = vpct
    return vs


def _thrust_gain(thr: F64) -> F64:
    """The heading-rate thrust factor 1 + (thrust − 50)/50 (as ((thr − 50)/50) + 1)."""
    g = np.subtract(thr, 50)
    g /= 50
    g += 1
    return g


def _rudder_rate(rud: F64, tau: F64) -> F64:
    """clip(rudder) · (turn_rate / 100) [deg/s before the thrust gain]."""
    r = _clip100(rud)
    tau_lo = float(tau.min()) if tau.size else 0.0
    r *= (tau_lo / 100) if tau.size and tau_lo == float(tau.max()) else (tau / 100)
    return r


def _same_bits(a: F64, b: F64) -> bool:
    """Whether two float arrays hold the same bit patterns (identity is the quick yes)."""
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a.view(np.int64), b.view(np.int64)))


def _actuator_terms(
    config: UsmConfig, st: UsmState
) -> tuple[dict[str, Any], tuple[F64, F64, F64] | None]:
    """The actuator-only terms of a propagation, from the state's cache when still valid.

    They depend on thrust, rudder and turn rate only (not on the record), so they are
    computed once per change of the actuators instead of every iteration.

    Returns
    -------
    (changes, terms)
        State changes refreshing the cache (empty when it was valid) and (demanded speed
        [m/s], thrust gain, clip(rudder)·turn_rate/100), or ``({}, None)`` in differential
        or reverse mode (the model computes those cases in place).
    """
    if bool(st.diff_mode.any()) or bool(st.reverse.any()):
        return {}, None
    tm = config.thrust_map
    # a thrust map that can still change (not frozen) is never trusted from the cache
    cacheable = tm is None or bool(getattr(tm, "_frozen", False))
    if (
        cacheable
        and st.act_config is config
        and _same_bits(st.act_thrust, st.thrust)
        and _same_bits(st.act_rudder, st.rudder)
        and _same_bits(st.act_tau, st.turn_rate)
    ):
        return {}, (st.act_vs, st.act_gain, st.act_rt)
    vs = _demanded_speed(config, st.thrust, st.rudder)
    gain = _thrust_gain(st.thrust)
    rt = _rudder_rate(st.rudder, st.turn_rate)
    ch = {
        "act_thrust": st.thrust,
        "act_rudder": st.rudder,
        "act_tau": st.turn_rate,
        "act_vs": vs,
        "act_gain": gain,
        "act_rt": rt,
        "act_config": config if cacheable else None,
    }
    return ch, (vs, gain, rt)


def _propagate_record(
    config: UsmConfig,
    st: UsmState,
    rec: dict[str, Any],
    dt: F64,
    drift_x: F64 | float,
    drift_y: F64 | float,
    tsm: list[F64],
    act: tuple[F64, F64, F64] | None = None,
) -> dict[str, Any]:
    """``propagateNodeRecord``: one record over dt (all rows; the caller selects).

    ``act`` = (demanded speed, thrust gain, clip(rudder)·turn_rate/100) from
    :func:`_actuator_terms`, or None to compute them here (differential or reverse mode).

    Exact transcriptions of the program's formulas, with three exact-to-rounding
    shortcuts: sin/cos of the headings and sin(pitch) come from caches, and the direction
    of the vector-mean heading is (s, c)/|(s, c)| instead of sin/cos(atan2(s, c)) (the same
    to ~1e-16; the program's form is used where |(s, c)| = 0).
    """
    v22 = config.variant == "usm_v22"
    v0 = rec["speed"]
    h0 = rec["heading"]
    diff = st.diff_mode
    any_diff = bool(diff.any())
    rev = st.reverse
    any_rev = bool(rev.any())
    pos_dt = dt > 0
    all_pos = bool(pos_dt.all())
    # one dt for every vehicle (the usual case): scalar arithmetic, same bits as the array
    dt_lo = float(dt.min()) if dt.size else 0.0
    dts: F64 | float = dt_lo if dt.size and dt_lo == float(dt.max()) else dt

    # ---- speed (§3.1 / §3.3)
    if any_diff:
        t_sp = np.where(diff, (st.thrust_l + st.thrust_r) / 2.0, st.thrust)
        r_sp = np.where(diff, (st.thrust_l - st.thrust_r) / 2, st.rudder)
    else:
        t_sp = st.thrust
        r_sp = st.rudder
    if any_rev:
        t_sp = np.where(rev, -t_sp, t_sp)
        r_sp = np.where(rev, -r_sp, r_sp)
    if act is not None and not any_diff and not any_rev:
        vs = act[0]  # (never written in place below)
    else:
        act = None
        vs = _demanded_speed(config, t_sp, r_sp)
    with np.errstate(all="ignore"):
        if config.max_acceleration > 0:
            up = vs > v0
            if up.any():
                acc = np.subtract(vs, v0)
                acc /= dts
                up &= acc > config.max_acceleration
                vs = np.where(up, (config.max_acceleration * dts) + v0, vs)
        if config.max_deceleration > 0:
            down = vs < v0
            if down.any():
                dec = np.subtract(v0, vs)
                dec /= dts
                if dt_lo >= 0:
                    # (v0 - vs)/dt > limit > 0 already implies vs < v0 when dt >= 0
                    down = dec > config.max_deceleration
                else:
                    down &= dec > config.max_deceleration
                vs = np.where(down, (config.max_deceleration * dts * -1) + v0, vs)
    v1 = vs if all_pos else np.where(pos_dt, vs, v0)

    # ---- heading (§3.2 / §3.3; V22 turn-speed map)
    thr = st.thrust
    # (``all()`` is one pass with no temporary: False as soon as some speed is exactly 0)
    rud = st.rudder if v1.all() else np.where(v1 == 0, 0.0, st.rudder)
    if any_rev:
        thr = np.where(rev, -thr, thr)
        rud = np.where(rev, -rud, rud)
    if v22:
        full_rate, null_rate, null_speed = tsm
        tr = st.turn_rate
        ok = (tr > 0) & (tr <= 100)
        full_rate = np.where(ok, tr, full_rate)
        null_rate = np.where(ok & (null_rate > full_rate), full_rate, null_rate)
        null_speed = np.minimum(null_speed, _V22_FULL_SPEED)
        with np.errstate(all="ignore"):
            pct = (v1 - null_speed) / (_V22_FULL_SPEED - null_speed)
            rate = (pct * (full_rate - null_rate)) + null_rate
        rate = np.where(_V22_FULL_SPEED - null_speed <= 0, 0.0, rate)
        rate = np.where(v1 >= _V22_FULL_SPEED, full_rate, rate)
        rate = np.where(v1 <= null_speed, null_rate, rate)
        tsm[0], tsm[1], tsm[2] = full_rate, null_rate, null_speed
        tau = np.clip(rate, 0.0, 100.0)
    else:
        tau = st.turn_rate  # kept in [0, 100] by init and USM_TURN_RATE
    turning = rud.any()
    if turning:
        # dh = (1 + ((thr - 50) / 50)) · ((clip(rud) · (tau / 100)) · dt), in place
        if act is not None and not v22 and rud is st.rudder:
            dh = np.multiply(act[2], dts)
        else:
            dh = _rudder_rate(rud, tau)
            dh *= dts
        if act is not None:
            dh *= act[1]
        else:
            dh *= _thrust_gain(thr)
    else:
        dh = np.zeros_like(h0)
    rot = st.rotate_speed
    if rot.any():
        dh = dh + (dt * rot)
    if any_diff:
        tl, tr_ = st.thrust_l, st.thrust_r
        if any_rev:
            tl, tr_ = np.where(rev, -st.thrust_r, tl), np.where(rev, st.thrust_l, tr_)
        dh_d = (_DIFF_FULL_RATE * ((tl - tr_) / 200)) * dt
        dh_d = dh_d + (dt * rot)
        h_diff = np.where(pos_dt, _angle360(dh_d + h0), h0)
        y_diff = np.where(pos_dt, -_deg2rad(_angle180(h_diff)), rec["yaw"])
        h_norm = _angle360(dh + h0)
        h1 = np.where(diff, h_diff, h_norm)
        yaw = np.where(diff, y_diff, -_deg2rad(_angle180(h_norm)))
    else:
        h1 = _angle360(dh + h0)
        yaw = _yaw_of(h1)

    # ---- depth and pitch (§3.4)
    elev = st.elevator
    b = st.buoyancy_rate
    depth0 = rec["depth"]
    psin, _n, _r = _refresh(rec["pkey"], rec["pitch"], rec["psin"], None)
    if not (elev.any() or psin.any()):
        # level (pitch 0) and no elevator: the pitch term and the actuator term are ±0, so
        # the depth rate is -b for moving and stopped vehicles alike, and the new pitch (and
        # its sine) is zero (up to the sign of a zero)
        # sin(pitch) = 0 everywhere means pitch = 0 everywhere: keep those arrays
        pitch, psin1 = rec["pitch"], psin
        b_lo = float(b.min())
        if b_lo == float(b.max()) and np.isscalar(dts):
            # one buoyancy rate and one dt: depth0 + ((-b)·dt), the rate term a scalar
            rise = (-b_lo) * dts
            if rise < 0 and not depth0.any():
                depth = depth0  # at the surface and floating up: clamped to 0 again
            else:
                depth = np.add(depth0, rise) if b_lo != 0 else depth0
        else:
            depth = np.multiply(b, -1.0)  # depth0 + ((-b)·dt), as the program adds it
            depth *= dts
            depth += depth0
    else:
        depth, pitch, psin1 = _depth_pitch(config, v1, depth0, psin, elev, b, dt)
    if depth is depth0:
        neg = depth < 0
        if neg.any():
            depth = np.where(neg, 0.0, depth)
    else:
        np.maximum(depth, 0.0, out=depth)  # = where(depth < 0, 0, depth) (NaN kept)

    # ---- V22 reverse mode: +180 inside the model, before the position step (§12)
    if v22 and any_rev:
        h1 = np.where(rev, _angle360(h1 + 180), h1)
        ny = yaw + _PI_TRUNC
        ny = np.where(ny > 2 * _PI_TRUNC, ny - 2 * _PI_TRUNC, ny)
        yaw = np.where(rev, ny, yaw)

    # ---- position, speed averaging, SOG, HOG (§3.5)
    hs0, hc0, _r = _refresh(rec["hkey"], h0, rec["hsin"], rec["hcos"])
    changed = h1 != h0
    if not changed.any():
        hs1, hc1 = hs0, hc0
    elif changed.all():
        hs1, hc1 = _sin_cos_deg(h1)
    else:
        idx = np.flatnonzero(changed)
        a, c_ = _sin_cos_deg(h1[idx])
        hs1 = hs0.copy()
        hc1 = hc0.copy()
        hs1[idx] = a
        hc1[idx] = c_
    sp = np.add(v1, v0)
    sp /= 2
    s = np.add(hs0, hs1)
    c = np.add(hc0, hc1)
    with np.errstate(all="ignore"):
        # k = sp / sqrt(s·s + c·c), then (xdot, ydot) = (s·k, c·k), in place
        k = np.multiply(s, s)
        k2 = np.multiply(c, c)
        k += k2
        np.sqrt(k, out=k)
        np.divide(sp, k, out=k)
    # one reduction: a finite sum means every k is finite (else check element-wise)
    if not math.isfinite(float(np.sum(k))) and not np.isfinite(k).all():
        degenerate = ~np.isfinite(k)
        hdg = np.arctan2(s, c)
        with np.errstate(all="ignore"):
            xdot = np.where(degenerate, np.sin(hdg) * sp, s * k)
            ydot = np.where(degenerate, np.cos(hdg) * sp, c * k)
    else:
        xdot = s
        xdot *= k
        ydot = c
        ydot *= k
    x0 = rec["x"]
    y0 = rec["y"]
    drift = not (np.isscalar(drift_x) and drift_x == 0 and np.isscalar(drift_y) and drift_y == 0)
    if drift:
        # drift arrays that are all zero add exactly ±0: skip the additions (not the
        # speed-over-ground formula, which differs from |sp| in the last bit)
        dx_on = bool(np.any(drift_x))
        dy_on = bool(np.any(drift_y))
        nx = np.multiply(xdot, dts)
        nx += x0
        ny_ = np.multiply(ydot, dts)
        ny_ += y0
        if dx_on:
            nx += np.multiply(drift_x, dts)
            gx = np.add(xdot, drift_x)
        else:
            gx = xdot
        if dy_on:
            ny_ += np.multiply(drift_y, dts)
            gy = np.add(ydot, drift_y)
        else:
            gy = ydot
        sog = np.multiply(gx, gx)
        sog += np.multiply(gy, gy)
        np.sqrt(sog, out=sog)
    else:
        nx = np.multiply(xdot, dts)
        nx += x0
        ny_ = np.multiply(ydot, dts)
        ny_ += y0
        sog = np.abs(sp)
    hog = rel_ang(x0, y0, nx, ny_)

    # ---- V22 turn-radius limit (SimEngine::enforceTurnLimit), after the position step
    h_cached = h1  # the heading hsin/hcos belong to (the limit below may change h1)
    if v22:
        tr_on = st.turn_radius > 0
        if tr_on.any():
            nx, ny_, h1 = _turn_limit(
                config, st.turn_radius, tr_on, x0, y0, h0, v1, sp, nx, ny_, h1
            )

    # ---- altitude (§3.6)
    wd = st.water_depth
    has_wd = (wd > 0) if wd.any() else None
    if has_wd is not None and has_wd.any():
        alt = np.where(has_wd, np.maximum(wd - depth, 0.0), rec["altitude"])
        alt_set = rec["altitude_set"] | has_wd
    else:
        alt = rec["altitude"]
        alt_set = rec["altitude_set"]

    return {
        "x": nx,
        "y": ny_,
        "heading": h1,
        "speed": sp,
        "depth": depth,
        "pitch": pitch,
        "yaw": yaw,
        "altitude": alt,
        "altitude_set": alt_set,
        "sog": sog,
        "hog": hog,
        "hsin": hs1,
        "hcos": hc1,
        "hkey": h_cached,
        "psin": psin1,
        "pkey": pitch,
        "geo_x": nx,
        "geo_y": ny_,
    }


def _depth_pitch(
    config: UsmConfig, v1: F64, depth0: F64, psin: F64, elev: F64, b: F64, dt: F64
) -> tuple[F64, F64, F64]:
    """Depth [m], pitch [rad] and sin(pitch) after one step (§3.4), before the depth clamp."""
    mdrs = config.max_depth_rate_speed
    moving = v1 > 0
    all_moving = bool(moving.all())
    with np.errstate(all="ignore"):
        r_pitch = -psin * v1
        if elev.any():
            pct_d = np.sqrt(np.minimum(v1 / mdrs, 1.0)) if mdrs > 0 else 1.0
            r_act = (_clip100(elev) / 100) * (pct_d * config.max_depth_rate)
            total = ((-b) + r_pitch) + r_act
            q = r_pitch + r_act
        else:  # no elevator: the actuator term is exactly 0 (only a zero's sign differs)
            total = (-b) + r_pitch
            q = r_pitch
        d_fwd = depth0 + (total * dt)
        ratio = q / v1
        in_range = np.abs(q) <= v1
        p_fwd = np.where(in_range, -np.arcsin(ratio), 0.0)
        s_fwd = np.where(in_range, -ratio, 0.0)
    if all_moving:
        depth, pitch, psin1 = d_fwd, p_fwd, s_fwd
    else:
        depth = np.where(moving, d_fwd, depth0 + (-1 * b * dt))
        pitch = np.where(moving, p_fwd, 0.0)
        psin1 = np.where(moving, s_fwd, 0.0)
    return depth, pitch, psin1


def _project_point(deg: F64, dist: F64, cx: F64, cy: F64) -> tuple[F64, F64]:
    """MOOS-IvP ``projectPoint`` (with its exact axis cases)."""
    deg = _angle360(deg)
    r = _deg2rad(deg)
    rx = cx + np.sin(r) * dist
    ry = cy + np.cos(r) * dist
    rx = np.where(deg == 0, cx, np.where(deg == 90, cx + dist, np.where(deg == 180, cx, rx)))
    rx = np.where(deg == 270, cx - dist, rx)
    ry = np.where(deg == 0, cy + dist, np.where(deg == 90, cy, np.where(deg == 180, cy - dist, ry)))
    ry = np.where(deg == 270, cy, ry)
    return rx, ry


def _turn_limit(
    config: UsmConfig,
    radius: F64,
    on: BoolA,
    x0: F64,
    y0: F64,
    h0: F64,
    v_prev: F64,
    v_new: F64,
    nx: F64,
    ny: F64,
    h1: F64,
) -> tuple[F64, F64, F64]:
    """V22 ``enforceTurnLimit``: clamp the turn implied by two records to a turn radius.

    The previous record is the one entering the position step (old position, prior heading
    h0, the new un-averaged speed); the new one has the averaged speed.  The radius shrinks
    with speed below ``max_speed``.  Only x, y and heading change (not yaw, SOG or HOG).
    """
    active = on & (h0 != h1)
    if not active.any():
        return nx, ny, h1
    osv = (v_prev + v_new) / 2
    ms = config.max_speed
    r_eff = radius
    if ms > 0:
        pct = 1 - ((ms - osv) / ms)
        r_eff = np.where(osv < ms, pct * radius, radius)
    dist = np.hypot(x0 - nx, y0 - ny)
    rang = rel_ang(x0, y0, nx, ny)
    a1 = _angle360(rang)
    a2 = _angle360(h0)
    adiff = np.where(a2 > a1, a2 - a1, a1 - a2)
    adiff = np.where(adiff >= 180, 360 - adiff, adiff)
    with np.errstate(all="ignore"):
        phi = (np.arcsin(dist / (2 * r_eff)) / _PI) * 180.0
    limit = active & ~(phi >= adiff)
    if not limit.any():
        return nx, ny, h1
    osh = _angle360(h0)
    hdg = _angle360(h1)
    port = np.where(hdg > osh, ~((hdg - osh) < 180), ~((osh - hdg) > 180))
    phix = np.where(port, h0 - phi, h0 + phi)
    px, py = _project_point(phix, dist, x0, y0)
    new_h = _angle360(np.where(port, h0 - phi * 2, h0 + phi * 2))
    return (np.where(limit, px, nx), np.where(limit, py, ny), np.where(limit, new_h, h1))


def _select(mask: BoolA, all_true: bool, new: Any, old: Any) -> Any:
    if all_true:
        return new
    return np.where(mask, new, old)


def iterate(
    config: UsmConfig, state: UsmState, moos_time: float | ArrayLike
) -> tuple[UsmState, dict[str, Any]]:
    """One program iteration (spec §2.2): propagate to ``moos_time``, then publish.

    Parameters
    ----------
    config : UsmConfig
        Effective parameters; ``config.variant`` selects ``usm`` or ``usm_v22``.
    state : UsmState
        State after the mail of this iteration was applied (:func:`apply_mail`).
    moos_time : float or array_like (N,)
        MOOS time of this iteration [s] (absolute times are fine: differences are taken in
        double precision as the program does).

    Returns
    -------
    (UsmState, dict)
        The new state and the publications of this iteration, in the program's order:
        variable name (with the prefix, e.g. ``NAV_X``) → array (N,), NaN where that vehicle
        did not publish (object arrays with None for strings such as ``USM_DRIFT_SUMMARY``).
        With ``dual_state`` the ``TRUE_X``/``TRUE_Y`` entries hold the GT values (published
        last).  A variable nobody published this iteration is absent.
    """
    n = state.n
    t = np.broadcast_to(np.asarray(moos_time, dtype=np.float64), (n,))
    return _iterate_rows(config, state, t)


def _iterate_rows(config: UsmConfig, state: UsmState, t: F64) -> tuple[UsmState, dict[str, Any]]:
    v22 = config.variant == "usm_v22"
    it = state.iteration + 1
    ch: dict[str, Any] = {"iteration": it, "moos_time": np.array(t, dtype=np.float64)}

    # which rows propagate
    if v22:
        run = state.enabled & ~state.paused & ~state.obstacle_hit
    else:
        run = ~state.obstacle_hit & ~state.paused
    all_run = bool(run.all())
    any_run = all_run or bool(run.any())

    if any_run:
        if state.pause_ticks.any():
            a = t - (state.pause_ticks // 100).astype(np.float64)
            dt = a - state.ts
        elif t.strides == (0,) and float(state.ts.min()) == float(state.ts.max()):
            # one clock and one time stamp for every vehicle (the usual case): dt is one
            # number (a 0-d array, broadcast below; the same bits as the element-wise form)
            dt = np.asarray(t[0] - state.ts[0])
        else:
            dt = t - state.ts
        rec = {k: getattr(state, k) for k in _RECORD}
        tsm = [state.tsm_full_rate, state.tsm_null_rate, state.tsm_null_speed]
        dual = bool(config.dual_state)
        cur_x: Any = 0.0
        cur_y: Any = 0.0
        cfield = config.current_field if bool(state.current_active.any()) else None
        if cfield is not None:
            sx = state.gt_x if dual else state.x
            sy = state.gt_y if dual else state.y
            fx, fy = cfield.force(sx, sy)
            cur_x = np.where(state.current_active, np.asarray(fx, dtype=np.float64), 0.0)
            cur_y = np.where(state.current_active, np.asarray(fy, dtype=np.float64), 0.0)
            ch["current_x"] = _select(run, all_run, cur_x, state.current_x)
            ch["current_y"] = _select(run, all_run, cur_y, state.current_y)
        dx = state.drift_x + cur_x if cfield is not None else state.drift_x
        dy = state.drift_y + cur_y if cfield is not None else state.drift_y
        act_ch, act = _actuator_terms(config, state)
        ch.update(act_ch)
        if dual:
            new_nav = _propagate_record(config, state, rec, dt, 0.0, 0.0, tsm, act)
            grec = {k: getattr(state, "gt_" + k) for k in _RECORD}
            new_gt = _propagate_record(config, state, grec, dt, dx, dy, tsm, act)
            for k in _RECORD:
                ch["gt_" + k] = _select(run, all_run, new_gt[k], grec[k])
        else:
            new_nav = _propagate_record(config, state, rec, dt, dx, dy, tsm, act)
        for k in _RECORD:
            ch[k] = _select(run, all_run, new_nav[k], rec[k])
        ch["ts"] = _select(run, all_run, state.ts + dt, state.ts)
        ch["propagated"] = state.propagated | run
        if v22:
            ch["tsm_full_rate"] = _select(run, all_run, tsm[0], state.tsm_full_rate)
            ch["tsm_null_rate"] = _select(run, all_run, tsm[1], state.tsm_null_rate)
            ch["tsm_null_speed"] = _select(run, all_run, tsm[2], state.tsm_null_speed)

    if v22:
        disabled = ~state.enabled
        if disabled.any():
            ch["ts"] = np.where(disabled, t, ch.get("ts", state.ts))
    new = _evolve(state, ch)
    new, pubs = _publish(config, new, t)
    return new, pubs


# --------------------------------------------------------------------------------------
# publication (§2.2 steps 5-8, §7)
# --------------------------------------------------------------------------------------


def _masked(mask: BoolA, all_true: bool, val: Any) -> F64:
    v = np.asarray(val, dtype=np.float64)
    if all_true:
        return v
    return np.where(mask, v, np.nan)


def _masked_str(mask: BoolA, texts: Mapping[int, str], n: int) -> NDArray[np.object_]:
    out = np.full(n, None, dtype=object)
    for i, s in texts.items():
        if mask[i]:
            out[i] = s
    return out


def _publish(config: UsmConfig, st: UsmState, t: F64) -> tuple[UsmState, dict[str, Any]]:
    n = st.n
    v22 = config.variant == "usm_v22"
    pubs: dict[str, Any] = {}
    ch: dict[str, Any] = {}
    if v22:
        alive = st.enabled
    else:
        alive = st.enabled & ~st.obstacle_hit
    any_alive = bool(alive.any())
    if not any_alive:
        return st, pubs

    # ---- buoyancy and trim handshake (usm; V22 needs an embedded depth PID: never completes)
    if not v22 and bool((st.buoy_req | st.trim_req).any()):
        buoy_req = st.buoy_req.copy()
        trim_req = st.trim_req.copy()
        last = st.last_report.copy()
        breports: dict[int, str] = {}
        treports: dict[int, str] = {}
        for i in np.flatnonzero(alive & (buoy_req | trim_req)):
            now = float(t[i])
            if buoy_req[i]:
                if now - st.buoy_req_time[i] >= _BUOYANCY_DELAY:
                    breports[i] = "status=2,error=0,completed,buoyancy=0.0"
                    buoy_req[i] = False
                elif now - last[i] >= _REPORT_INTERVAL:
                    breports[i] = "status=1,error=0,progressing,buoyancy=0.0"
                    last[i] = now
            if trim_req[i]:
                pdeg = float(st.pitch[i]) * 180.0 / _PI
                elapsed = now - st.trim_req_time[i]
                if (abs(pdeg) <= config.trim_tolerance and elapsed >= _BUOYANCY_DELAY) or (
                    elapsed >= config.max_trim_delay
                ):
                    treports[i] = f"status=2,error=0,completed,trim_pitch={pdeg:.5f},trim_roll=0.0"
                    trim_req[i] = False
                elif now - last[i] >= _REPORT_INTERVAL:
                    treports[i] = (
                        f"status=1,error=0,progressing,trim_pitch={pdeg:.5f},trim_roll=0.0"
                    )
                    last[i] = now
        ch.update(buoy_req=buoy_req, trim_req=trim_req, last_report=last)
        if breports:
            pubs["BUOYANCY_REPORT"] = _masked_str(alive, breports, n)
        if treports:
            pubs["TRIM_REPORT"] = _masked_str(alive, treports, n)

    # ---- NAV (and GT) records
    nav_mask = alive & (st.iteration % 2 == 0) if v22 else alive
    any_nav = bool(nav_mask.any())
    if any_nav:
        all_nav = bool(nav_mask.all())
        heading, hog, yaw = st.heading, st.hog, st.yaw
        if not v22 and bool(st.reverse.any()):
            rv = st.reverse
            heading = np.where(rv, _angle360(heading + 180), heading)
            hog = np.where(rv, _angle360(hog + 180), hog)
            ny = yaw + _PI_TRUNC
            ny = np.where(ny > 2 * _PI_TRUNC, ny - 2 * _PI_TRUNC, ny)
            yaw = np.where(rv, ny, yaw)
        speed = st.speed
        if v22 and bool(st.obstacle_hit.any()):
            speed = np.where(st.obstacle_hit, 0.0, speed)
        _post_record(
            config,
            st,
            pubs,
            config.prefix,
            nav_mask,
            all_nav,
            st.x,
            st.y,
            heading,
            speed,
            st.depth,
            st.pitch,
            yaw,
            hog,
            st.sog,
            st.altitude,
            st.altitude_set,
            st.geo_x,
            st.geo_y,
        )
        if config.dual_state:
            gspeed = st.gt_speed
            if v22 and bool(st.obstacle_hit.any()):
                gspeed = np.where(st.obstacle_hit, 0.0, gspeed)
            _post_record(
                config,
                st,
                pubs,
                config.prefix + "_GT",
                nav_mask,
                all_nav,
                st.gt_x,
                st.gt_y,
                st.gt_heading,
                gspeed,
                st.gt_depth,
                st.gt_pitch,
                st.gt_yaw,
                st.gt_hog,
                st.gt_sog,
                st.gt_altitude,
                st.gt_altitude_set,
                st.gt_geo_x,
                st.gt_geo_y,
            )

    # ---- drift summaries
    fresh = st.drift_fresh & alive
    if bool(fresh.any()):
        cache: dict[tuple[float, float], str] = {}
        texts: dict[int, str] = {}
        for i in np.flatnonzero(fresh):
            key = (float(st.drift_x[i]), float(st.drift_y[i]))
            if key not in cache:
                cache[key] = drift_summary(*key)
            texts[int(i)] = cache[key]
        arr = _masked_str(fresh, texts, n)
        if not v22:
            pubs["USM_FSUMMARY"] = arr
        pubs["USM_DRIFT_SUMMARY"] = arr
        ch["drift_fresh"] = st.drift_fresh & ~alive
    if ch:
        st = _evolve(st, ch)
    return st, pubs


def _post_record(
    config: UsmConfig,
    st: UsmState,
    pubs: dict[str, Any],
    prefix: str,
    mask: BoolA,
    all_true: bool,
    x: F64,
    y: F64,
    heading: F64,
    speed: F64,
    depth: F64,
    pitch: F64,
    yaw: F64,
    hog: F64,
    sog: F64,
    altitude: F64,
    altitude_set: BoolA,
    geo_x: F64,
    geo_y: F64,
) -> None:
    v22 = config.variant == "usm_v22"
    n = st.n
    pubs[prefix + "_X"] = _masked(mask, all_true, x)
    pubs[prefix + "_Y"] = _masked(mask, all_true, y)
    if st.geodesy is not None:
        # usm projects the published x, y; V22 publishes the lat/long its model computed
        lat, lon = (
            st.geodesy.local_to_latlon(geo_x, geo_y) if v22 else st.geodesy.local_to_latlon(x, y)
        )
        pubs[prefix + "_LAT"] = _masked(mask, all_true, lat)
        pubs[prefix + "_LONG"] = _masked(mask, all_true, lon)
    pubs[prefix + "_HEADING"] = _masked(mask, all_true, heading)
    sp = snap_speed(speed) if config.compat == "moos" else speed
    if v22:
        sp = np.minimum(sp, config.max_speed)
    pubs[prefix + "_SPEED"] = _masked(mask, all_true, sp)
    pubs[prefix + "_DEPTH"] = _masked(mask, all_true, depth)
    if not v22:
        if all_true:
            pubs["SIMULATION_MODE"] = _const_strings(n, "TRUE")
        else:
            pubs["SIMULATION_MODE"] = np.where(mask, "TRUE", None).astype(object)
        pubs[prefix + "_Z"] = _masked(mask, all_true, -depth)
        pubs[prefix + "_PITCH"] = _masked(mask, all_true, pitch)
    # V22 (commit a2a9b716) publishes _YAW even without an embedded depth PID (reference data)
    pubs[prefix + "_YAW"] = _masked(mask, all_true, yaw)
    if not v22:
        pubs["TRUE_X"] = _masked(mask, all_true, x)
        pubs["TRUE_Y"] = _masked(mask, all_true, y)
    pubs[prefix + "_HEADING_OVER_GROUND"] = _masked(mask, all_true, _angle360(hog))
    pubs[prefix + "_SPEED_OVER_GROUND"] = _masked(mask, all_true, sog)
    alt_mask = mask & altitude_set
    if bool(alt_mask.any()):
        pubs[prefix + "_ALTITUDE"] = _masked(alt_mask, bool(alt_mask.all()), altitude)


# --------------------------------------------------------------------------------------
# mail (§6)
# --------------------------------------------------------------------------------------


def _parse_drift_vector(text: str) -> tuple[float, float] | None:
    """``"ang,mag"`` → (dx, dy) [m/s] as ``setDriftVector`` computes them, or None."""
    left, sep, right = text.partition(",")
    left = left.strip(" \t")
    right = right.strip(" \t") if sep else ""
    if not is_moos_number(left) or not is_moos_number(right):
        return None
    ang = float(_angle360(np.array([moos_atof(left)]))[0])
    mag = moos_atof(right)
    rads = float(_heading_to_radians(ang))
    return math.cos(rads) * mag, math.sin(rads) * mag


def _init_position(text: str) -> tuple[list[tuple[str, float]], bool, list[str]]:
    """``initPosition``: the (key, value) items applied before the first unknown key.

    Values are read like C ``atof`` ("12abc" → 12, junk → 0), as the program does; each value
    that is not a plain number is noted, and a non-finite one ("nan", "inf", which C ``atof``
    would return) is rejected so that it cannot poison the state [ours].  Returns the items,
    whether the whole text was read, and the notes.
    """
    out: list[tuple[str, float]] = []
    notes: list[str] = []
    if text == "":
        return out, True, notes  # MOOS parseString("") has no items
    for i, raw in enumerate(text.split(",")):
        item = raw.strip(" \t").lower()
        param, _sep, value = item.partition("=")
        param = param.strip(" \t")
        value = value.strip(" \t")
        if value == "":
            value = param
            param = ("x", "y", "heading", "speed", "depth")[i] if i < 5 else param
        key = _RESET_KEYS.get(param)
        if key is None:
            return out, False, notes
        if _NON_FINITE_RE.match(value):
            notes.append(f"item {raw.strip()!r}: non-finite value rejected, {key} kept")
            continue
        val = moos_atof(value)
        if not is_moos_number(value):
            notes.append(f"item {raw.strip()!r}: {value!r} is not a number, read as {val:g} (atof)")
        out.append((key, val))
    return out, True, notes


_RESET_KEYS = {
    "x": "x",
    "y": "y",
    "heading": "heading",
    "deg": "heading",
    "hdg": "heading",
    "speed": "speed",
    "spd": "speed",
    "depth": "depth",
    "dep": "depth",
}
_NON_FINITE_RE = re.compile(r"^[+-]?(nan|inf)", re.IGNORECASE)


@lru_cache(maxsize=8)
def _all_rows(n: int) -> NDArray[np.intp]:
    a = np.arange(n)
    a.flags.writeable = False
    return a


def _rows_index(n: int, rows: ArrayLike | None) -> NDArray[np.intp]:
    if rows is None:
        return _all_rows(n)
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n,):
            raise ConfigError(f"row mask must have shape ({n},), got {r.shape}", param="rows")
        return np.flatnonzero(r)
    return r.astype(np.intp).reshape(-1)


def apply_mail(
    config: UsmConfig,
    state: UsmState,
    var: str,
    value: float | str | ArrayLike,
    *,
    moos_time: float,
    rows: ArrayLike | None = None,
    source: str = "",
) -> tuple[UsmState, list[tuple[str, object]], list[str]]:
    """Apply one typed MOOS message (spec §6) to some or all vehicles.

    Parameters
    ----------
    config : UsmConfig
        Effective parameters (``variant`` and ``compat`` select the rules).
    state : UsmState
        Current state.
    var : str
        MOOS variable name (case-sensitive, as MOOS).
    value : float, str or array_like
        A ``str`` is a MOOS *string* message (its numeric value reads −1); a number is a
        *double* message (its string value reads ""); an array (one value per selected row)
        is a batch of double messages.
    moos_time : float
        MOOS time at which the message is handled [s] (the time of the iteration it
        precedes); used by the rudder rate limit, the pause clock and the handshakes.
    rows : array_like of int or bool, optional
        Vehicles that receive the message (default: all).
    source : str
        The sender (``DRIFT_*`` sources; V22 posts a drift summary for each new source).

    Returns
    -------
    (UsmState, posts, warnings)
        ``posts`` are immediate publications ``(name, value)`` — ``USM_RESET_COUNT`` (an
        array (N,), NaN for rows not reset), ``BUOYANCY_REPORT``/``TRIM_REPORT`` (str).
        ``warnings`` are texts naming variable, source and time (wrong message type,
        non-finite value rejected, unsubscribed or dead alias, mode-dependent variable).
    """
    n = state.n
    v22 = config.variant == "usm_v22"
    doc = config.compat == "doc"
    idx = _rows_index(n, rows)
    posts: list[tuple[str, object]] = []
    warns: list[str] = []
    where = f"{var} from {source or '?'} at t={moos_time:.6g} s"
    if idx.size == 0:
        return state, posts, warns

    is_str = isinstance(value, str)
    if is_str:
        sval = str(value)
        dval: Any = -1.0
    else:
        sval = ""
        dval = np.asarray(value, dtype=np.float64)
        if dval.ndim == 0 or (dval.size == 1 and idx.size == 1):
            dval = float(dval.reshape(-1)[0])  # one value: the scalar path
        elif dval.shape != idx.shape:
            if dval.shape == (n,):
                dval = dval[idx]
            else:
                raise ConfigError(
                    f"{var}: value array shape {dval.shape} does not match the rows ({idx.size})",
                    param=var,
                )
        # one reduction: a finite sum means every value is finite (an overflowing sum of
        # finite values falls through to the element check)
        if isinstance(dval, float):
            all_finite = math.isfinite(dval)
        else:
            all_finite = math.isfinite(float(np.sum(dval))) or bool(np.all(np.isfinite(dval)))
        if not all_finite:
            warns.append(f"{where}: non-finite value rejected; previous value kept")
            ok = np.isfinite(dval)
            if np.ndim(dval) == 0:
                return state, posts, warns
            idx = idx[ok]
            dval = dval[ok]
            if idx.size == 0:
                return state, posts, warns

    # aliases and subscriptions
    warned = state.warned
    if var in ("USM_BUOYANCY_RATE", "USM_WATER_DEPTH", "USM_CURRENT_FIELD"):
        if var not in warned:
            warned = warned | {var}
            if doc:
                warns.append(
                    f"{where}: accepted in the documented mode; the real program "
                    "does not subscribe to it (compat='moos' ignores it)"
                )
            else:
                warns.append(f"{where}: not subscribed by the program (compat='moos'); ignored")
        if not doc:
            return _evolve(state, {"warned": warned}), posts, warns
        if var == "USM_BUOYANCY_RATE":
            var = "BUOYANCY_RATE"
        elif var == "USM_WATER_DEPTH":
            var = "WATER_DEPTH"
    if var in _DEAD_ALIASES:
        warns.append(f"{where}: dead alias, not subscribed by the program; ignored")
        return state, posts, warns
    if var in _V22_ONLY and not v22:
        warns.append(f"{where}: not subscribed by uSimMarine (V22 only); ignored")
        return state, posts, warns
    known = var in _DOUBLE_VARS or var in _STRING_VARS or var == "OBSTACLE_HIT"
    if not known:
        warns.append(f"{where}: not a uSimMarine subscription; ignored")
        return state, posts, warns
    if var in _DOUBLE_VARS and is_str:
        warns.append(f"{where}: string message for a double variable (reads -1)")
    elif var in _STRING_VARS and not is_str:
        warns.append(f"{where}: double message for a string variable (reads '')")

    ch: dict[str, Any] = {}
    if warned is not state.warned:
        ch["warned"] = warned

    def get(name: str) -> Any:
        return ch[name] if name in ch else getattr(state, name)

    def put(name: str, rows_: Any, val: Any, *, owned: bool = False) -> None:
        """Set ``name[rows_] = val`` on a copy (state arrays are never written in place).

        ``rows_`` may be ``slice(None)`` (every vehicle): then the new array is ``val``
        itself when the caller ``owned`` it (a fresh array of the right shape and dtype),
        else one copy of it, instead of a copy of the old array plus an assignment.
        """
        old = get(name)
        if isinstance(rows_, slice) and rows_ == slice(None):
            if owned:
                ch[name] = val
            elif np.ndim(val) == 0:
                ch[name] = np.full(old.shape, val, dtype=old.dtype)
            else:
                ch[name] = np.array(np.broadcast_to(val, old.shape), dtype=old.dtype)
            return
        a = np.array(old, copy=True)
        a[rows_] = val
        ch[name] = a

    # every vehicle receives the message (no row selection, no value rejected)
    every = rows is None and idx.size == n

    def sub(mask: Any) -> tuple[Any, Any]:
        m = np.asarray(mask, dtype=bool)
        if every and m.all():
            return slice(None), dval  # every vehicle: a slice is much cheaper than an index
        d = dval[m] if np.ndim(dval) else dval
        return idx[m], d

    t_msg = float(moos_time)

    if var == "DESIRED_THRUST":
        dm = state.diff_mode if v22 else state.diff_flag
        gate = ~(dm if every else dm[idx])
        r, d = sub(gate)
        put("thrust", r, d)
        put("diff_mode", r, False)
    elif var == "DESIRED_RUDDER":
        dm = state.diff_mode if v22 else state.diff_flag
        gate = ~(dm if every else dm[idx])
        r, d = sub(gate)
        prev = state.rudder[r]
        rate = config.max_rudder_degs_per_sec
        if rate > 0:
            maxd = np.subtract(t_msg, state.rudder_tstamp[r])
            maxd *= rate
        else:
            maxd = np.full(np.shape(prev), 100.0)
        new_rudder = _limit_change(np.subtract(d, prev), maxd)
        new_rudder += prev  # prev + change
        # (every vehicle: the old rudder array itself becomes rudder_prev, no copy needed —
        # state arrays are never written in place)
        put("rudder_prev", r, state.rudder if isinstance(r, slice) else prev, owned=True)
        put("rudder", r, new_rudder, owned=np.shape(new_rudder) == (n,))
        put("diff_mode", r, False)
        put("rudder_tstamp", r, t_msg)
    elif var == "DESIRED_ELEVATOR":
        put("elevator", idx, dval)
    elif var in ("DESIRED_THRUST_L", "DESIRED_THRUST_R"):
        gate = (state.diff_mode if v22 else state.diff_flag)[idx]
        r, d = sub(gate)
        if isinstance(r, slice):
            r = idx
        d = np.clip(d, -100.0, 100.0)
        rv = state.reverse[r]
        left = var == "DESIRED_THRUST_L"
        own, other = ("thrust_l", "thrust_r") if left else ("thrust_r", "thrust_l")
        dd = np.broadcast_to(d, r.shape)
        put(own, r[~rv], dd[~rv])
        put(other, r[rv], -dd[rv])
        put("diff_mode", r, True)
    elif var == "THRUST_MODE_DIFFERENTIAL":
        if v22:
            s = sval.lower()
            if s in ("differential", "true"):
                put("diff_mode", idx, True)
            elif s in ("normal", "false"):
                put("diff_mode", idx, False)
        else:
            flags = np.array(
                [_set_boolean_on_string(bool(b), sval) for b in state.diff_flag[idx]], dtype=bool
            )
            put("diff_flag", idx, flags)
            put("diff_mode", idx, flags)
    elif var == "THRUST_MODE_REVERSE":
        s = sval.lower()
        if v22:
            if s in ("reverse", "true"):
                put("reverse", idx, True)
            elif s in ("normal", "false"):
                put("reverse", idx, False)
        else:
            put("reverse", idx, s == "true")
    elif var == "USM_SIM_PAUSED":
        if v22:
            newp = np.array(
                [_set_boolean_on_string(bool(b), sval) for b in state.paused[idx]], dtype=bool
            )
        else:
            newp = np.full(idx.shape, sval.upper() == "TRUE")
        oldp = state.paused[idx]
        start = idx[newp & ~oldp]
        stop = idx[~newp & oldp]
        if start.size:
            put("pause_start", start, t_msg)
        if stop.size:
            ticks = np.rint((t_msg - state.pause_start[stop]) * 100.0).astype(np.int64)
            put("pause_ticks", stop, state.pause_ticks[stop] + ticks)
        put("paused", idx, newp)
    elif var == "BUOYANCY_RATE":
        put("buoyancy_rate", idx, dval)
    elif var == "ROTATE_SPEED":
        put("rotate_speed", idx, dval)
    elif var in ("DRIFT_X", "CURRENT_X", "DRIFT_Y", "CURRENT_Y"):
        put("drift_x" if var.endswith("_X") else "drift_y", idx, dval)
        if v22:
            _v22_source(state, ch, idx, source)
    elif var in ("DRIFT_VECTOR", "DRIFT_VECTOR_ADD"):
        vec = _parse_drift_vector(sval)
        if vec is None:
            warns.append(f"{where}: {sval!r} is not 'ang,mag' with two plain numbers; ignored")
        else:
            if var == "DRIFT_VECTOR_ADD":
                put("drift_x", idx, state.drift_x[idx] + vec[0])
                put("drift_y", idx, state.drift_y[idx] + vec[1])
            else:
                put("drift_x", idx, vec[0])
                put("drift_y", idx, vec[1])
            if v22:
                _v22_source(state, ch, idx, source)
            else:
                put("drift_fresh", idx, True)
    elif var == "DRIFT_VECTOR_MULT":
        dxr = state.drift_x[idx]
        dyr = state.drift_y[idx]
        ang = rel_ang(0.0, 0.0, dxr, dyr)
        mag = np.hypot(dxr, dyr)
        new_mag = mag * dval
        rads = _heading_to_radians(ang)
        put("drift_x", idx, np.cos(rads) * new_mag)
        put("drift_y", idx, np.sin(rads) * new_mag)
        if v22:
            _v22_source(state, ch, idx, source)
        else:
            put("drift_fresh", idx, True)
    elif var == "WATER_DEPTH":
        d = np.broadcast_to(dval, idx.shape)
        ok = d >= 0
        put("water_depth", idx[ok], d[ok])
    elif var == "USM_RESET":
        counts = state.reset_count[idx] + 1
        put("reset_count", idx, counts)
        items, _ok, notes = _init_position(sval)
        warns.extend(f"{where}: {note}" for note in notes)
        for key, val in items:
            put(key, idx, val)
            put("gt_" + key, idx, val)
        out = np.full(n, np.nan)
        out[idx] = counts
        posts.append(("USM_RESET_COUNT", out))
        if not _ok:
            warns.append(f"{where}: {sval!r} has an unknown key; items before it applied")
    elif var == "USM_TURN_RATE":
        put("turn_rate", idx, np.clip(dval, 0.0, 100.0))
    elif var == "USM_ENABLED":
        en = np.array(
            [_set_boolean_on_string(bool(b), sval) for b in state.enabled[idx]], dtype=bool
        )
        put("enabled", idx, en)
    elif var == "OBSTACLE_HIT":
        if v22:
            if sval.lower() == "true":
                put("obstacle_hit", idx, True)
                put("speed", idx, 0.0)
                put("gt_speed", idx, 0.0)
        else:
            hit = np.broadcast_to(np.asarray(dval) != 0, idx.shape)
            put("obstacle_hit", idx[hit], True)
    elif var == "BUOYANCY_CONTROL":
        if sval.lower() == "true":
            put("buoyancy_rate", idx, 0.0)
            put("buoy_req_time", idx, t_msg)
            put("buoy_req", idx, True)
            put("last_report", idx, t_msg)
            posts.append(("BUOYANCY_REPORT", "status=1,error=0,progressing,buoyancy=0.0"))
    elif var == "TRIM_CONTROL":
        if sval.lower() == "true":
            put("trim_req_time", idx, t_msg)
            put("trim_req", idx, True)
            put("last_report", idx, t_msg)
            posts.append(
                ("TRIM_REPORT", "status=1,error=0,progressing,trim_pitch=0.0,trim_roll=0.0")
            )
    elif var == "USM_CURRENT_FIELD":
        act = np.array(
            [_set_boolean_on_string(bool(b), sval) for b in state.current_active[idx]], dtype=bool
        )
        put("current_active", idx, act & (config.current_field is not None))
    elif var in ("NAV_X", "NAV_Y", "NAV_HEADING"):
        off = ~state.enabled[idx]
        r, d = sub(off)
        if isinstance(r, slice):
            r = idx
        key = {"NAV_X": "x", "NAV_Y": "y", "NAV_HEADING": "heading"}[var]
        put(key, r, d)
        put("gt_" + key, r, d)
        put("rudder", r, 0.0)
    elif var == "USM_RESET_NAV":
        for k in _RECORD:
            put(k, idx, getattr(state, "gt_" + k)[idx])
    elif var == "USM_TURN_RADIUS":
        d = np.broadcast_to(dval, idx.shape)
        ok = d >= 0
        put("turn_radius", idx[ok], d[ok])
    return _evolve(state, ch), posts, warns


def _limit_change(change: Any, maxd: Any) -> Any:
    """``setRudder``'s clamp of the requested change to ±maxΔ (as the program branches)."""
    if np.size(maxd) and np.min(maxd) >= 0:
        if isinstance(change, np.ndarray) and change.shape == np.shape(maxd) and change.ndim:
            # identical for maxΔ >= 0; in place on the caller's fresh ``change``
            np.maximum(change, np.negative(maxd), out=change)
            np.minimum(change, maxd, out=change)
            return change
        return np.minimum(np.maximum(change, -maxd), maxd)  # identical for maxΔ >= 0
    return np.where(
        change > 0,
        np.where(change > maxd, maxd, change),
        np.where(-change > maxd, -maxd, change),
    )


def _v22_source(state: UsmState, ch: dict[str, Any], idx: NDArray[np.intp], source: str) -> None:
    """V22 ``setDriftX/Y``: a new non-empty sender makes the drift fresh."""
    if not source:
        return
    srcs = list(ch.get("drift_sources", state.drift_sources))
    fresh = np.array(ch.get("drift_fresh", state.drift_fresh), copy=True)
    for i in idx:
        if source not in srcs[i]:
            srcs[i] = srcs[i] | {source}
            fresh[i] = True
    ch["drift_sources"] = tuple(srcs)
    ch["drift_fresh"] = fresh


# --------------------------------------------------------------------------------------
# the architecture's step()
# --------------------------------------------------------------------------------------

_CMD_ORDER = (
    "DESIRED_THRUST",
    "DESIRED_RUDDER",
    "DESIRED_ELEVATOR",
    "DESIRED_THRUST_L",
    "DESIRED_THRUST_R",
)


def step(
    params: UsmConfig,
    state: UsmState,
    cmd: Mapping[str, ArrayLike] | None,
    env: Mapping[str, ArrayLike] | None,
    dt: float | ArrayLike,
    *,
    return_publications: bool = False,
) -> UsmState | tuple[UsmState, dict[str, Any]]:
    """One engine step: advance MOOS time by ``dt``, deliver the commands, iterate once.

    Parameters
    ----------
    params : UsmConfig
        Effective parameters.
    state : UsmState
        State before the step (its ``moos_time`` is the time of the previous iteration).
    cmd : mapping of str to array_like (N,), optional
        Desired actuators as double mail, applied in this order before the propagation:
        ``DESIRED_THRUST``, ``DESIRED_RUDDER`` (rate-limited at the new MOOS time),
        ``DESIRED_ELEVATOR``, ``DESIRED_THRUST_L``, ``DESIRED_THRUST_R`` [%].  Missing keys
        keep the held values.
    env : mapping, optional
        ``drift_x``, ``drift_y`` [m/s] arrays (N,) that override the drift held by the model
        (the same as ``DRIFT_X``/``DRIFT_Y`` mail); None keeps it.
    dt : float or array_like (N,)
        Step [s]; one model iteration per step (the model never sub-steps, spec §9.3).
    return_publications : bool
        Also return the publications of :func:`iterate`.

    Returns
    -------
    UsmState, or (UsmState, dict) with ``return_publications``
    """
    t_new = state.moos_time + np.asarray(dt, dtype=np.float64)
    t_msg = float(np.max(t_new))
    if cmd:
        for var in _CMD_ORDER:
            if var in cmd:
                val = np.broadcast_to(np.asarray(cmd[var], dtype=np.float64), (state.n,))
                if var == "DESIRED_RUDDER" and params.max_rudder_degs_per_sec > 0:
                    # the rate limit uses each vehicle's own time
                    state = _rudder_per_row(params, state, val, t_new)
                    continue
                state, _p, _w = apply_mail(params, state, var, val, moos_time=t_msg)
    if env:
        ch: dict[str, Any] = {}
        for key in ("drift_x", "drift_y"):
            if key in env and env[key] is not None:
                ch[key] = np.broadcast_to(np.asarray(env[key], dtype=np.float64), (state.n,)).copy()
        if ch:
            state = _evolve(state, ch)
    new, pubs = iterate(params, state, t_new)
    if return_publications:
        return new, pubs
    return new


def _rudder_per_row(params: UsmConfig, state: UsmState, val: F64, t_new: F64) -> UsmState:
    gate = ~(state.diff_mode if params.variant == "usm_v22" else state.diff_flag)
    prev = state.rudder
    maxd = (t_new - state.rudder_tstamp) * params.max_rudder_degs_per_sec
    change = _limit_change(val - prev, maxd)
    return _evolve(
        state,
        {
            "rudder_prev": np.where(gate, prev, state.rudder_prev),
            "rudder": np.where(gate, prev + change, prev),
            "diff_mode": np.where(gate, False, state.diff_mode),
            "rudder_tstamp": np.where(gate, t_new, state.rudder_tstamp),
        },
    )


# --------------------------------------------------------------------------------------
# throughput measurement (``marinesim bench usm``, ``benchmarks/bench_usm.py``)
# --------------------------------------------------------------------------------------


def bench_config() -> UsmConfig:
    """The configuration used by the throughput benchmark: documented-mode defaults.

    No datum (lat/long projection is a separate cost), the default thrust map, deceleration
    limit 0.5 m/s² and a rudder rate limit of 30 %/s, so every branch of the hot path runs.

    Returns
    -------
    UsmConfig
        ``compat="moos"``, prefix ``NAV``, ``max_rudder_degs_per_sec = 30``.
    """
    return UsmConfig(compat="moos", prefix="NAV", max_rudder_degs_per_sec=30.0)


def _bench_commands(n: int) -> tuple[F64, F64]:
    thrust = np.linspace(20.0, 100.0, n) if n > 1 else np.array([60.0])
    rudder = np.linspace(-40.0, 40.0, n) if n > 1 else np.array([15.0])
    return thrust, rudder


def measure_throughput(
    n: int,
    steps: int,
    *,
    dt: float = 0.1,
    loop: bool = True,
    loop_vehicles: int = 50,
    loop_steps: int = 20,
    rounds: int = 3,
    config: UsmConfig | None = None,
    mail: bool = True,
) -> dict[str, Any]:
    """Vehicle-steps per second of :func:`iterate` at N vehicles, and of a per-vehicle loop.

    Every step delivers ``DESIRED_THRUST`` and ``DESIRED_RUDDER`` (one value per vehicle)
    with :func:`apply_mail` and runs one :func:`iterate` (propagation and publications);
    with ``mail=False`` the commands are delivered once before timing and the timed steps
    are :func:`iterate` alone (held actuators).
    The baseline is a plain Python loop over vehicles calling the same two functions on
    N = 1 states, timed on ``min(n, loop_vehicles)`` vehicles × ``loop_steps`` steps in the
    same process (its rate per vehicle-step does not depend on N).

    Parameters
    ----------
    n : int
        Number of vehicles N.
    steps : int
        Timed steps of the batched run (after two warm-up steps).
    dt : float
        Step [s].
    loop : bool
        Also time the per-vehicle loop.
    loop_vehicles, loop_steps : int
        Size of the loop sample (with fewer vehicles, more steps: the same work).
    rounds : int
        Batched and loop timings are interleaved in this many rounds; the fastest round of
        each is reported (robust against other load on the machine).
    config : UsmConfig, optional
        Default :func:`bench_config`.
    mail : bool
        Deliver the two command messages every step (default) or only iterate.

    Returns
    -------
    dict
        ``model``, ``vehicles``, ``steps``, ``mail``, ``seconds_per_step`` (best round),
        ``vehicle_steps_per_s``, and with ``loop``: ``loop_vehicle_steps_per_s`` and
        ``ratio`` (batched / loop).
    """
    import time

    if n < 1:
        raise ConfigError(f"number of vehicles must be >= 1, got {n}", param="vehicles")
    if steps < 1:
        raise ConfigError(f"number of steps must be >= 1, got {steps}", param="steps")
    if not (math.isfinite(dt) and dt > 0):
        raise ConfigError(f"step dt must be a finite number > 0 s, got {dt}", param="dt")
    c = config if config is not None else bench_config()
    thrust, rudder = _bench_commands(n)

    def one_step(st: UsmState, t: float, th: Any, ru: Any, send: bool = mail) -> UsmState:
        if send:
            st, _p, _w = apply_mail(c, st, "DESIRED_THRUST", th, moos_time=t)
            st, _p, _w = apply_mail(c, st, "DESIRED_RUDDER", ru, moos_time=t)
        st, _pubs = iterate(c, st, t)
        return st

    st = init(c, n)
    t = 0.0
    for _ in range(2):
        t += dt
        st = one_step(st, t, thrust, rudder, True)
    m = min(n, loop_vehicles)
    per_round = max(1, steps // rounds)
    # the loop sample does about loop_vehicles × loop_steps vehicle-steps per round (the same
    # work as the batched round when N is small)
    lsteps = max(1, min(per_round * n // m, (loop_vehicles * loop_steps) // m))
    states = [init(c, 1) for _ in range(m)]
    th = [float(v) for v in thrust[:m]]
    ru = [float(v) for v in rudder[:m]]
    tl = 0.0
    if loop:
        for _ in range(2):
            tl += dt
            states = [one_step(s, tl, th[i], ru[i], True) for i, s in enumerate(states)]
    # interleaved rounds; the best round of each counts (the machine may be shared)
    best = math.inf
    lbest = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(per_round):
            t += dt
            st = one_step(st, t, thrust, rudder)
        best = min(best, (time.perf_counter() - t0) / per_round)
        if loop:
            t0 = time.perf_counter()
            for _ in range(lsteps):
                tl += dt
                for i in range(m):
                    states[i] = one_step(states[i], tl, th[i], ru[i])
            lbest = min(lbest, (time.perf_counter() - t0) / (lsteps * m))
    out: dict[str, Any] = {
        "model": c.variant,
        "vehicles": n,
        "steps": per_round * rounds,
        "mail": bool(mail),
        "seconds_per_step": best,
        "vehicle_steps_per_s": n / best,
    }
    if loop:
        out["loop_vehicle_steps_per_s"] = 1.0 / lbest
        out["ratio"] = out["vehicle_steps_per_s"] / out["loop_vehicle_steps_per_s"]
    return out
