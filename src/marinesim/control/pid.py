"""Batched PID control law with anti-windup (the pure part of the PID controller plugins).

Behaviour follows MOOS-IvP's ``ScalarPID`` as used by pMarinePID: the integral accumulates
``ki·e·dt`` and is clamped to ±``integral_limit`` (anti-windup by clamping the integral term
itself), the derivative is the finite difference of the error over ``dt`` (0 on the first
update), and the output is clamped to ±``output_limit``.  Every array has a leading axis N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.frames import angle180
from marinesim.core.jitable import register_jitable

__all__ = [
    "PidGains",
    "PidState",
    "angle360_c",
    "heading_error",
    "heading_error_c",
    "pid_init",
    "pid_row",
    "pid_update",
]

#: ``np.clip`` on float arrays without its Python dispatch (the same ufunc, the same bits).
_clip = getattr(getattr(np, "_core", None) and np._core.umath, "clip", np.clip)


@dataclass(frozen=True)
class PidGains:
    """Gains and limits of one loop (scalars, shared by the block).

    Attributes
    ----------
    kp : float
        Proportional gain [output unit / error unit].
    ki : float
        Integral gain [output unit / (error unit · s)].
    kd : float
        Derivative gain [output unit · s / error unit].
    integral_limit : float
        Bound of the integral term |Σ ki·e·dt| [output unit]; ≥ 0.
    output_limit : float
        Bound of the output [output unit]; > 0.
    """

    kp: float
    ki: float = 0.0
    kd: float = 0.0
    integral_limit: float = 0.0
    output_limit: float = 100.0


@dataclass(frozen=True)
class PidState:
    """Memory of N loops.

    Attributes
    ----------
    integral : ndarray, shape (N,)
        Integral term Σ ki·e·dt [output unit] (already multiplied by ki).
    prev_error : ndarray, shape (N,)
        Error at the previous update (NaN before the first update).
    """

    integral: NDArray[np.float64]
    prev_error: NDArray[np.float64]


def pid_init(n: int | tuple[int, ...]) -> PidState:
    """Fresh memory for ``n`` loops (zero integral, no previous error).

    ``n`` may be a shape, e.g. (N, k) for k loops per vehicle side by side (gains then hold
    one value per column, arrays of shape (k,)).
    """
    return PidState(np.zeros(n), np.full(n, np.nan))


def heading_error(desired_deg: ArrayLike, heading_deg: ArrayLike) -> NDArray[np.float64]:
    """Heading error wrapped to (−180, 180] [deg]; positive = turn clockwise (starboard).

    Parameters
    ----------
    desired_deg, heading_deg : array_like, shape (N,)
        Marine headings [deg].
    """
    return angle180(np.asarray(desired_deg, dtype=float) - np.asarray(heading_deg, dtype=float))


def pid_update(
    gains: PidGains,
    state: PidState,
    error: ArrayLike,
    dt: float,
    *,
    active: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], PidState]:
    """One PID update for N loops.

    Parameters
    ----------
    gains : PidGains
    state : PidState
        Memory, arrays of shape (N,).
    error : array_like, shape (N,)
        Setpoint − measurement [error unit].
    dt : float
        Time since the previous update [s], > 0.
    active : array_like of bool, shape (N,), optional
        Rows to update; the others keep their memory and output 0.

    Returns
    -------
    output : ndarray, shape (N,)
        Clamped command [output unit] (0 where the error is NaN or the row is inactive).
    state : PidState
        Updated memory.
    """
    e = np.asarray(error, dtype=float)
    mask = np.isfinite(e)
    if active is not None:
        mask &= np.asarray(active, dtype=bool)
    e0 = np.where(mask, e, 0.0)
    prev = state.prev_error
    # prev is finite or NaN (never ±inf: it only ever holds e0), so where it is finite the
    # difference is e0 - prev; elsewhere the NaN is discarded by the where
    deriv = np.where(np.isfinite(prev), (e0 - prev) / dt, 0.0)
    integral = state.integral + gains.ki * e0 * dt
    lim = abs(gains.integral_limit)
    integral = _clip(integral, -lim, lim)
    out = gains.kp * e0 + gains.kd * deriv + integral
    out = _clip(out, -gains.output_limit, gains.output_limit)
    out = np.where(mask, out, 0.0)
    new_integral = np.where(mask, integral, state.integral)
    new_prev = np.where(mask, e0, prev)
    return out, PidState(new_integral, new_prev)


@register_jitable
def angle360_c(a: float) -> float:
    """:func:`~marinesim.core.frames.angle360` of one angle (``np.mod``'s rules, the same bits)."""
    m = a % 360.0  # Python's float % (and numba's) is np.mod's rule: the same bits
    if m >= 360.0:
        m -= 360.0
    return m


@register_jitable
def heading_error_c(desired_deg: float, heading_deg: float) -> float:
    """:func:`heading_error` of one pair (wrapped to (−180, 180] [deg])."""
    a = angle360_c(desired_deg - heading_deg)
    return a - 360.0 if a > 180.0 else a


@register_jitable
def pid_row(
    kp: float, ki: float, kd: float, ilim: float, olim: float, st: Any, c: int, e: float,
    dt: float,
) -> float:
    """:func:`pid_update` of one loop of an active row: memory ``st[0, c]`` (integral) and
    ``st[1, c]`` (previous error) updated in place; returns the clamped output.

    ``e`` must be finite (a NaN error is a row :func:`pid_update` leaves alone)."""
    prev = st[1, c]
    deriv = (e - prev) / dt if math.isfinite(prev) else 0.0
    integral = st[0, c] + ki * e * dt
    lim = abs(ilim)
    integral = min(max(integral, -lim), lim) if integral == integral else integral
    out = kp * e + kd * deriv + integral
    out = min(max(out, -olim), olim) if out == out else out
    st[0, c] = integral
    st[1, c] = e
    return out
