"""The uSimMarine iteration law, once, over structure-of-arrays rows (compiled or not).

:func:`usm_propagate_map` is the model's propagation (``propagateNodeRecord``, spec §2.3,
§2.4, §3, §12) of every vehicle plus the iteration's bookkeeping, for every configuration:
variants ``usm`` and ``usm_v22`` (turn-speed map, turn-radius limit, reverse heading), the
thrust factor rule and thrust maps with pairs and reflection, differential and reverse
thrust, water depth (altitude), the pause clock and rows held this iteration, steps of zero
or negative length, a clock per row; with ``dual_state`` it runs once per record (the NAV
record without drift).  :func:`usm_mail_cmd` is the three actuator messages an autopilot
sends each tick (``DESIRED_RUDDER``, ``DESIRED_THRUST``, ``DESIRED_ELEVATOR``).  Both are
``register_jitable`` functions: :func:`~marinesim.models.usm.publish.iterate` runs the
propagation through :func:`run_propagate` (compiled, or interpreted with
``MARINESIM_JIT=0`` and for a few rows while numba is not loaded, as ``marinesim moos``
runs), and the engine's compiled tick (``engine/plugins/usm_laws.py``) calls
:func:`usm_propagate` and :func:`usm_mail_cmd` for the configurations :func:`why_not_rows`
accepts (its mail and publications are the documented mode's).

Each operation is the program's, in its order, including which formula a batch-wide test
(``r.any()``, ``elevator.any()``…) selects: the rows compute those tests first, over every
row, held rows included.  ``tests/models/test_usm_golden_bits.py`` checks the iteration
against digests written by the numpy law these rows replaced.

The state is one float matrix ``u`` (N, :data:`NU`) whose columns are :data:`FIELDS`
(:class:`~marinesim.models.usm.state.UsmState` field names, flags as 0/1) then ``PAUSE``,
``HOLD`` and ``CLK``, and ``it`` (N,) the iteration counts; ``pc`` holds the configuration
numbers (:func:`config_numbers`) and ``mp`` the thrust map (:func:`thrust_map_table`).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from marinesim.core.compile import SERIAL, lazy_kernels
from marinesim.core.jitable import jit_enabled, register_jitable
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import _DIFF_FULL_RATE, _PI, _PI_TRUNC, _V22_FULL_SPEED

__all__ = [
    "FIELDS", "NU", "config_numbers", "run_propagate", "thrust_map_table", "usm_mail_cmd",
    "usm_propagate", "usm_propagate_map", "why_not_rows",
]  # fmt: skip

#: Columns of ``u`` (UsmState fields).
FIELDS = (
    "x", "y", "heading", "speed", "depth", "pitch", "yaw", "sog", "hog", "hsin", "hcos",
    "hkey", "psin", "pkey", "ts", "thrust", "rudder", "rudder_prev", "rudder_tstamp",
    "elevator", "turn_rate", "rotate_speed", "buoyancy_rate", "drift_x", "drift_y",
    "current_x", "current_y", "moos_time", "turn_radius", "tsm_full_rate", "tsm_null_rate",
    "tsm_null_speed", "thrust_l", "thrust_r", "diff_mode", "reverse", "water_depth", "altitude",
)  # fmt: skip
#: Columns after :data:`FIELDS`: the paused time to take off the clock [s]
#: (``pause_ticks // 100``), HOLD (1: the row does not propagate this iteration) and CLK, the
#: MOOS time of this iteration [s].
NU = len(FIELDS) + 3
(X, Y, HDG, SPD, DEP, PIT, YAW, SOG, HOG, HSIN, HCOS, HKEY, PSIN, PKEY, TS, THR, RUD, RPREV,
 RTS, ELEV, TAU, ROT, BUOY, DRX, DRY, CURX, CURY, MT, TRAD, TSMF, TSMN, TSMS, THRL, THRR, DIFF,
 REV, WD, ALT, PAUSE, HOLD, CLK) = range(NU)  # fmt: skip
#: Columns :func:`usm_propagate_map` writes (the others it only reads).
WRITTEN = (X, Y, HDG, SPD, DEP, PIT, YAW, SOG, HOG, HSIN, HCOS, HKEY, PSIN, PKEY, TS, MT, ALT)
#: ... and with the variant ``usm_v22`` (its turn-speed map).
WRITTEN_V22 = (*WRITTEN, TSMF, TSMN, TSMS)
#: The record's columns (the ``gt_`` fields of ``dual_state``'s second record).
RECORD = (X, Y, HDG, SPD, DEP, PIT, YAW, SOG, HOG, HSIN, HCOS, HKEY, PSIN, PKEY, ALT)
#: Scratch columns of :func:`usm_propagate` (per row: new speed, drift east, drift north).
NSCRATCH = 3


#: Length of ``pc`` (:func:`config_numbers`).
NPC = 15


def config_numbers(config: UsmConfig) -> np.ndarray:
    """``pc``: thrust factor, turn loss, max accel/decel, max depth rate (and its speed),
    rudder rate limit; then the thrust map's shape: rule (0: the factor rule, max(thrust,
    0)/factor; 1: the map's lookup, :func:`thrust_map_table`), its positive and negative
    pair counts, reflect (1/0), the top and bottom pair speeds; the variant (1: ``usm_v22``,
    its turn-speed map and turn-radius limit) and its ``max_speed``."""
    tm = config.thrust_map
    f = 20.0 if tm is None else float(tm.thrust_factor)
    rule = (
        0.0
        if tm is None or (tm.using_thrust_factor and not tm.neg_pairs and not tm.reflect)
        else 1.0
    )
    npos = 0 if tm is None else len(tm.pos_pairs)
    nneg = 0 if tm is None else len(tm.neg_pairs)
    return np.array([
        f, config.turn_loss, config.max_acceleration, config.max_deceleration,
        config.max_depth_rate, config.max_depth_rate_speed, config.max_rudder_degs_per_sec,
        rule, float(npos), float(nneg), 1.0 if tm is not None and tm.reflect else 0.0,
        tm.pos_pairs[-1][1] if npos else 0.0, tm.neg_pairs[0][1] if nneg else 0.0,
        1.0 if config.variant == "usm_v22" else 0.0, config.max_speed,
    ])  # fmt: skip


def thrust_map_table(config: UsmConfig) -> np.ndarray:
    """``mp`` (2, L, 5): the thrust map's segments, positive side (0) and negative side (1).

    Per segment ``j``: the pair thrust searched (``j`` < pair count), the segment's left
    thrust and speed, its slope and whether it is flat (1/0), as
    :meth:`~marinesim.models.usm.thrustmap.ThrustMap.speed` computes them.
    """
    tm = config.thrust_map
    if tm is None:
        return np.zeros((2, 1, 5))
    c = tm._arrays()
    npos, nneg = len(tm.pos_pairs), len(tm.neg_pairs)
    mp = np.zeros((2, max(npos, nneg) + 1, 5))
    for side, key, cnt in ((0, "pos", npos), (1, "neg", nneg)):
        if not cnt:
            continue
        mp[side, :cnt, 0] = c["pt" if side == 0 else "nt"]
        mp[side, : cnt + 1, 1] = c[key + "_lt"]
        mp[side, : cnt + 1, 2] = c[key + "_ls"]
        mp[side, : cnt + 1, 3] = c[key + "_slope"]
        mp[side, : cnt + 1, 4] = c[key + "_flat"]
    return mp


def why_not_rows(config: UsmConfig) -> str | None:
    """Why the compiled tick (:func:`usm_mail_cmd`, :func:`usm_propagate`: the factor rule,
    documented mail) does not take ``config`` (None: it does)."""
    if config.variant != "usm":
        return f"variant {config.variant!r} (only 'usm' is compiled)"
    if config.dual_state:
        return "dual_state (two records)"
    if config.compat != "doc":
        return f"compat={config.compat!r} (its speed snapping and mail rules)"
    tm = config.thrust_map
    if tm is not None and not (tm.using_thrust_factor and not tm.neg_pairs and not tm.reflect):
        return "a thrust map with pairs or reflection"
    if config.thrust_mode_diff or config.thrust_mode_reverse:
        return "differential or reverse thrust"
    if config.default_water_depth > 0:
        return "water depth (altitude publications)"
    return None


@register_jitable
def _clip(a: float, lo: float, hi: float) -> float:
    """``np.clip`` of one float (NaN passes)."""
    if a < lo:
        return lo
    if a > hi:
        return hi
    return a


@register_jitable
def _max0(a: float) -> float:
    """``np.maximum(a, 0.0)`` of one float (NaN passes, −0 gives +0)."""
    if a > 0.0 or a != a:
        return a
    return 0.0


@register_jitable
def _deg2rad(d: float) -> float:
    return (d / 180.0) * _PI


@register_jitable
def _speed_pos(t: float, pc: Any, mp: Any) -> float:
    """The map's positive side at thrust ``t`` (``ThrustMap._speed_pos``)."""
    npos = int(pc[8])
    if npos == 0:
        return 0.0 if pc[0] == 0 else t / pc[0]
    j = 0  # pairs with thrust <= t (searchsorted right)
    while j < npos and mp[0, j, 0] <= t:
        j += 1
    out = ((t - mp[0, j, 1]) * mp[0, j, 3]) + mp[0, j, 2]
    if mp[0, j, 4] != 0.0:
        out = 0.0
    if t >= 100.0:
        out = pc[11]
    return out


