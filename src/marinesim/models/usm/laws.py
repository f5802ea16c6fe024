"""The per-vehicle propagation laws of uSimMarine (spec §3), written once as scalar functions.

Each function works on one vehicle's floats and is registered with
:func:`numba.extending.register_jitable`: :data:`STEP` compiles :func:`step_one` into the
serial and ``prange`` CPU kernels and the CUDA kernel of :mod:`marinesim.models.backends`,
and the ``python`` backend runs the very same functions interpreted.  N = 1 and every N run
the same instructions per vehicle, hence give the same bits on a backend.

The arithmetic is the program's (``dep_uSimMarine`` / ``uSimMarineV22``), operation by
operation: speed limits, the heading rate with the thrust gain, the V22 turn-speed map, the
pitch/depth law, the vector-mean heading of the position step, ``relAng`` for the heading over
ground and V22's turn-radius limit.  Divisions and ``asin``/``sqrt`` go through helpers that
return IEEE results (inf/NaN) instead of raising, so a zero step or a degenerate record behaves
the same compiled and interpreted.

Units: m, m/s, compass degrees (0 = north, clockwise) for headings, radians for pitch/yaw,
percent for actuators, seconds.
"""

from __future__ import annotations

import math
from typing import Any

from numba.extending import register_jitable

from marinesim.models import backends
from marinesim.models.usm.declarations import (
    _DIFF_FULL_RATE,
    _PI,
    _PI_TRUNC,
    _V22_FULL_SPEED,
)

__all__ = ["NPAR", "STEP", "angle360_c", "propagate_c", "rel_ang_c", "step_one"]

#: Layout of the float parameter vector ``par`` of :func:`step_one`.
P_V22, P_MAX_ACC, P_MAX_DEC, P_TURN_LOSS, P_MDRS, P_MAX_DEPTH_RATE, P_MAX_SPEED, P_DRIFT = range(8)
NPAR = 8

_INF = math.inf


@register_jitable
def div_c(a: float, b: float) -> float:
    """a / b with IEEE results for b = 0 (±inf, NaN for 0/0) instead of an exception."""
    if b == 0.0:
        if a == 0.0 or a != a:
            return math.nan
        return math.copysign(_INF, a) * math.copysign(1.0, b)
    return a / b


@register_jitable
def asin_c(x: float) -> float:
    """asin(x), NaN outside [−1, 1] (as numpy's ``arcsin``)."""
    if not (-1.0 <= x <= 1.0):
        return math.nan
    return math.asin(x)


@register_jitable
def sqrt_c(x: float) -> float:
    """sqrt(x), NaN for x < 0 (as numpy's ``sqrt``)."""
    if x < 0.0:
        return math.nan
    return math.sqrt(x)


@register_jitable
def clip_c(a: float, lo: float, hi: float) -> float:
    """clip(a, lo, hi) keeping NaN (as numpy's ``clip``)."""
    if a < lo:
        return lo
    if a > hi:
        return hi
    return a


@register_jitable
def angle360_c(a: float) -> float:
    """MOOS-IvP ``angle360`` on one angle [deg]: ∓360 until 0 ≤ a < 360 (non-finite kept)."""
    if not math.isfinite(a):
        return a
    while a >= 360.0:
        a = a - 360.0
    while a < 0.0:
        a = a + 360.0
    if a >= 360.0:  # a tiny negative angle + 360 rounds to 360: that is 0
        a = a - 360.0
    return a


@register_jitable
def deg2rad_c(d: float) -> float:
    """(d / 180) · π, the program's degrees → radians."""
    return (d / 180.0) * _PI


@register_jitable
def yaw_of_c(h: float) -> float:
    """−deg2rad(angle180(h)) for h in [0, 360), as (h − 360·[h > 180]) / −180 · π."""
    y = h - (360.0 if h > 180.0 else 0.0)
    return (y / -180.0) * _PI


@register_jitable
def rel_ang_c(xa: float, ya: float, xb: float, yb: float) -> float:
    """MOOS-IvP ``relAng``: compass bearing [deg] from A to B (0 for identical points)."""
    dx = xb - xa
    dy = yb - ya
    if dx == 0.0:
        return 180.0 if dy < 0.0 else 0.0
    aval = (math.atan(div_c(dy, dx)) / _PI) * 180.0
    return angle360_c((180.0 - math.copysign(90.0, dx)) - aval)


