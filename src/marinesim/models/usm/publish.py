"""One uSimMarine ``Iterate()`` (spec §2.2): propagate, then publish (§2.2 steps 5-8, §7)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.frames import moos_angle360 as _angle360
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import (
    _BUOYANCY_DELAY,
    _PI,
    _PI_TRUNC,
    _REPORT_INTERVAL,
    F64,
    BoolA,
)
from marinesim.models.usm.moos_math import _const_strings, drift_summary, snap_speed
from marinesim.models.usm.state import UsmState, _evolve


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
    if n == 1 and isinstance(moos_time, float):
        t = np.array([moos_time])  # (the MOOS app's call; cheaper than a broadcast)
    else:
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
    all_run = _all(run)
    any_run = all_run or _any(run)

    if any_run:
        ch.update(_propagate(config, state, t, run))

    if v22:
        disabled = ~state.enabled
        if _any(disabled):
            ch["ts"] = np.where(disabled, t, ch.get("ts", state.ts))
    new = _evolve(state, ch)
    new, pubs = _publish(config, new, t)
    return new, pubs


def _propagate(config: UsmConfig, state: UsmState, t: F64, run: BoolA) -> dict[str, Any]:
    """The propagation of the ``run`` rows (spec §2.3, §2.4, §3): the state changes.

    The law is :func:`marinesim.models.usm.rows.usm_propagate_map`, over the state packed as
    rows (compiled or interpreted, :func:`~marinesim.models.usm.rows.run_propagate`), once
    for the NAV record and, with ``dual_state``, once more for the GT record.  The current
    field's force is added to the drift here.
    """
    pc, mp = _config_rows(config)
    n = state.n
    d = state.__dict__
    hold = ~run
    pause = (state.pause_ticks // 100).astype(np.float64)
    # one column per row of ``cols``; ``u`` = its transpose (N, NU), a view in column order
    # (no transposing copy: the rows law indexes u[i, c] whatever the layout)
    cols = _scratch(n)
    np.concatenate([d[f] for f in R.FIELDS] + [pause, hold, t], out=cols.reshape(R.NU * n))
    u = cols.T
    dual = bool(config.dual_state)
    ch: dict[str, Any] = {}
    dx = state.drift_x
    dy = state.drift_y
    cfield = config.current_field if _any(state.current_active) else None
    if cfield is not None:
        fx, fy = cfield.force(state.gt_x if dual else state.x, state.gt_y if dual else state.y)
        cur_x = np.where(state.current_active, np.asarray(fx, dtype=np.float64), 0.0)
        cur_y = np.where(state.current_active, np.asarray(fy, dtype=np.float64), 0.0)
        all_run = _all(run)
        ch["current_x"] = _select(run, all_run, cur_x, state.current_x)
        ch["current_y"] = _select(run, all_run, cur_y, state.current_y)
        dx = dx + cur_x
        dy = dy + cur_y
    it = state.iteration.copy()
    if dual:
        gcols = cols.copy()  # the GT record in the record's columns, moving with the drift
        for c in R.RECORD:
            gcols[c] = d["gt_" + R.FIELDS[c]]
        R.run_propagate(gcols.T, it.copy(), pc, mp, dx, dy, 1)
        for c in R.RECORD:
            ch["gt_" + R.FIELDS[c]] = gcols[c].copy()
        ch["gt_geo_x"], ch["gt_geo_y"] = ch["gt_x"], ch["gt_y"]
        if _any(state.water_depth):
            ch["gt_altitude_set"] = state.gt_altitude_set | (run & (state.water_depth > 0))
    R.run_propagate(u, it, pc, mp, dx, dy, 0 if dual else 1)
    written = R.WRITTEN_V22 if config.variant == "usm_v22" else R.WRITTEN
    ch.update({R.FIELDS[c]: cols[c].copy() for c in written})
    ch["geo_x"], ch["geo_y"] = ch["x"], ch["y"]
    if not _all(run):  # the held rows keep their positions of the last propagation
        ch["geo_x"] = np.where(run, ch["x"], state.geo_x)
        ch["geo_y"] = np.where(run, ch["y"], state.geo_y)
        if dual:
            ch["gt_geo_x"] = np.where(run, ch["gt_x"], state.gt_geo_x)
            ch["gt_geo_y"] = np.where(run, ch["gt_y"], state.gt_geo_y)
    ch["iteration"] = it
    if _any(state.water_depth):
        ch["altitude_set"] = state.altitude_set | (run & (state.water_depth > 0))
    if not _all(state.propagated):
        ch["propagated"] = state.propagated | run
    return ch


def _scratch(n: int) -> F64:
    """The (NU, n) matrix the rows are packed into, kept per thread and size: a fresh one per
    iteration costs its page faults (about 20 ms for 100 000 vehicles).  Nothing of it
    outlives the iteration (the state keeps copies)."""
    bufs = _SCRATCH.__dict__.setdefault("bufs", {})
    buf = bufs.get(n)
    if buf is None:
        if len(bufs) > 4:
            bufs.clear()
        buf = bufs[n] = np.empty((R.NU, n))
    return buf


_SCRATCH = threading.local()


def _config_rows(config: UsmConfig) -> tuple[F64, F64]:
    """``pc`` and ``mp`` of ``config`` (computed once per configuration)."""
    tm = config.thrust_map
    if tm is not None and not getattr(tm, "_frozen", False):  # a map that can still change
        return R.config_numbers(config), R.thrust_map_table(config)
    got = _ROWS_CONFIG.get(id(config))
    if got is None or got[0] is not config:
        got = (config, R.config_numbers(config), R.thrust_map_table(config))
        if len(_ROWS_CONFIG) > 64:
            _ROWS_CONFIG.clear()
        _ROWS_CONFIG[id(config)] = got
    return got[1], got[2]


_ROWS_CONFIG: dict[int, tuple[UsmConfig, F64, F64]] = {}


# --------------------------------------------------------------------------------------
# publication (§2.2 steps 5-8, §7)
# --------------------------------------------------------------------------------------


def _reverse_heading(h: F64) -> F64:
    """Reverse mode's heading [deg]: angle360(h + 180)."""
    return _angle360(h + 180)