@register_jitable
def thrust_speed(t: float, pc: Any, mp: Any) -> float:
    """Demanded speed [m/s] of thrust ``t`` [%] before the turn loss (§4.3)."""
    if pc[7] == 0.0:  # the factor rule
        return 0.0 if pc[0] == 0 else _max0(t) / pc[0]
    if t > 0.0:
        return _speed_pos(t, pc, mp)
    if not t < 0.0:
        return 0.0
    nneg = int(pc[9])
    if nneg == 0:
        return -1.0 * _speed_pos(-t, pc, mp) if pc[10] != 0.0 else 0.0
    r = 0  # pairs with thrust < t (searchsorted left)
    while r < nneg and mp[1, r, 0] < t:
        r += 1
    out = ((t - mp[1, r, 1]) * mp[1, r, 3]) + mp[1, r, 2]
    if mp[1, r, 4] != 0.0:
        out = 0.0
    if t <= -100.0:
        out = pc[12]
    return out


@register_jitable
def _quot(a: float, b: float) -> float:
    """``a / b`` as numpy divides (±inf or NaN for a zero ``b``, no exception)."""
    if b != 0.0 or b != b:
        return a / b
    if a == 0.0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


@register_jitable
def angle360_moos(a: float) -> float:
    """MOOS ``angle360`` of one angle (:func:`~marinesim.core.frames.moos_angle360`)."""
    while a >= 360.0:
        a = a - 360.0
    while a < 0.0:
        a = a + 360.0
    if a >= 360.0:
        a = a - 360.0
    return a