@register_jitable
def demanded_speed_c(vs: float, r_sp: float, turn_loss: float) -> float:
    """Speed [m/s] the thrust asks for (``vs``, from the thrust map) less the turn loss."""
    if r_sp == 0.0:
        return vs
    return (1.0 - ((abs(clip_c(r_sp, -100.0, 100.0)) / 100.0) * turn_loss)) * vs


@register_jitable
def limit_speed_c(vs: float, v0: float, dt: float, max_acc: float, max_dec: float) -> float:
    """The acceleration and deceleration limits of §3.1 (0 = no limit)."""
    if max_acc > 0.0 and vs > v0:
        if div_c(vs - v0, dt) > max_acc:
            vs = (max_acc * dt) + v0
    if max_dec > 0.0 and vs < v0:
        if div_c(v0 - vs, dt) > max_dec:
            vs = (max_dec * dt * -1.0) + v0
    return vs


@register_jitable
def v22_turn_rate_c(
    v1: float, tr: float, full: float, null: float, nspeed: float
) -> tuple[float, float, float, float]:
    """V22's turn-speed map: (turn rate [%], full rate, null rate, null speed) after one step."""
    if tr > 0.0 and tr <= 100.0:
        full = tr
        if null > full:
            null = full
    if nspeed > _V22_FULL_SPEED:
        nspeed = _V22_FULL_SPEED
    span = _V22_FULL_SPEED - nspeed
    rate = (div_c(v1 - nspeed, span) * (full - null)) + null
    if span <= 0.0:
        rate = 0.0
    if v1 >= _V22_FULL_SPEED:
        rate = full
    if v1 <= nspeed:
        rate = null
    return clip_c(rate, 0.0, 100.0), full, null, nspeed


@register_jitable
def heading_change_c(rud: float, thr: float, tau: float, dt: float) -> float:
    """Δheading [deg] from the rudder: (1 + (thr − 50)/50) · ((clip(rud) · τ/100) · dt)."""
    if rud == 0.0:
        return 0.0
    return ((clip_c(rud, -100.0, 100.0) * (tau / 100.0)) * dt) * (((thr - 50.0) / 50.0) + 1.0)


@register_jitable
def depth_pitch_c(
    v1: float, depth0: float, pitch0: float, psin: float, elev: float, b: float, dt: float,
    mdrs: float, max_depth_rate: float,
) -> tuple[float, float, float]:
    """Depth [m] (clamped at 0), pitch [rad] and sin(pitch) after one step (§3.4)."""
    if elev == 0.0 and psin == 0.0:
        # level and no elevator: the depth rate is −b, the pitch stays 0
        depth = depth0 + ((-b) * dt) if b != 0.0 else depth0
        pitch, s1 = pitch0, psin
    elif v1 > 0.0:
        r_pitch = -psin * v1
        if elev != 0.0:
            pct_d = sqrt_c(min(v1 / mdrs, 1.0)) if mdrs > 0.0 else 1.0
            r_act = (clip_c(elev, -100.0, 100.0) / 100.0) * (pct_d * max_depth_rate)
            total = ((-b) + r_pitch) + r_act
            q = r_pitch + r_act
        else:
            total = (-b) + r_pitch
            q = r_pitch
        depth = depth0 + (total * dt)
        ratio = q / v1
        if abs(q) <= v1:
            pitch, s1 = -asin_c(ratio), -ratio
        else:
            pitch, s1 = 0.0, 0.0
    else:
        depth, pitch, s1 = depth0 + (-1.0 * b * dt), 0.0, 0.0
    if depth < 0.0:
        depth = 0.0
    return depth, pitch, s1


@register_jitable
def project_point_c(deg: float, dist: float, cx: float, cy: float) -> tuple[float, float]:
    """MOOS-IvP ``projectPoint`` with its exact axis cases."""
    deg = angle360_c(deg)
    if deg == 0.0:
        return cx, cy + dist
    if deg == 90.0:
        return cx + dist, cy
    if deg == 180.0:
        return cx, cy - dist
    if deg == 270.0:
        return cx - dist, cy
    r = deg2rad_c(deg)
    return cx + math.sin(r) * dist, cy + math.cos(r) * dist