def _reverse_yaw(yaw: F64) -> F64:
    """Reverse mode's yaw [rad]: yaw + π with the program's π = 3.1415926, less 2π once
    above 2π."""
    ny = yaw + _PI_TRUNC
    return np.where(ny > 2 * _PI_TRUNC, ny - 2 * _PI_TRUNC, ny)


def _select(mask: BoolA, all_true: bool, new: Any, old: Any) -> Any:
    if all_true:
        return new
    return np.where(mask, new, old)


def _any(a: NDArray[Any]) -> bool:
    """``a.any()`` of a 1-d array (one vehicle, the MOOS app's case: its element read)."""
    return bool(a[0]) if a.shape[0] == 1 else bool(a.any())


def _all(a: NDArray[Any]) -> bool:
    """``a.all()`` of a 1-d array (one vehicle: its element read)."""
    return bool(a[0]) if a.shape[0] == 1 else bool(a.all())


def _latlon(geodesy: Any, x: F64, y: F64) -> tuple[F64, F64]:
    """Lat/long [deg] of local x, y (one vehicle: the point projected without arrays)."""
    if x.shape[0] == 1:
        lat, lon = geodesy.local_to_latlon_1(x[0], y[0])
        return np.array([lat]), np.array([lon])
    return geodesy.local_to_latlon(x, y)