@register_jitable
def rel_ang_c(xa: float, ya: float, xb: float, yb: float) -> float:
    """MOOS ``relAng`` of one pair (:func:`~marinesim.models.usm.moos_math.rel_ang`)."""
    dx = xb - xa
    dy = yb - ya
    aval = ((math.atan(dy / dx) if dx != 0.0 else math.copysign(math.pi / 2, dy)) / _PI) * 180.0
    ret = (180.0 - math.copysign(90.0, dx)) - aval
    if dx == 0.0:
        ret = 180.0 if dy < 0.0 else 0.0
    return angle360_moos(ret)


@register_jitable
def _turn_speed_map(
    tr: float, fr: float, nr: float, ns: float, v1: float
) -> tuple[float, float, float, float]:
    """V22's turn rate [%] at speed ``v1`` from a turn-speed map (full rate ``fr``, null
    rate ``nr``, null speed ``ns``) and the map as the model keeps it (a turn rate ``tr``
    in (0, 100] is the full rate; the null rate at most the full rate; the null speed at
    most the full speed)."""
    if tr > 0 and tr <= 100:
        fr = tr
        if nr > fr:
            nr = fr
    if not ns < _V22_FULL_SPEED and ns == ns:  # np.minimum (NaN passes)
        ns = _V22_FULL_SPEED
    den = _V22_FULL_SPEED - ns
    if den <= 0.0:
        rate = 0.0
    else:
        rate = (((v1 - ns) / den) * (fr - nr)) + nr
    if v1 >= _V22_FULL_SPEED:
        rate = fr
    if v1 <= ns:
        rate = nr
    return _clip(rate, 0.0, 100.0), fr, nr, ns