@register_jitable
def turn_limit_c(
    radius: float, max_speed: float, x0: float, y0: float, h0: float, v_prev: float,
    v_new: float, nx: float, ny: float, h1: float,
) -> tuple[float, float, float]:
    """V22 ``enforceTurnLimit``: clamp the turn between two records to a turn radius."""
    if not (radius > 0.0) or h0 == h1:
        return nx, ny, h1
    osv = (v_prev + v_new) / 2.0
    r_eff = radius
    if max_speed > 0.0 and osv < max_speed:
        r_eff = (1.0 - ((max_speed - osv) / max_speed)) * radius
    dist = math.hypot(x0 - nx, y0 - ny)
    a1 = angle360_c(rel_ang_c(x0, y0, nx, ny))
    a2 = angle360_c(h0)
    adiff = a2 - a1 if a2 > a1 else a1 - a2
    if adiff >= 180.0:
        adiff = 360.0 - adiff
    phi = (asin_c(div_c(dist, 2.0 * r_eff)) / _PI) * 180.0
    if phi >= adiff:
        return nx, ny, h1
    osh = angle360_c(h0)
    hdg = angle360_c(h1)
    port = not ((hdg - osh) < 180.0) if hdg > osh else not ((osh - hdg) > 180.0)
    px, py = project_point_c(h0 - phi if port else h0 + phi, dist, x0, y0)
    return px, py, angle360_c(h0 - phi * 2.0 if port else h0 + phi * 2.0)


