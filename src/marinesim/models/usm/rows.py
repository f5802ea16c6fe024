"""The uSimMarine ``usm`` iteration over structure-of-arrays rows, for compiled code.

:func:`usm_mail_cmd` (the three actuator messages an autopilot sends each tick) and
:func:`usm_propagate` (one ``propagateNodeRecord`` of every vehicle plus the iteration's
bookkeeping) are ``register_jitable`` transcriptions of :func:`~marinesim.models.usm.mail.
apply_mail` (``DESIRED_RUDDER``, ``DESIRED_THRUST``, ``DESIRED_ELEVATOR``) and of
:func:`~marinesim.models.usm.publish.iterate` (:mod:`.propagate`) for the configurations
the compiled tick takes: variant ``usm``, one NAV record (no ``dual_state``), the thrust
factor map, no differential or reverse thrust, nothing paused, no water depth.  Each
operation is the numpy route's, in the same order, including which formula a batch-wide
test (``r.any()``, ``elevator.any()``…) selects, so the rows get the same bits
(``tests/models/usm/test_usm_rows.py`` checks them against the numpy route).

The state is one float matrix ``u`` (N, :data:`NU`) whose columns are :data:`FIELDS`
(:class:`~marinesim.models.usm.state.UsmState` field names) and ``it`` (N,) the iteration
counts; ``pc`` holds the configuration numbers (:func:`config_numbers`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from marinesim.core.jitable import register_jitable
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import _PI

__all__ = ["FIELDS", "NU", "config_numbers", "usm_mail_cmd", "usm_propagate", "why_not_rows"]

#: Columns of ``u`` (UsmState fields).
FIELDS = (
    "x", "y", "heading", "speed", "depth", "pitch", "yaw", "sog", "hog", "hsin", "hcos",
    "hkey", "psin", "pkey", "ts", "thrust", "rudder", "rudder_prev", "rudder_tstamp",
    "elevator", "turn_rate", "rotate_speed", "buoyancy_rate", "drift_x", "drift_y",
    "current_x", "current_y", "moos_time",
)  # fmt: skip
NU = len(FIELDS)
(X, Y, HDG, SPD, DEP, PIT, YAW, SOG, HOG, HSIN, HCOS, HKEY, PSIN, PKEY, TS, THR, RUD, RPREV,
 RTS, ELEV, TAU, ROT, BUOY, DRX, DRY, CURX, CURY, MT) = range(NU)  # fmt: skip
#: Scratch columns of :func:`usm_propagate` (per row: new speed, drift east, drift north).
NSCRATCH = 3


def config_numbers(config: UsmConfig) -> np.ndarray:
    """``pc``: thrust factor, turn loss, max accel/decel, max depth rate (and its speed),
    rudder rate limit."""
    tm = config.thrust_map
    f = 20.0 if tm is None else float(tm.thrust_factor)
    return np.array([
        f, config.turn_loss, config.max_acceleration, config.max_deceleration,
        config.max_depth_rate, config.max_depth_rate_speed, config.max_rudder_degs_per_sec,
    ])  # fmt: skip


def why_not_rows(config: UsmConfig) -> str | None:
    """Why the rows do not take ``config`` (None: they do)."""
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


@register_jitable
def usm_propagate(u: Any, it: Any, pc: Any, t: float, dxt: Any, dyt: Any, w: Any) -> int:
    """One iteration of every row at MOOS time ``t`` (propagate, ``ts``, counters).

    ``dxt``, ``dyt`` (N,): the drift the record moves with (drift + current); ``w`` (N,
    :data:`NSCRATCH`) scratch.  Returns 1 (nothing written) when a row's step is not
    positive, else 0.
    """
    n = u.shape[0]
    f, loss, macc, mdec, mdr, mdrs = pc[0], pc[1], pc[2], pc[3], pc[4], pc[5]
    rud_any = False
    elev_any = False
    rot_any = False
    dx_on = False
    dy_on = False
    for i in range(n):
        if t - u[i, TS] <= 0.0:
            return 1
        rud_any = rud_any or u[i, RUD] != 0.0
        elev_any = elev_any or u[i, ELEV] != 0.0
        rot_any = rot_any or u[i, ROT] != 0.0
        dx_on = dx_on or dxt[i] != 0.0
        dy_on = dy_on or dyt[i] != 0.0
    # ---- speed (§3.1), the pitch cache; which heading and depth formulas apply
    turning = False
    psin_any = False
    for i in range(n):
        dt = t - u[i, TS]
        v0 = u[i, SPD]
        vs = 0.0 if f == 0 else _max0(u[i, THR]) / f
        if rud_any:
            vs = (1.0 - ((abs(_clip(u[i, RUD], -100.0, 100.0)) / 100) * loss)) * vs
        if macc > 0 and vs > v0 and (vs - v0) / dt > macc:
            vs = (macc * dt) + v0
        if mdec > 0 and vs < v0 and (v0 - vs) / dt > mdec:
            vs = (mdec * dt * -1) + v0
        w[i, 0] = vs
        turning = turning or (vs != 0.0 and u[i, RUD] != 0.0)
        if u[i, PKEY] != u[i, PIT]:
            u[i, PSIN] = math.sin(_deg2rad(u[i, PIT]))  # the cache's refresh (as the model)
        psin_any = psin_any or u[i, PSIN] != 0.0
    level = not (elev_any or psin_any)
    for i in range(n):
        dt = t - u[i, TS]
        v0 = u[i, SPD]
        v1 = w[i, 0]
        h0 = u[i, HDG]
        # ---- heading (§3.2)
        if turning:
            rud = u[i, RUD] if v1 != 0.0 else 0.0
            gain = ((u[i, THR] - 50) / 50) + 1
            dh = ((_clip(rud, -100.0, 100.0) * (u[i, TAU] / 100)) * dt) * gain
        else:
            dh = 0.0
        if rot_any:
            dh = dh + (dt * u[i, ROT])
        h1 = angle360_moos(dh + h0)
        yaw = ((h1 - (360.0 if h1 > 180.0 else 0.0)) / -180.0) * _PI
        # ---- depth and pitch (§3.4)
        d0 = u[i, DEP]
        b = u[i, BUOY]
        if level:
            depth = d0 if b == 0 else d0 + ((-b) * dt)
            pitch = u[i, PIT]
            psin1 = u[i, PSIN]
        else:
            r_pitch = -u[i, PSIN] * v1
            if elev_any:
                pct_d = math.sqrt(min(v1 / mdrs, 1.0)) if mdrs > 0 else 1.0
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
        k = sp / math.sqrt((s * s) + (c * c))
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
        gx = xdot
        gy = ydot
        if dx_on:
            nx = nx + (dxt[i] * dt)
            gx = xdot + dxt[i]
        if dy_on:
            ny = ny + (dyt[i] * dt)
            gy = ydot + dyt[i]
        u[i, SOG] = math.sqrt((gx * gx) + (gy * gy))
        u[i, HOG] = rel_ang_c(x0, y0, nx, ny)
        u[i, X] = nx
        u[i, Y] = ny
        u[i, HDG] = h1
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
        u[i, MT] = t
        it[i] += 1
    return 0