@register_jitable
def _project_point_c(deg: float, dist: float, cx: float, cy: float) -> tuple[float, float]:
    """MOOS-IvP ``projectPoint`` of one point, with its exact axis cases."""
    deg = angle360_moos(deg)
    r = _deg2rad(deg)
    rx = cx + math.sin(r) * dist
    ry = cy + math.cos(r) * dist
    if deg == 0:
        rx, ry = cx, cy + dist
    elif deg == 90:
        rx, ry = cx + dist, cy
    elif deg == 180:
        rx, ry = cx, cy - dist
    elif deg == 270:
        rx, ry = cx - dist, cy
    return rx, ry


@register_jitable
def _turn_limit_c(
    radius: float,
    ms: float,
    x0: float,
    y0: float,
    h0: float,
    v_prev: float,
    v_new: float,
    nx: float,
    ny: float,
    h1: float,
) -> tuple[float, float, float]:
    """V22 ``enforceTurnLimit`` of one row whose heading changed (``radius`` > 0): the new
    x, y and heading, clamped to the (speed-scaled) turn radius."""
    osv = (v_prev + v_new) / 2
    r_eff = radius
    if ms > 0 and osv < ms:
        r_eff = (1 - ((ms - osv) / ms)) * radius
    dist = np.hypot(x0 - nx, y0 - ny)
    a1 = angle360_moos(rel_ang_c(x0, y0, nx, ny))
    a2 = angle360_moos(h0)
    adiff = a2 - a1 if a2 > a1 else a1 - a2
    if adiff >= 180:
        adiff = 360 - adiff
    den = 2 * r_eff
    q = dist / den if den != 0.0 else math.nan  # (dist / 0 is ±inf or NaN: no arcsine)
    phi = ((math.asin(q) if -1.0 <= q <= 1.0 else math.nan) / _PI) * 180.0
    if phi >= adiff:
        return nx, ny, h1
    osh = angle360_moos(h0)
    hdg = angle360_moos(h1)
    port = not ((hdg - osh) < 180) if hdg > osh else not ((osh - hdg) > 180)
    phix = h0 - phi if port else h0 + phi
    px, py = _project_point_c(phix, dist, x0, y0)
    return px, py, angle360_moos(h0 - phi * 2 if port else h0 + phi * 2)


@register_jitable
def usm_mail_cmd(u: Any, cmd: Any, t_msg: float, rate: float) -> None:
    """``DESIRED_RUDDER``, ``DESIRED_THRUST``, ``DESIRED_ELEVATOR`` double mail (every row;
    ``cmd`` (N, 3) = rudder, thrust, elevator), in that order, at MOOS time ``t_msg``."""
    for i in range(u.shape[0]):
        prev = u[i, RUD]
        maxd = (t_msg - u[i, RTS]) * rate if rate > 0 else 100.0
        ch = cmd[i, 0] - prev
        ch = max(ch, -maxd) if ch == ch else ch  # np.maximum, np.minimum (NaN passes)
        ch = min(ch, maxd) if ch == ch else ch
        u[i, RPREV] = prev
        u[i, RUD] = ch + prev
        u[i, RTS] = t_msg
        u[i, THR] = cmd[i, 1]
        u[i, ELEV] = cmd[i, 2]


#: The map table of :func:`usm_propagate` (none: the factor rule), a constant so that the law
#: allocates nothing (the CUDA tick calls it too).
_NO_MAP = np.zeros((2, 1, 5))


