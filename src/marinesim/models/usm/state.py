"""State of the uSimMarine model (:class:`UsmState`) and start-up (:func:`init`, spec §2.1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import F64, BoolA
from marinesim.models.usm.moos_math import _deg2rad

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
    geodesy: Any = None
    drift_sources: tuple[frozenset[str], ...] = ()
    warned: frozenset[str] = frozenset()

    @property
    def n(self) -> int:
        """Number of vehicles N."""
        return int(self.x.shape[0])


_FIELD_NAMES = tuple(f.name for f in fields(UsmState))


def _evolve(state: UsmState, changes: Mapping[str, Any]) -> UsmState:
    """A new state with some fields replaced (cheap: no per-field validation)."""
    new = object.__new__(UsmState)
    d = new.__dict__
    d.update(state.__dict__)
    d.update(changes)
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
        Effective parameters (from :func:`marinesim.models.usm.config.configure`).
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
        geodesy=_geodesy_for(config, datum),
        drift_sources=tuple(frozenset() for _ in range(n)),
        warned=frozenset(),
    )
    return st