@register_jitable
def propagate_c(  # noqa: PLR0913, PLR0915 - the program's record and actuators, one float each
    v22: bool, dt: float, vs_map: float,
    thr: float, rud0: float, elev: float, thrust_l: float, thrust_r: float,
    diff: bool, rev: bool, turn_rate: float, turn_radius: float, rot: float,
    buoyancy: float, wd: float, drift: bool, dxv: float, dyv: float,
    full0: float, null0: float, nsp0: float,
    x0: float, y0: float, h0: float, v0: float, depth0: float, p0: float, yaw0: float,
    alt0: float, alt_set0: bool, ps_in: float, pkey: float, hs_in: float, hc_in: float,
    hkey: float,
    max_acc: float, max_dec: float, turn_loss: float, mdrs: float, max_depth_rate: float,
    max_speed: float,
) -> tuple:
    """``propagateNodeRecord`` (spec §3): one vehicle's record over ``dt`` [s].

    ``vs_map`` is the thrust-map speed [m/s] of the effective thrust (before the turn loss);
    ``drift`` False means no drift at all (the speed over ground is then |speed|).

    Returns
    -------
    tuple
        (x, y, heading, speed, depth, pitch, yaw, altitude, altitude_set, sog, hog, hsin,
        hcos, hkey, psin, pkey, full rate, null rate, null speed): the new record, its
        sin/cos caches and V22's turn-speed map.
    """
    # ---- speed (§3.1 / §3.3)
    r_sp = (thrust_l - thrust_r) / 2.0 if diff else rud0
    if rev:
        r_sp = -r_sp
    vs = demanded_speed_c(vs_map, r_sp, turn_loss)
    vs = limit_speed_c(vs, v0, dt, max_acc, max_dec)
    v1 = vs if dt > 0.0 else v0

    # ---- heading (§3.2 / §3.3; V22 turn-speed map)
    rud = 0.0 if v1 == 0.0 else rud0
    if rev:
        thr = -thr
        rud = -rud
    if v22:
        tau, full0, null0, nsp0 = v22_turn_rate_c(v1, turn_rate, full0, null0, nsp0)
    else:
        tau = turn_rate
    dh = heading_change_c(rud, thr, tau, dt)
    if rot != 0.0:
        dh = dh + (dt * rot)
    if diff:
        tl = thrust_l
        tr = thrust_r
        if rev:
            tl, tr = -thrust_r, thrust_l
        dh_d = ((_DIFF_FULL_RATE * ((tl - tr) / 200.0)) * dt) + (dt * rot)
        if dt > 0.0:
            h1 = angle360_c(dh_d + h0)
            yw = yaw_of_c(h1)
        else:
            h1 = h0
            yw = yaw0
    else:
        h1 = angle360_c(dh + h0)
        yw = yaw_of_c(h1)

    # ---- depth and pitch (§3.4); sin(pitch) refreshed when the pitch was changed outside
    ps = ps_in
    if pkey != p0:
        ps = math.sin(deg2rad_c(p0))
    d1, p1, ps1 = depth_pitch_c(v1, depth0, p0, ps, elev, buoyancy, dt, mdrs, max_depth_rate)

    # ---- V22 reverse mode: +180 inside the model, before the position step (§12)
    if v22 and rev:
        h1 = angle360_c(h1 + 180.0)
        yw = yw + _PI_TRUNC
        if yw > 2.0 * _PI_TRUNC:
            yw = yw - 2.0 * _PI_TRUNC

    # ---- position, speed averaging, SOG, HOG (§3.5): the vector-mean heading
    hs0 = hs_in
    hc0 = hc_in
    if hkey != h0:
        r0 = deg2rad_c(h0)
        hs0 = math.sin(r0)
        hc0 = math.cos(r0)
    if h1 != h0:
        r1 = deg2rad_c(h1)
        hs1 = math.sin(r1)
        hc1 = math.cos(r1)
    else:
        hs1 = hs0
        hc1 = hc0
    sp = (v1 + v0) / 2.0
    s = hs0 + hs1
    c = hc0 + hc1
    k = div_c(sp, sqrt_c((s * s) + (c * c)))
    if math.isfinite(k):
        xdot = s * k
        ydot = c * k
    else:  # opposite headings, (s, c) = 0: the program's sin/cos(atan2) form
        hdg = math.atan2(s, c)
        xdot = math.sin(hdg) * sp
        ydot = math.cos(hdg) * sp
    nx = (xdot * dt) + x0
    ny = (ydot * dt) + y0
    if drift:
        gx = xdot
        gy = ydot
        if dxv != 0.0:
            nx = nx + (dxv * dt)
            gx = xdot + dxv
        if dyv != 0.0:
            ny = ny + (dyv * dt)
            gy = ydot + dyv
        sg = sqrt_c((gx * gx) + (gy * gy))
    else:
        sg = abs(sp)
    hg = rel_ang_c(x0, y0, nx, ny)

    # ---- V22 turn-radius limit (SimEngine::enforceTurnLimit), after the position step
    h_cached = h1  # the heading hs1/hc1 belong to
    if v22:
        nx, ny, h1 = turn_limit_c(turn_radius, max_speed, x0, y0, h0, v1, sp, nx, ny, h1)

    # ---- altitude (§3.6)
    alt = alt0
    alt_set = alt_set0
    if wd > 0.0:
        alt = wd - d1
        if alt < 0.0:  # max(alt, 0) keeping NaN
            alt = 0.0
        alt_set = True
    return (
        nx, ny, h1, sp, d1, p1, yw, alt, alt_set, sg, hg, hs1, hc1, h_cached, ps1, p1,
        full0, null0, nsp0,
    )