@register_jitable
def usm_propagate(u: Any, it: Any, pc: Any, t: float, dxt: Any, dyt: Any, w: Any) -> int:
    """:func:`usm_propagate_map` of every row at MOOS time ``t``, with the factor rule
    (``pc[7]`` = 0: no map table), the record moving with ``dxt``, ``dyt``."""
    for i in range(u.shape[0]):
        u[i, CLK] = t
    return usm_propagate_map(u, it, pc, _NO_MAP, dxt, dyt, w, 1)


@register_jitable
def usm_propagate_map(
    u: Any, it: Any, pc: Any, mp: Any, dxt: Any, dyt: Any, w: Any, drift: int
) -> int:
    """One iteration of every row at its MOOS time ``u[i, CLK]`` (propagate, ``ts``,
    counters).  A step that is not positive propagates as the program's formulas give it,
    at the last speed (a differential turn not at all).

    ``pc`` (:func:`config_numbers`) and ``mp`` (:func:`thrust_map_table`): the
    configuration.  ``drift`` 1: the record moves with ``dxt``, ``dyt`` (N,) (drift +
    current) and its SOG is the norm of its ground velocity; 0: no drift, SOG = |speed| (the
    NAV record of ``dual_state``).  ``w`` (N, :data:`NSCRATCH`) scratch.  Rows with
    ``HOLD`` set (paused, disabled, stopped by an obstacle) take part in the batch-wide
    tests but keep their record.  Returns 0.
    """
    n = u.shape[0]
    loss, macc, mdec, mdr, mdrs = pc[1], pc[2], pc[3], pc[4], pc[5]
    v22 = pc[13] != 0.0
    rud_any = False
    elev_any = False
    rot_any = False
    dx_on = False
    dy_on = False
    for i in range(n):
        elev_any = elev_any or u[i, ELEV] != 0.0
        rot_any = rot_any or u[i, ROT] != 0.0
        if drift != 0:
            dx_on = dx_on or dxt[i] != 0.0
            dy_on = dy_on or dyt[i] != 0.0
    # ---- speed (§3.1, differential §3.3), the pitch cache; the batch-wide formula choices
    for i in range(n):
        if u[i, DIFF] != 0.0:
            r_sp = (u[i, THRL] - u[i, THRR]) / 2
        else:
            r_sp = u[i, RUD]
        rud_any = rud_any or r_sp != 0.0
    turning = False
    psin_any = False
    for i in range(n):
        dt = (u[i, CLK] - u[i, PAUSE]) - u[i, TS]
        v0 = u[i, SPD]
        if u[i, DIFF] != 0.0:
            t_sp = (u[i, THRL] + u[i, THRR]) / 2.0
            r_sp = (u[i, THRL] - u[i, THRR]) / 2
        else:
            t_sp = u[i, THR]
            r_sp = u[i, RUD]
        if u[i, REV] != 0.0:
            t_sp = -t_sp
            r_sp = -r_sp
        vs = thrust_speed(t_sp, pc, mp)
        if rud_any:
            vs = (1.0 - ((abs(_clip(r_sp, -100.0, 100.0)) / 100) * loss)) * vs
        if macc > 0 and vs > v0 and _quot(vs - v0, dt) > macc:
            vs = (macc * dt) + v0
        if mdec > 0 and vs < v0 and _quot(v0 - vs, dt) > mdec:
            vs = (mdec * dt * -1) + v0
        if not dt > 0.0:
            vs = v0  # a step not positive keeps the speed
        w[i, 0] = vs
        turning = turning or (vs != 0.0 and u[i, RUD] != 0.0)
        # the pitch cache, refreshed (pitch in radians) where stale
        ps = math.sin(u[i, PIT]) if u[i, PKEY] != u[i, PIT] else u[i, PSIN]
        w[i, 1] = ps
        psin_any = psin_any or ps != 0.0
    level = not (elev_any or psin_any)
    for i in range(n):
        dt = (u[i, CLK] - u[i, PAUSE]) - u[i, TS]
        v0 = u[i, SPD]
        v1 = w[i, 0]
        ps = w[i, 1]
        h0 = u[i, HDG]
        rev = u[i, REV] != 0.0
        # ---- heading (§3.2; V22: the turn rate of the turn-speed map, §12)
        tau = u[i, TAU]
        fr = u[i, TSMF]
        nr = u[i, TSMN]
        ns = u[i, TSMS]
        if v22:
            tau, fr, nr, ns = _turn_speed_map(tau, fr, nr, ns, v1)
        if turning:
            rud = u[i, RUD] if v1 != 0.0 else 0.0
            thr = u[i, THR]
            if rev:
                rud = -rud
                thr = -thr
            gain = ((thr - 50) / 50) + 1
            dh = ((_clip(rud, -100.0, 100.0) * (tau / 100)) * dt) * gain
        else:
            dh = 0.0
        if u[i, DIFF] != 0.0:  # differential thrust (§3.3): its own turn rate
            tl = -u[i, THRR] if rev else u[i, THRL]
            tr = u[i, THRL] if rev else u[i, THRR]
            dh = ((_DIFF_FULL_RATE * ((tl - tr) / 200)) * dt) + (dt * u[i, ROT])
        elif rot_any:
            dh = dh + (dt * u[i, ROT])
        if u[i, DIFF] != 0.0 and not dt > 0.0:  # no differential turn on such a step
            h1 = h0
            yaw = u[i, YAW]
        else:
            h1 = angle360_moos(dh + h0)
            yaw = ((h1 - (360.0 if h1 > 180.0 else 0.0)) / -180.0) * _PI
        # ---- depth and pitch (§3.4)
        d0 = u[i, DEP]
        b = u[i, BUOY]
        if level:
            depth = d0 if b == 0 else d0 + ((-b) * dt)
            pitch = u[i, PIT]
            psin1 = ps
        else:
            r_pitch = -ps * v1
            if elev_any:
                if mdrs > 0:
                    a = min(v1 / mdrs, 1.0)
                    pct_d = math.sqrt(a) if a >= 0.0 else math.nan  # np.sqrt's NaN
                else:
                    pct_d = 1.0
                r_act = (_clip(u[i, ELEV], -100.0, 100.0) / 100) * (pct_d * mdr)
                total = ((-b) + r_pitch) + r_act
                q = r_pitch + r_act
            else:
                total = (-b) + r_pitch
                q = r_pitch
            if v1 > 0:
                depth = d0 + (total * dt)
                ratio = q / v1
                if abs(q) <= v1:
                    pitch = -math.asin(ratio)
                    psin1 = -ratio
                else:
                    pitch = 0.0
                    psin1 = 0.0
            else:
                depth = d0 + (-1 * b * dt)
                pitch = 0.0
                psin1 = 0.0
        depth = _max0(depth) if depth < 0.0 or depth == 0.0 else depth
        # ---- V22 reverse thrust: the heading turned by 180 inside the model (§12)
        if v22 and rev:
            h1 = angle360_moos(h1 + 180)
            yaw = yaw + _PI_TRUNC
            if yaw > 2 * _PI_TRUNC:
                yaw = yaw - 2 * _PI_TRUNC
        # ---- position, speed averaging, SOG, HOG (§3.5)
        if u[i, HKEY] != h0:
            hs0 = math.sin(_deg2rad(h0))
            hc0 = math.cos(_deg2rad(h0))
        else:
            hs0 = u[i, HSIN]
            hc0 = u[i, HCOS]
        if h1 != h0:
            hs1 = math.sin(_deg2rad(h1))
            hc1 = math.cos(_deg2rad(h1))
        else:
            hs1 = hs0
            hc1 = hc0
        sp = (v1 + v0) / 2
        s = hs0 + hs1
        c = hc0 + hc1
        d = math.sqrt((s * s) + (c * c))
        k = sp / d if d != 0.0 else math.nan  # (sp / 0 is not finite either)
        if math.isfinite(k):
            xdot = s * k
            ydot = c * k
        else:
            hdg = math.atan2(s, c)
            xdot = math.sin(hdg) * sp
            ydot = math.cos(hdg) * sp
        x0 = u[i, X]
        y0 = u[i, Y]
        nx = (xdot * dt) + x0
        ny = (ydot * dt) + y0
        if drift != 0:
            gx = xdot
            gy = ydot
            if dx_on:
                nx = nx + (dxt[i] * dt)
                gx = xdot + dxt[i]
            if dy_on:
                ny = ny + (dyt[i] * dt)
                gy = ydot + dyt[i]
            sog = math.sqrt((gx * gx) + (gy * gy))
        else:
            sog = abs(sp)
        hog = rel_ang_c(x0, y0, nx, ny)
        h_new = h1  # (the turn limit moves x, y and the heading, not the caches of h1)
        if v22 and u[i, TRAD] > 0 and h0 != h1:
            nx, ny, h_new = _turn_limit_c(u[i, TRAD], pc[14], x0, y0, h0, v1, sp, nx, ny, h1)
        u[i, MT] = u[i, CLK]
        it[i] += 1
        if u[i, HOLD] != 0.0:
            continue
        u[i, SOG] = sog
        u[i, HOG] = hog
        u[i, X] = nx
        u[i, Y] = ny
        u[i, HDG] = h_new
        u[i, SPD] = sp
        u[i, DEP] = depth
        u[i, PIT] = pitch
        u[i, YAW] = yaw
        u[i, HSIN] = hs1
        u[i, HCOS] = hc1
        u[i, HKEY] = h1
        u[i, PSIN] = psin1
        u[i, PKEY] = pitch
        u[i, TS] = u[i, TS] + dt
        u[i, TSMF] = fr
        u[i, TSMN] = nr
        u[i, TSMS] = ns
        # ---- altitude (§3.6)
        if u[i, WD] > 0:
            u[i, ALT] = _max0(u[i, WD] - depth)
    return 0


