"""Batched PID control law with anti-windup (the pure part of the PID controller plugins).

Behaviour follows MOOS-IvP's ``ScalarPID`` as used by pMarinePID: the integral accumulates
``ki·e·dt`` and is clamped to ±``integral_limit`` (anti-windup by clamping the integral term
itself), the derivative is the finite difference of the error over ``dt`` (0 on the first
update), and the output is clamped to ±``output_limit``.  Every array has a leading axis N.

The law is written once, per loop (:func:`pid_row`); :func:`pid_update` walks it over the
rows through a compiled kernel (:mod:`marinesim.core.compile`), or interpreted under
``MARINESIM_JIT=0``; the compiled tick calls the same function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.compile import SERIAL, lazy_kernels, walk_rows
from marinesim.core.frames import angle180
from marinesim.core.jitable import register_jitable

__all__ = [
    "PidGains",
    "PidState",
    "heading_error",
    "pid_init",
    "pid_row",
    "pid_rows",
    "pid_update",
]


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
    shape = np.broadcast_shapes(e.shape, np.shape(state.integral), np.shape(state.prev_error))
    n = shape[0] if shape else 1
    k = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    cols = shape[1:]

    def col(v: Any) -> NDArray[np.float64]:  # a gain per loop column, shape (k,)
        return np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=float), cols).reshape(k))

    g = np.stack([col(gains.kp), col(gains.ki), col(gains.kd), col(gains.integral_limit),
                  col(gains.output_limit)])  # fmt: skip
    mem = np.empty((n, 2, k))  # (integral, previous error) per loop, updated in place
    mem[:, 0] = np.broadcast_to(state.integral, shape).reshape(n, k)
    mem[:, 1] = np.broadcast_to(state.prev_error, shape).reshape(n, k)
    on = np.ones((n, k), dtype=np.bool_)
    if active is not None:
        on[...] = np.broadcast_to(np.asarray(active, dtype=bool), shape).reshape(n, k)
    e2 = np.ascontiguousarray(np.broadcast_to(e, shape).reshape(n, k))
    out = np.empty((n, k))
    args = (e2, on, g, float(dt), mem, out)
    walk_rows(_kernels, n, args)
    return out.reshape(shape), PidState(mem[:, 0].reshape(shape), mem[:, 1].reshape(shape))


@register_jitable
def pid_rows(i: int, err: Any, on: Any, g: Any, dt: float, mem: Any, out: Any) -> int:
    """:func:`pid_update` of vehicle ``i``: its k loops side by side.

    ``err[i, c]`` the error of loop ``c``, ``on[i, c]`` whether it is updated, ``g`` (5, k)
    the gains (kp, ki, kd, integral limit, output limit) per loop, ``mem[i]`` (2, k) the
    memory (:func:`pid_row`), ``out[i, c]`` the output: 0 and the memory kept where the
    error is not finite or the loop is off.
    """
    for c in range(err.shape[1]):
        e = err[i, c]
        if on[i, c] and math.isfinite(e):
            out[i, c] = pid_row(g[0, c], g[1, c], g[2, c], g[3, c], g[4, c], mem[i], c, e, dt)
        else:
            out[i, c] = 0.0
    return 0


#: The compiled loop over vehicles (rows), cached on disk, built at the first call.
_kernels = lazy_kernels(pid_rows, 0, error_model="numpy", parallel_min=SERIAL)


@register_jitable
def pid_row(
    kp: float, ki: float, kd: float, ilim: float, olim: float, st: Any, c: int, e: float,
    dt: float,
) -> float:
    """The PID law of one loop (the one copy: :func:`pid_update` walks it through
    :func:`pid_rows`, the compiled tick calls it): memory ``st[0, c]`` (integral) and
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
