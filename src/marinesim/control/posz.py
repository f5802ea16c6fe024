"""The z axis of ArduPilot's AC_PosControl, simplified as ArduSub uses it (SURFTRAK spec §8).

Units are ArduSub's: **z up, cm, cm/s, cm/s²**, loop period ``dt`` = 0.0025 s.

Batching convention (used by every 400 Hz module of the SURFTRAK chain)
------------------------------------------------------------------------
State values are either arrays of shape (N,) (one row per vehicle) or, for N = 1, plain Python
floats.  The code is written once with arithmetic that means the same on both (boolean masks
multiply, ``_where``/``_clamp`` are blends), so the scalar case is the batch code path with a
cheaper number type — there is no second copy of the control law.  Mixing is allowed:
parameters are Python floats and broadcast against (N,) states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError

__all__ = [
    "POSCONTROL_OVERSPEED_GAIN_Z",
    "PosZ",
    "PosZGains",
    "alpha",
    "any_true",
    "clamp",
    "climb_rate_step",
    "half_power",
    "inv_sqrt_controller",
    "shape_accel",
    "shape_pos_vel_accel",
    "shape_vel_accel",
    "sqrt_controller",
    "update_pos_vel_accel",
    "update_step",
    "where",
]

#: Over-speed gain of AC_PosControl (z): accel and jerk scale by 2·v/limit beyond the limit.
POSCONTROL_OVERSPEED_GAIN_Z = 2.0
#: Hard cap of the downward shaping acceleration (cm/s²).
ACCEL_DOWN_CAP = 750.0
#: Throttle low-pass of AC_PosControl → AP_Motors (Hz).
THROTTLE_CUTOFF_HZ = 2.0

Num = Any  # float or numpy array of shape (N,)


# --------------------------------------------------------------------------- helpers


def where(cond: Num, a: Num, b: Num) -> Num:
    """Elementwise ``a if cond else b`` for floats and (N,) arrays (a and b must be finite)."""
    return b + (a - b) * cond


def clamp(x: Num, lo: Num, hi: Num) -> Num:
    """Elementwise ``min(max(x, lo), hi)`` for floats and (N,) arrays."""
    x = x + (lo - x) * (x < lo)
    return x + (hi - x) * (x > hi)


def any_true(mask: Num) -> bool:
    """True if any element of ``mask`` (a bool or a bool array) is true."""
    if type(mask) is bool:
        return mask
    if isinstance(mask, (int, float)):
        return bool(mask)
    return bool(mask.any())


def half_power(x: Num) -> Num:
    """√x for x ≥ 0 (float or ndarray (N,)): the IEEE square root, as ArduPilot's
    ``safe_sqrt`` computes it.

    ``math.sqrt`` for floats, ``numpy.sqrt`` for arrays and the compiled ``sqrt`` are all
    correctly rounded, hence identical to the last bit, so a vehicle gives the same numbers
    alone, in a batch and compiled.  (``x ** 0.5`` on a float calls the C library's ``pow``,
    which differs from the square root in the last bit for ≈ 0.1 % of x: that made the float
    and array paths disagree.)
    """
    if isinstance(x, float):
        return math.sqrt(x)
    return np.sqrt(x)


def alpha(dt: float, cutoff_hz: float) -> float:
    """First-order low-pass coefficient ``dt/(dt + 1/(2π f))`` (1 when the filter is off)."""
    if cutoff_hz <= 0.0:
        return 1.0
    return dt / (dt + 1.0 / (2.0 * math.pi * cutoff_hz))


# --------------------------------------------------------------------------- AP_Math/control


def sqrt_controller(error: Num, p: float, d_max: Num, dt: float) -> Num:
    """Square-root controller (linear near zero, constant deceleration far away).

    Parameters
    ----------
    error : float or ndarray (N,)
        Error (any unit u).
    p : float
        Linear gain (1/s), > 0.
    d_max : float or ndarray (N,)
        Second-order limit (u/s²), > 0.
    dt : float
        Step (s); when > 0 the output is clamped to ±|error|/dt.

    Returns
    -------
    float or ndarray (N,)
        Correction rate (u/s).
    """
    # magnitude on |e| (blends instead of branches, see the module note), then the sign
    ae = abs(error)
    lin = d_max / (p * p)
    lin_out = ae * p
    mag = lin_out + (half_power(2.0 * d_max * abs(ae - 0.5 * lin)) - lin_out) * (ae > lin)
    if dt > 0.0:
        lim = ae / dt
        mag = mag + (lim - mag) * (mag > lim)
    return mag * (1 - 2 * (error < 0))


def inv_sqrt_controller(output: float, p: float, d_max: float) -> float:
    """Error that makes :func:`sqrt_controller` return ``output`` (p > 0, d_max > 0).

    Parameters
    ----------
    output : float
        Controller output (u/s).
    p : float
        Linear gain (1/s).
    d_max : float
        Second-order limit (u/s²).

    Returns
    -------
    float
        The error (u).
    """
    if p <= 0.0 or d_max <= 0.0:
        raise ConfigError("inv_sqrt_controller needs p > 0 and d_max > 0")
    if abs(output) < d_max / p:
        return output / p
    dist = d_max / (2.0 * p * p) + output * output / (2.0 * d_max)
    return dist if output > 0 else -dist


def shape_accel(a_in: Num, a: Num, jerk: Num, dt: float) -> Num:
    """Move the acceleration ``a`` towards ``a_in`` by at most ``jerk·dt``; returns the new a."""
    step = jerk * dt
    d = a_in - a
    d = d + (-step - d) * (d < -step)
    return a + d + (step - d) * (d > step)


def shape_vel_accel(
    v_in: Num,
    a_in: Num,
    v: Num,
    a: Num,
    a_min: Num,
    a_max: Num,
    jerk: Num,
    dt: float,
    limit_total: bool,
) -> Num:
    """Jerk-limited acceleration that drives velocity ``v`` to ``v_in``; returns the new a.

    Parameters
    ----------
    v_in, a_in : float or ndarray (N,)
        Demanded velocity (cm/s) and feed-forward acceleration (cm/s²).
    v, a : float or ndarray (N,)
        Current shaped velocity (cm/s) and acceleration (cm/s²).
    a_min, a_max : float or ndarray (N,)
        Acceleration limits (cm/s²), a_min < 0 < a_max.
    jerk : float or ndarray (N,)
        Jerk limit (cm/s³).
    dt : float
        Step (s).
    limit_total : bool
        Clamp the total (correction + feed-forward) to the limits.
    """
    ev = v_in - v
    # KPa = jerk / (a_max if ev > 0 else -a_min); sqrt_controller(ev, KPa, jerk, dt) inline
    kpa = jerk / (-a_min + (a_max + a_min) * (ev > 0))
    ae = abs(ev)
    lin = jerk / (kpa * kpa)
    lin_out = ae * kpa
    mag = lin_out + (half_power(2.0 * jerk * abs(ae - 0.5 * lin)) - lin_out) * (ae > lin)
    lim = ae / dt
    mag = mag + (lim - mag) * (mag > lim)
    acc = mag * (1 - 2 * (ev < 0))
    acc = acc + (a_min - acc) * (acc < a_min)
    acc = acc + (a_max - acc) * (acc > a_max) + a_in
    if limit_total:
        acc = acc + (a_min - acc) * (acc < a_min)
        acc = acc + (a_max - acc) * (acc > a_max)
    return shape_accel(acc, a, jerk, dt)


def shape_pos_vel_accel(
    p_in: Num,
    v_in: Num,
    a_in: Num,
    p: Num,
    v: Num,
    a: Num,
    v_min: Num,
    v_max: Num,
    a_min: Num,
    a_max: Num,
    jerk: Num,
    dt: float,
    limit_total: bool,
) -> Num:
    """Jerk-limited acceleration driving position ``p`` to ``p_in``; returns the new a.

    The position loop has gain KPv = 0.5·jerk/accel and the velocity loop KPa = jerk/accel
    (SURFTRAK spec §8.5).  Units: cm, cm/s, cm/s², cm/s³; arrays of shape (N,) or floats.
    """
    ep = p_in - p
    pos = ep > 0
    # limit −a_min/2 and KPv = jerk/(−2 a_min) for a positive error, else a_max/2 and jerk/(2 a_max)
    acc_lim = 0.5 * a_max + (-0.5 * a_min - 0.5 * a_max) * pos
    kpv = 0.5 * jerk / (a_max + (-a_min - a_max) * pos)
    ae = abs(ep)
    lin = acc_lim / (kpv * kpv)
    lin_out = ae * kpv
    mag = lin_out + (half_power(2.0 * acc_lim * abs(ae - 0.5 * lin)) - lin_out) * (ae > lin)
    lim = ae / dt
    mag = mag + (lim - mag) * (mag > lim)
    vt = mag * (1 - 2 * (ep < 0))
    vt = vt + (v_min - vt) * (vt < v_min)
    vt = vt + (v_max - vt) * (vt > v_max) + v_in
    if limit_total:
        vt = vt + (v_min - vt) * (vt < v_min)
        vt = vt + (v_max - vt) * (vt > v_max)
    return shape_vel_accel(vt, a_in, v, a, a_min, a_max, jerk, dt, limit_total)


def update_pos_vel_accel(
    p: Num, v: Num, a: Num, dt: float, limit: Num, e_p: Num, e_v: Num
) -> tuple[Num, Num]:
    """Advance (p, v) by one step of acceleration ``a`` unless that pushes against a limit.

    Parameters
    ----------
    p, v, a : float or ndarray (N,)
        Position (cm), velocity (cm/s), acceleration (cm/s²).
    dt : float
        Step (s).
    limit : float or ndarray (N,)
        +1 / −1 when the throttle is saturated up / down, else 0.
    e_p, e_v : float or ndarray (N,)
        Position-P and velocity-PID errors (cm, cm/s).

    Returns
    -------
    (p, v)
        The advanced position and velocity.
    """
    dp = v * dt + 0.5 * a * dt * dt
    dv = a * dt
    if not any_true(limit != 0):  # not saturated anywhere: nothing is blocked
        return p + dp, v + dv
    p = p + dp * (((dp * limit > 0) & (e_p * limit > 0)) ^ True)
    block_v = (dv * limit > 0) & (e_v * limit > 0)
    # blocked: limited to ±|v| when that is a step back towards zero (v·limit < 0), else 0
    av = abs(v)
    dv_lim = dv + (-av - dv) * (dv < -av)
    dv_lim = (dv_lim + (av - dv_lim) * (dv_lim > av)) * (v * limit < 0)
    dv = dv + (dv_lim - dv) * block_v
    return p, v + dv


# --------------------------------------------------------------------------- one loop, pure


def climb_rate_step(
    climb: Num,
    pos_target: Num,
    vel_desired: Num,
    accel_desired: Num,
    off: Num,
    v_off: Num,
    a_off: Num,
    off_target: Num,
    limit: Num,
    e_p: Num,
    e_v: Num,
    shaping: tuple[float, float, float, float, float],
) -> tuple[Num, Num, Num, Num, Num, Num]:
    """One step of ``set_target_from_climb_rate`` as a pure function (SURFTRAK spec §8.2).

    Parameters
    ----------
    climb : float or ndarray (N,)
        Climb-rate demand (cm/s).
    pos_target, vel_desired, accel_desired : float or ndarray (N,)
        Total shaped target (cm, cm/s, cm/s², incl. the terrain offset).
    off, v_off, a_off, off_target : float or ndarray (N,)
        Terrain offset, its rate and acceleration, and its target (cm, cm/s, cm/s², cm).
    limit : float or ndarray (N,)
        Motor saturation +1 / −1 / 0.
    e_p, e_v : float or ndarray (N,)
        Last position and (filtered) velocity errors (cm, cm/s).
    shaping : tuple
        ``(dt, v_dn, v_up, accel, jerk)`` (s, cm/s, cm/s, cm/s², cm/s³), see
        :attr:`PosZGains.shaping`.

    Returns
    -------
    tuple
        New ``(pos_target, vel_desired, accel_desired, off, v_off, a_off)``.
    """
    dt, v_dn, v_up, accel_lim, jerk_lim = shaping
    p = pos_target - off
    v = vel_desired - v_off
    a = accel_desired - a_off
    # over-speed gain (flat desired velocity beyond a limit)
    gain = 1.0 + (POSCONTROL_OVERSPEED_GAIN_Z * v / v_dn - 1.0) * (v < v_dn)
    gain = gain + (POSCONTROL_OVERSPEED_GAIN_Z * v / v_up - gain) * (v > v_up)
    acc = accel_lim * gain
    jerk = jerk_lim * gain
    p, v = update_pos_vel_accel(p, v, a, dt, limit, e_p, e_v)
    acc_dn = acc + (ACCEL_DOWN_CAP - acc) * (acc > ACCEL_DOWN_CAP)  # acc > 0 always
    a = shape_vel_accel(climb, 0.0, v, a, -acc_dn, acc, jerk, dt, True)
    lim_dn = limit * (limit < 0)
    off, v_off = update_pos_vel_accel(off, v_off, a_off, dt, lim_dn, e_p, e_v)
    a_off = shape_pos_vel_accel(
        off_target, 0.0, 0.0, off, v_off, a_off,
        v_dn, v_up, -accel_lim, accel_lim, jerk_lim, dt, False,
    )  # fmt: skip
    return p + off, v + v_off, a + a_off, off, v_off, a_off


def update_step(
    z: Num,
    vz: Num,
    az: Num,
    saturated: Num,
    pos_target: Num,
    vel_desired: Num,
    accel_desired: Num,
    ev_f: Num,
    ea_f: Num,
    i_acc: Num,
    reset_filters: bool,
    loops: tuple[float, ...],
) -> tuple[Num, Num, Num, Num, Num, Num, Num, Num]:
    """Position P, velocity P and acceleration PI loops as a pure function (§8.4).

    Parameters
    ----------
    z, vz, az : float or ndarray (N,)
        Belief z (cm), climb rate (cm/s), vertical acceleration (cm/s², up +).
    saturated : bool or ndarray (N,)
        Motors at a throttle limit (integrator anti-windup).
    pos_target, vel_desired, accel_desired : float or ndarray (N,)
        Shaped target (cm, cm/s, cm/s²).
    ev_f, ea_f : float or ndarray (N,)
        Filtered velocity (cm/s) and acceleration (cm/s²) errors.
    i_acc : float or ndarray (N,)
        Acceleration integrator (per mille).
    reset_filters : bool
        Seed the error filters with the current errors (first loop after init).
    loops : tuple
        :attr:`PosZGains.loops`.

    Returns
    -------
    tuple
        New ``(pos_target, e_p, vel_target, ev_f, accel_target, ea_f, i_acc, throttle)``;
        the throttle (0…1) is unfiltered and may exceed the range.
    """
    e_min, e_max, pos_p, accel, vel_p, a_vel, a_acc, acc_i, dt, imax, acc_p, acc_ff, hover = loops
    e = pos_target - z
    lo = e < e_min
    hi = e > e_max
    e = clamp(e, e_min, e_max)
    pos_target = where(lo | hi, z + e, pos_target)
    vel_target = sqrt_controller(e, pos_p, accel, 0.0) + vel_desired
    ev = vel_target - vz
    if reset_filters:
        ev_f = ev
    else:
        ev_f = ev_f + a_vel * (ev - ev_f)
    accel_target = vel_p * ev_f + accel_desired
    ea = accel_target - az
    if reset_filters:
        ea_f = ea
    else:
        ea_f = ea_f + a_acc * (ea - ea_f)
    di = acc_i * ea_f * dt
    grows = (i_acc * di > 0) | ((i_acc == 0) & (di != 0))
    stop = saturated & grows
    i_acc = clamp(i_acc + di * (stop ^ True), -imax, imax)
    out = (acc_p * ea_f + i_acc + acc_ff * accel_target) * 0.001
    return pos_target, e, vel_target, ev_f, accel_target, ea_f, i_acc, out + hover


# --------------------------------------------------------------------------- the controller


class PosZGains:
    """Gains and limits of the z controller, in ArduSub's Sub 4.5 units (cm based).

    Parameters
    ----------
    pos_p : float
        PSC_POSZ_P (1/s).
    vel_p : float
        PSC_VELZ_P (1/s).
    vel_flte : float
        PSC_VELZ_FLTE (Hz).
    acc_p, acc_i, acc_ff : float
        PSC_ACCZ_P, PSC_ACCZ_I, PSC_ACCZ_FF (throttle per mille per cm/s²).
    acc_imax : float
        PSC_ACCZ_IMAX (per mille); raised at run time to 1000·hover.
    acc_flte, acc_fltt : float
        PSC_ACCZ_FLTE, PSC_ACCZ_FLTT (Hz).
    jerk_z : float
        PSC_JERK_Z (m/s³).
    accel_z : float
        PILOT_ACCEL_Z (cm/s²): the shaping acceleration limit A.
    speed_up, speed_dn : float
        PILOT_SPEED_UP and the effective descent speed (cm/s, both > 0).
    hover : float
        Hover throttle (0.5 for Sub).
    dt : float
        Loop period (s).
    """

    def __init__(
        self,
        *,
        pos_p: float = 3.0,
        vel_p: float = 8.0,
        vel_flte: float = 5.0,
        acc_p: float = 0.5,
        acc_i: float = 0.1,
        acc_ff: float = 0.0,
        acc_imax: float = 100.0,
        acc_flte: float = 20.0,
        acc_fltt: float = 0.0,
        jerk_z: float = 5.0,
        accel_z: float = 100.0,
        speed_up: float = 500.0,
        speed_dn: float = 500.0,
        hover: float = 0.5,
        dt: float = 0.0025,
    ) -> None:
        if pos_p <= 0 or accel_z <= 0 or jerk_z <= 0 or speed_up <= 0 or speed_dn <= 0:
            raise ConfigError(
                "PSC_POSZ_P, PILOT_ACCEL_Z, PSC_JERK_Z, PILOT_SPEED_UP and the descent speed "
                "must all be > 0"
            )
        self.pos_p = float(pos_p)
        self.vel_p = float(vel_p)
        self.acc_p = float(acc_p)
        self.acc_i = float(acc_i)
        self.acc_ff = float(acc_ff)
        self.imax = max(float(acc_imax), 1000.0 * hover)
        self.hover = float(hover)
        self.dt = float(dt)
        self.a_vel = alpha(dt, vel_flte)
        self.a_acc = alpha(dt, acc_flte)
        self.a_thr = alpha(dt, THROTTLE_CUTOFF_HZ)
        self.accel = float(accel_z)
        self.v_up = float(speed_up)
        self.v_dn = -float(speed_dn)
        jerk = jerk_z * 100.0
        jerk = min(jerk, min(981.0, self.accel) * 2.0 * math.pi * acc_flte / 5.0)
        if acc_fltt > 0:
            jerk = min(jerk, min(981.0, self.accel) * 2.0 * math.pi * acc_fltt / 5.0)
        self.jerk = jerk
        # AC_P_1D leash: error clamps from the speed limits
        self.e_min = inv_sqrt_controller(self.v_dn, self.pos_p, self.accel)
        self.e_max = inv_sqrt_controller(self.v_up, self.pos_p, self.accel)

    @property
    def shaping(self) -> tuple[float, float, float, float, float]:
        """``(dt, v_dn, v_up, accel, jerk)`` for :func:`climb_rate_step`."""
        return (self.dt, self.v_dn, self.v_up, self.accel, self.jerk)

    @property
    def loops(self) -> tuple[float, ...]:
        """``(e_min, e_max, pos_p, accel, vel_p, a_vel, a_acc, acc_i, dt, imax, acc_p, acc_ff,
        hover)`` for :func:`update_step`."""
        return (
            self.e_min, self.e_max, self.pos_p, self.accel, self.vel_p, self.a_vel, self.a_acc,
            self.acc_i, self.dt, self.imax, self.acc_p, self.acc_ff, self.hover,
        )  # fmt: skip

    @property
    def kpv(self) -> float:
        """Terrain-following position-loop gain KPv = 0.5·J/A (1/s)."""
        return 0.5 * self.jerk / self.accel

    @property
    def kpa(self) -> float:
        """Terrain-following velocity-loop gain KPa = J/A (1/s)."""
        return self.jerk / self.accel


class PosZ:
    """State of the z controller for N vehicles (floats when N = 1), cm / z up.

    Attributes are the AC_PosControl quantities: ``pos_target``, ``vel_desired``,
    ``accel_desired`` (totals incl. the terrain offset), ``off``, ``v_off``, ``a_off``,
    ``off_target`` (terrain offset and its target), ``vel_target``, ``accel_target``,
    ``throttle`` (controller output 0…1 before the motor filter), ``limit`` (+1/−1/0).
    """

    __slots__ = (
        "g", "pos_target", "vel_desired", "accel_desired", "off", "v_off", "a_off",
        "off_target", "limit", "e_p", "e_v", "vel_target", "accel_target", "i_acc", "ev_f",
        "ea_f", "reset_filters", "throttle", "_shaping", "_loops",
    )  # fmt: skip

    def __init__(self, gains: PosZGains, z: Num, vz: Num, az: Num, throttle: Num) -> None:
        self.g = gains
        self._shaping = gains.shaping  # the gains are fixed once the controller exists
        self._loops = gains.loops
        zero = z * 0.0
        self.off = zero
        self.v_off = zero
        self.a_off = zero
        self.off_target = zero
        self.limit = zero
        self.e_p = zero
        self.e_v = zero
        self.vel_target = zero
        self.accel_target = zero
        self.i_acc = zero
        self.ev_f = zero
        self.ea_f = zero
        self.reset_filters = True
        self.throttle = throttle
        self.init(z, vz, az, throttle)

    def init(self, z: Num, vz: Num, az: Num, throttle: Num) -> None:
        """Controller initialisation at the current z, vz (cm, cm/s) and az (cm/s²), §8.3."""
        g = self.g
        zero = z * 0.0
        self.pos_target = z + zero
        self.vel_desired = vz + zero
        self.accel_desired = clamp(az + zero, -g.accel, g.accel)
        self.off = zero
        self.v_off = zero
        self.a_off = zero
        self.off_target = zero
        self.reset_filters = True
        self.i_acc = clamp((throttle - g.hover) * 1000.0 + zero, -g.imax, g.imax)
        self.throttle = throttle + zero

    def init_terrain_offset(self, mask: Num, x: Num) -> None:
        """Set the terrain offset and its target to ``x`` where ``mask``; total target kept.

        The flat part of the position target is shifted by −(x − old offset), so
        ``pos_target`` (the total) does not move (§8.3).
        """
        self.off = where(mask, x, self.off)
        self.off_target = where(mask, x, self.off_target)

    @property
    def flat_target(self) -> Num:
        """Position target without the terrain offset (cm)."""
        return self.pos_target - self.off

    def set_target_from_climb_rate(self, climb: Num) -> None:
        """Advance the shaped target by one step for a climb-rate demand (cm/s), §8.2."""
        (
            self.pos_target, self.vel_desired, self.accel_desired, self.off, self.v_off,
            self.a_off,
        ) = climb_rate_step(
            climb, self.pos_target, self.vel_desired, self.accel_desired, self.off, self.v_off,
            self.a_off, self.off_target, self.limit, self.e_p, self.e_v, self._shaping,
        )  # fmt: skip

    def update(self, z: Num, vz: Num, az: Num, saturated: Num) -> Num:
        """Run the position P, velocity P and acceleration PI loops; returns the throttle.

        Parameters
        ----------
        z, vz, az : float or ndarray (N,)
            Belief z (cm), climb rate (cm/s), measured vertical acceleration (cm/s², up +).
        saturated : bool or ndarray (N,)
            The motors' throttle is at a limit (integrator anti-windup).

        Returns
        -------
        float or ndarray (N,)
            Throttle 0…1 (unfiltered, may exceed the range; the motors clamp it).
        """
        (
            self.pos_target, self.e_p, self.vel_target, self.ev_f, self.accel_target, self.ea_f,
            self.i_acc, self.throttle,
        ) = update_step(
            z, vz, az, saturated, self.pos_target, self.vel_desired, self.accel_desired,
            self.ev_f, self.ea_f, self.i_acc, self.reset_filters, self._loops,
        )  # fmt: skip
        self.e_v = self.ev_f
        self.reset_filters = False
        return self.throttle