@register_jitable
def _propagate_once(
    i: int,
    u: Any,
    it: Any,
    pc: Any,
    mp: Any,
    dxt: Any,
    dyt: Any,
    w: Any,
    drift: int,
    ret: Any,
) -> int:
    """:func:`usm_propagate_map` of the whole batch as the one row of a one-row kernel (its
    batch-wide tests need every row: ``ret`` (1,) holds its result)."""
    ret[i] = usm_propagate_map(u, it, pc, mp, dxt, dyt, w, drift)
    return 0


#: The compiled :func:`usm_propagate_map` (cached on disk, built at the first call).
_kernels = lazy_kernels(_propagate_once, 8, error_model="numpy", parallel_min=SERIAL)

#: Rows from which :func:`run_propagate` loads the compiler when it is not loaded yet: fewer
#: rows run interpreted, since importing numba (about 0.2 s of CPU) costs more than a short
#: run of one vehicle saves (``marinesim moos`` never compiles).
COMPILED_MIN = 16


def run_propagate(
    u: np.ndarray,
    it: np.ndarray,
    pc: np.ndarray,
    mp: np.ndarray,
    dxt: np.ndarray,
    dyt: np.ndarray,
    drift: int = 1,
) -> int:
    """:func:`usm_propagate_map` compiled (laws compiled, and numba loaded or N ≥
    :data:`COMPILED_MIN`) or interpreted (``MARINESIM_JIT=0``, or a few rows without numba);
    the same instructions, the same bits."""
    n = u.shape[0]
    w = np.empty((n, NSCRATCH))
    ret = np.zeros(1, dtype=np.int64)
    if (n >= COMPILED_MIN or "numba" in sys.modules) and jit_enabled():
        _kernels().launch("cpu", (u, it, pc, mp, dxt, dyt, w, int(drift), ret))
        return int(ret[0])
    # through memoryviews: Python floats, the same IEEE arithmetic as numpy's scalars at a
    # third of the cost (the law divides by nothing that can be 0 but through _quot and
    # takes no root or arcsine out of its domain: no Python float error where numpy gives
    # inf or NaN)
    return usm_propagate_map(
        memoryview(u), memoryview(it), memoryview(pc), memoryview(mp),
        memoryview(np.ascontiguousarray(dxt)), memoryview(np.ascontiguousarray(dyt)),
        memoryview(w), int(drift),
    )  # fmt: skip
