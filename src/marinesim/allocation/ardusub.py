"""ArduSub-style factor mixer (``AP_Motors6DOF``), the peer baseline (``specs/allocation.md`` §7).

Inputs are normalised pilot/controller commands in [−1, 1] — roll, pitch, yaw, throttle
(bidirectional, positive = ascend), forward, lateral — not physical units.  For
``SUB_FRAME_VECTORED_6DOF`` the vertical group (roll, pitch, throttle) and the horizontal group
(yaw, forward, lateral) use disjoint thrusters and are normalised separately (uniform scaling
inside each group, no trading between groups).  No thrust curve, no voltage compensation.
Vectorised over N vehicles.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError

__all__ = ["COMMANDS", "command_wrench", "current_limit_gain", "mix", "pwm_from_output"]

#: Column order of commands and factor tables.
COMMANDS = ("roll", "pitch", "yaw", "throttle", "forward", "lateral")

Array = NDArray[np.float64]


def mix(
    commands: ArrayLike,
    factors: ArrayLike,
    directions: ArrayLike | None = None,
    throttle_thrust_max: float = 1.0,
) -> Array:
    """Motor outputs of ArduSub's 6-DOF factor mixer.

    Parameters
    ----------
    commands : array_like, shape (N, 6) or (6,)
        roll, pitch, yaw, throttle (+ = ascend), forward, lateral, each in [−1, 1] [-].
    factors : array_like, shape (n, 6)
        Factor table (R_i, P_i, Y_i, T_i, F_i, L_i) per motor, e.g.
        :func:`marinesim.allocation.vehicles.ardusub_factors`.
    directions : array_like, shape (n,), optional
        ``MOT_n_DIRECTION`` (+1/−1) per motor (default all +1).
    throttle_thrust_max : float
        Throttle is first clamped to ±this value (0–1).

    Returns
    -------
    ndarray, shape (N, n)
        Outputs in [−1, 1]; PWM = 1500 + 400·out (:func:`pwm_from_output`).

    Notes
    -----
    rpt_i = roll·R_i + pitch·P_i + throttle·T_i, normalised by max(1, max_i |rpt_i|);
    yfl_i = yaw·Y_i + forward·F_i + lateral·L_i, normalised by max(1, max_i |yfl_i|);
    out_i = clamp(dir_i·(rpt_i/rpt_max + yfl_i/yfl_max), −1, 1).
    """
    c = np.asarray(commands, dtype=float)
    if c.ndim == 1:
        c = c[None, :]
    fac = np.asarray(factors, dtype=float)
    if c.ndim != 2 or c.shape[1] != 6 or fac.ndim != 2 or fac.shape[1] != 6:
        raise ConfigError("commands must be (N, 6) and factors (n, 6)", param="commands")
    if not (0.0 <= throttle_thrust_max <= 1.0):
        raise ConfigError("throttle_thrust_max must be in [0, 1]", param="throttle_thrust_max")
    d = np.ones(fac.shape[0]) if directions is None else np.asarray(directions, dtype=float)
    c = c.copy()
    c[:, 3] = np.clip(c[:, 3], -throttle_thrust_max, throttle_thrust_max)
    rpt = c[:, [0, 1, 3]] @ fac[:, [0, 1, 3]].T
    yfl = c[:, [2, 4, 5]] @ fac[:, [2, 4, 5]].T
    rpt_max = np.maximum(1.0, np.max(np.abs(rpt), axis=1, keepdims=True))
    yfl_max = np.maximum(1.0, np.max(np.abs(yfl), axis=1, keepdims=True))
    return np.clip(d[None, :] * (rpt / rpt_max + yfl / yfl_max), -1.0, 1.0)


def pwm_from_output(out: ArrayLike) -> Array:
    """ArduSub output in [−1, 1] → PWM = 1500 + 400·out [µs] (upstream version read)."""
    return 1500.0 + 400.0 * np.asarray(out, dtype=float)


def command_wrench(b: ArrayLike, factors: ArrayLike) -> Array:
    """Wrench per unit command, B·M_AS (treating an output of 1 as 1 N along d_i).

    Parameters
    ----------
    b : array_like, shape (6, n)
        Allocation matrix (rows X, Y, Z, K, M, N).
    factors : array_like, shape (n, 6)
        Factor table (columns roll, pitch, yaw, throttle, forward, lateral).

    Returns
    -------
    ndarray, shape (6, 6)
        Column j = wrench [N, N·m] of a unit command j; nearly diagonal for a consistent
        geometry (roll→K, pitch→M, yaw→N, throttle→−Z, forward→X, lateral→Y).
    """
    return np.asarray(b, dtype=float) @ np.asarray(factors, dtype=float)


def current_limit_gain(
    gain: ArrayLike,
    current: ArrayLike,
    current_rate: ArrayLike,
    max_current: float,
    dt: float,
    time_constant: float = 5.0,
) -> Array:
    """One step of ArduSub's battery-current limiter gain (``MOT_BAT_CURR_MAX``/``_TC``).

    Parameters
    ----------
    gain : array_like, shape (N,)
        Present gain g ∈ [0, 1] multiplying every motor output.
    current : array_like, shape (N,)
        Measured battery current I [A].
    current_rate : array_like, shape (N,)
        dI/dt [A/s].
    max_current : float
        ``MOT_BAT_CURR_MAX`` [A] (> 0; the limiter is off when 0 — then the gain is 1).
    dt : float
        Step [s].
    time_constant : float
        ``MOT_BAT_CURR_TC`` τ_c [s] (default 5 s).

    Returns
    -------
    ndarray, shape (N,)
        g ← clamp(g + dt/(dt + τ_c)·(1 − ratio), 0, 1), with I_p = I + 5·dt·dI/dt and
        ratio = I/I_max, replaced by 2.5 if I_p > 1.5·I_max, or by I_p/I_max if
        I < I_max < I_p.
    """
    g = np.asarray(gain, dtype=float)
    if max_current <= 0:
        return np.ones_like(g)
    i = np.asarray(current, dtype=float)
    ip = i + 5.0 * dt * np.asarray(current_rate, dtype=float)
    ratio = i / max_current
    ratio = np.where(
        ip > 1.5 * max_current,
        2.5,
        np.where((i < max_current) & (max_current < ip), ip / max_current, ratio),
    )
    return np.clip(g + dt / (dt + time_constant) * (1.0 - ratio), 0.0, 1.0)