@register_jitable
def step_one(  # noqa: PLR0913 - one argument per state array (CUDA kernels take flat arrays)
    b: int,
    start: Any,
    run: Any, dt_a: Any, vs_a: Any,
    thrust: Any, rudder: Any, elevator: Any, thrust_l: Any, thrust_r: Any,
    diff_mode: Any, reverse: Any, turn_rate: Any, turn_radius: Any, rotate_speed: Any,
    buoyancy: Any, water_depth: Any, drift_x: Any, drift_y: Any,
    tsm_full: Any, tsm_null: Any, tsm_speed: Any,
    x: Any, y: Any, heading: Any, speed: Any, depth: Any, pitch: Any, yaw: Any,
    altitude: Any, alt_set: Any, sog: Any, hog: Any,
    hsin: Any, hcos: Any, hkey: Any, psin: Any, pkey: Any, geo_x: Any, geo_y: Any,
    o_x: Any, o_y: Any, o_heading: Any, o_speed: Any, o_depth: Any, o_pitch: Any, o_yaw: Any,
    o_altitude: Any, o_alt_set: Any, o_sog: Any, o_hog: Any,
    o_hsin: Any, o_hcos: Any, o_hkey: Any, o_psin: Any, o_pkey: Any, o_geo_x: Any,
    o_geo_y: Any, o_tsm_full: Any, o_tsm_null: Any, o_tsm_speed: Any,
    par: Any,
) -> None:
    """Block ``b`` of vehicles, ``start[b]`` to ``start[b + 1]`` (or N): :func:`propagate_c`
    for each vehicle ``i`` where ``run[i]``, the old record elsewhere.

    Inputs are (N,) arrays: ``run`` (propagate this vehicle), the step ``dt_a`` [s],
    ``vs_a`` (thrust-map speed [m/s] of the effective thrust, before the turn loss), the
    actuators and mail-settable parameters, the V22 turn-speed map and the record
    (``x`` … ``geo_y``: position, heading, speed, depth, pitch, yaw, altitude, SOG, HOG and the
    sin/cos caches).  The ``o_*`` arrays receive the new record (the old one where ``run`` is
    false); ``par`` is the float vector of :data:`NPAR` parameters (``P_*`` positions).
    The arrays are only indexed here and the law works on floats: a compiled call that
    passes ~60 arrays costs ~1.5 µs (reference counting), so the kernels walk blocks of
    vehicles (:data:`BLOCK` on CPU, 1 on a GPU) and the call is paid once per block.
    """
    end = start[b + 1] if b + 1 < start.shape[0] else run.shape[0]
    for i in range(start[b], end):
        if run[i]:
            r = propagate_c(
                par[P_V22] != 0.0, dt_a[i], vs_a[i],
                thrust[i], rudder[i], elevator[i], thrust_l[i], thrust_r[i],
                diff_mode[i], reverse[i], turn_rate[i], turn_radius[i], rotate_speed[i],
                buoyancy[i], water_depth[i], par[P_DRIFT] != 0.0, drift_x[i], drift_y[i],
                tsm_full[i], tsm_null[i], tsm_speed[i],
                x[i], y[i], heading[i], speed[i], depth[i], pitch[i], yaw[i],
                altitude[i], alt_set[i], psin[i], pkey[i], hsin[i], hcos[i], hkey[i],
                par[P_MAX_ACC], par[P_MAX_DEC], par[P_TURN_LOSS], par[P_MDRS],
                par[P_MAX_DEPTH_RATE], par[P_MAX_SPEED],
            )
            o_x[i], o_y[i], o_heading[i], o_speed[i], o_depth[i] = r[0], r[1], r[2], r[3], r[4]
            o_pitch[i], o_yaw[i], o_altitude[i], o_alt_set[i] = r[5], r[6], r[7], r[8]
            o_sog[i], o_hog[i], o_hsin[i], o_hcos[i], o_hkey[i] = r[9], r[10], r[11], r[12], r[13]
            o_psin[i], o_pkey[i], o_geo_x[i], o_geo_y[i] = r[14], r[15], r[0], r[1]
            o_tsm_full[i], o_tsm_null[i], o_tsm_speed[i] = r[16], r[17], r[18]
        else:
            o_x[i], o_y[i], o_heading[i], o_speed[i], o_depth[i] = (
                x[i], y[i], heading[i], speed[i], depth[i]
            )
            o_pitch[i], o_yaw[i], o_altitude[i], o_alt_set[i] = (
                pitch[i], yaw[i], altitude[i], alt_set[i]
            )
            o_sog[i], o_hog[i], o_hsin[i], o_hcos[i], o_hkey[i] = (
                sog[i], hog[i], hsin[i], hcos[i], hkey[i]
            )
            o_psin[i], o_pkey[i], o_geo_x[i], o_geo_y[i] = psin[i], pkey[i], geo_x[i], geo_y[i]
            o_tsm_full[i], o_tsm_null[i], o_tsm_speed[i] = tsm_full[i], tsm_null[i], tsm_speed[i]


#: Vehicles per block of the CPU and ``python`` kernels (a GPU runs blocks of 1).
BLOCK = 256

#: Serial/``prange`` CPU kernels and the CUDA kernel of :func:`step_one` (over the blocks,
#: args[0] = their first vehicles).
STEP = backends.kernels(step_one, 0)