def _wrap360(a: F64) -> F64:
    """``angle360`` (one vehicle already in [0, 360): the array itself, as angle360 gives)."""
    if a.shape[0] == 1 and 0.0 <= a[0] < 360.0:
        return a
    return _angle360(a)


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
    any_alive = _any(alive)
    if not any_alive:
        return st, pubs

    # ---- buoyancy and trim handshake (usm; V22 needs an embedded depth PID: never completes)
    if not v22 and (_any(st.buoy_req) or _any(st.trim_req)):
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
    any_nav = _any(nav_mask)
    if any_nav:
        all_nav = _all(nav_mask)
        heading, hog, yaw = st.heading, st.hog, st.yaw
        if not v22 and _any(st.reverse):
            rv = st.reverse
            heading = np.where(rv, _reverse_heading(heading), heading)
            hog = np.where(rv, _reverse_heading(hog), hog)
            yaw = np.where(rv, _reverse_yaw(yaw), yaw)
        speed = st.speed
        if v22 and _any(st.obstacle_hit):
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
            if v22 and _any(st.obstacle_hit):
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
    if _any(fresh):
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


def record_names(prefix: str, geo: bool, altitude: bool) -> tuple[str, ...]:
    """The variables of one NAV record, in posting order (the one statement of the record's
    layout; :func:`_post_record` and :func:`marinesim.models.usm.one.iterate_one` post in it).

    Parameters
    ----------
    prefix : str
        ``prefix`` parameter (``NAV``).
    geo : bool
        With ``<prefix>_LAT`` and ``<prefix>_LONG`` (a datum is set).
    altitude : bool
        With ``<prefix>_ALTITUDE`` (a water depth is set: its vehicles post it).
    """
    key = (prefix, geo, altitude)
    got = _RECORD_NAMES.get(key)
    if got is None:
        p = prefix
        names = [p + "_X", p + "_Y"] + ([p + "_LAT", p + "_LONG"] if geo else [])
        names += [p + "_HEADING", p + "_SPEED", p + "_DEPTH"]
        # Both programs post these six (uSimMarine always, uSimMarineV22 while its embedded
        # PID engine has depth control, which is on unless ``depth_control = false`` comes
        # with the embedded PID keys; marinesim does not take those keys, so always).
        # pMarinePIDV22 waits for a first NAV_PITCH before it acts.
        names += ["SIMULATION_MODE", p + "_Z", p + "_PITCH", p + "_YAW", "TRUE_X", "TRUE_Y"]
        names += [p + "_HEADING_OVER_GROUND", p + "_SPEED_OVER_GROUND"]
        names += [p + "_ALTITUDE"] if altitude else []
        if len(_RECORD_NAMES) > 64:
            _RECORD_NAMES.clear()
        got = _RECORD_NAMES[key] = tuple(names)
    return got


_RECORD_NAMES: dict[tuple[str, bool, bool], tuple[str, ...]] = {}


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
    geo = st.geodesy is not None
    vals: list[Any] = [x, y]
    if geo:
        # usm projects the published x, y; V22 publishes the lat/long its model computed
        vals += _latlon(st.geodesy, geo_x, geo_y) if v22 else _latlon(st.geodesy, x, y)
    sp = snap_speed(speed) if config.compat == "moos" else speed
    if v22:
        sp = np.minimum(sp, config.max_speed)
    vals += [heading, sp, depth, None, -depth, pitch, yaw, x, y, _wrap360(hog), sog]
    alt_mask = mask & altitude_set
    alt = _any(alt_mask)
    # (the names end with <prefix>_ALTITUDE when ``alt``: posted below with its own mask)
    for name, val in zip(record_names(prefix, geo, alt), vals, strict=False):
        if val is None:  # SIMULATION_MODE
            if all_true:
                pubs[name] = _const_strings(n, "TRUE")
            else:
                pubs[name] = np.where(mask, "TRUE", None).astype(object)
        else:
            pubs[name] = _masked(mask, all_true, val)
    if alt:
        pubs[prefix + "_ALTITUDE"] = _masked(alt_mask, _all(alt_mask), altitude)
