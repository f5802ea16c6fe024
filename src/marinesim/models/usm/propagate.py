"""Propagation of the uSimMarine model (spec §2.3, §2.4, §3): actuator terms, the speed,
heading, depth and pitch laws, turn limits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from marinesim.core.frames import moos_angle180 as _angle180
from marinesim.core.frames import moos_angle360 as _angle360
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import (
    _DIFF_FULL_RATE,
    _PI,
    _PI_TRUNC,
    _V22_FULL_SPEED,
    F64,
    BoolA,
)
from marinesim.models.usm.moos_math import _deg2rad, _thrust_map, rel_ang
from marinesim.models.usm.state import UsmState

# --------------------------------------------------------------------------------------
# propagation (§2.3, §2.4, §3)
# --------------------------------------------------------------------------------------


def _sin_cos_deg(h: F64) -> tuple[F64, F64]:
    r = _deg2rad(h)
    return np.sin(r), np.cos(r)


def _refresh(
    key: F64, val: F64, s: F64, c: F64 | None, *, degrees: bool = True
) -> tuple[F64, F64 | None, bool]:
    """Recompute cached sin (and cos) where the cache key no longer matches the value.

    ``val`` in degrees (the heading), or in radians with ``degrees=False`` (the pitch: the
    program's depth law takes ``sin`` of the pitch in radians, §3.4).
    """
    if key is val:  # the key is the value array itself (state arrays are never mutated)
        return s, c, False
    stale = key != val
    if not stale.any():
        return s, c, False
    if stale.all():
        r = _deg2rad(val) if degrees else val
        return np.sin(r), (np.cos(r) if c is not None else None), True
    idx = np.flatnonzero(stale)
    r = _deg2rad(val[idx]) if degrees else val[idx]
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


def _reverse_heading(h: F64) -> F64:
    """Reverse mode's heading [deg]: angle360(h + 180)."""
    return _angle360(h + 180)


def _reverse_yaw(yaw: F64) -> F64:
    """Reverse mode's yaw [rad]: yaw + π with the program's π = 3.1415926, less 2π once
    above 2π."""
    ny = yaw + _PI_TRUNC
    return np.where(ny > 2 * _PI_TRUNC, ny - 2 * _PI_TRUNC, ny)


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
    psin, _n, _r = _refresh(rec["pkey"], rec["pitch"], rec["psin"], None, degrees=False)
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
        h1 = np.where(rev, _reverse_heading(h1), h1)
        yaw = np.where(rev, _reverse_yaw(yaw), yaw)

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
