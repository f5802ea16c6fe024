"""The divergence guard of the 6-DOF models (one copy for every vehicle model).

A vehicle whose new state is non-finite, or whose linear or angular speed exceeds the physical
bound, is stopped: ``alive`` turns false, its state stays at the last valid value, and a
:class:`~marinesim.core.errors.NumericalError` text names its index and the time.  The other
vehicles go on.

The test is written once, :func:`check_one` (compiled into every model kernel, which freezes
the vehicle itself and writes a status code); :func:`events` turns the codes into messages and
:func:`guard` applies the same test to arrays from Python.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.core.errors import NumericalError
from marinesim.core.jitable import INLINE

__all__ = ["NONFINITE", "OK", "RATE", "SINGULAR", "SPEED", "check_one", "events", "guard"]

F64 = NDArray[np.float64]

OK, NONFINITE, SPEED, RATE, SINGULAR = 0, 1, 2, 3, 4


@register_jitable(inline=INLINE)
def check_one(y: Any, o_nu: int, max_speed: float, max_rate: float) -> tuple[int, float]:
    """Status code of one new state row ``y`` (ν at ``o_nu``) and the offending magnitude.

    Non-finite anywhere → NONFINITE; |ν₁| > max_speed → SPEED; |ω| > max_rate → RATE.
    """
    total = 0.0
    for j in range(y.shape[0]):
        total += y[j]
    if not math.isfinite(total):
        return NONFINITE, 0.0
    sp2 = y[o_nu] * y[o_nu] + y[o_nu + 1] * y[o_nu + 1] + y[o_nu + 2] * y[o_nu + 2]
    if sp2 > max_speed * max_speed:
        return SPEED, math.sqrt(sp2)
    rt2 = y[o_nu + 3] * y[o_nu + 3] + y[o_nu + 4] * y[o_nu + 4] + y[o_nu + 5] * y[o_nu + 5]
    if rt2 > max_rate * max_rate:
        return RATE, math.sqrt(rt2)
    return OK, 0.0


@register_jitable(inline=INLINE)
def apply_one(
    i: int, code: int, mag: float, x: Any, y: Any, alive: Any, status: Any, size: Any
) -> None:
    """Freeze vehicle i at its old row ``x`` if it was stopped or ``code`` stops it now."""
    status[i] = 0
    size[i] = mag
    if alive[i] and code == OK:
        return
    if alive[i]:
        status[i] = code
        alive[i] = False
    for j in range(x.shape[0]):
        y[j] = x[j]


def events(
    status: NDArray[np.int8], size: F64, t: float, max_speed: float, max_rate: float
) -> list[str]:
    """NumericalError texts of the vehicles a kernel stopped (status ≠ 0) at time ``t``."""
    out = []
    for i in np.flatnonzero(status):
        code, mag = int(status[i]), float(size[i])
        if code == NONFINITE:
            why = "state became non-finite"
        elif code == SPEED:
            why = f"speed {mag:.4g} m/s exceeds max_speed {max_speed:g} m/s"
        elif code == RATE:
            why = f"angular rate {mag:.4g} rad/s exceeds max_rate {max_rate:g} rad/s"
        else:
            why = "Euler-angle singularity (|cos θ| < 1e-6); use attitude: quaternion"
        out.append(
            str(NumericalError(f"diverged: {why}; vehicle stopped", entity=f"vehicle[{i}]", t=t))
        )
    return out


def guard(
    old: tuple[F64, ...],
    new: tuple[F64, ...],
    alive: NDArray[np.bool_],
    t: float,
    max_speed: float,
    max_rate: float,
    nu_part: int = 1,
) -> tuple[tuple[F64, ...], NDArray[np.bool_], list[str]]:
    """Apply :func:`check_one` to state parts given as arrays (not a hot path: the kernels
    call :func:`check_one` themselves).

    Parameters
    ----------
    old, new : tuple of ndarray, each shape (N, k)
        State parts before and after the step.
    alive : ndarray of bool, shape (N,)
    t : float
        Time of the new state [s].
    max_speed, max_rate : float
        Bounds on |ν₁| [m/s] and |ω| [rad/s].
    nu_part : int
        Which part is ν (shape (N, 6)).

    Returns
    -------
    state : tuple of ndarray
        ``new`` with stopped vehicles frozen at ``old``.
    alive : ndarray of bool, shape (N,)
    events : list of str
        One NumericalError text per vehicle stopped in this step.
    """
    widths = [a.shape[1] for a in new]
    x = np.concatenate(old, axis=1)
    y = np.concatenate(new, axis=1)
    alive = np.array(alive, dtype=bool)
    status = np.zeros(len(alive), dtype=np.int8)
    size = np.zeros(len(alive))
    o_nu = sum(widths[:nu_part])
    for i in range(len(alive)):
        code, mag = check_one(y[i], o_nu, max_speed, max_rate)
        apply_one(i, code, mag, x[i], y[i], alive, status, size)
    parts = tuple(np.split(y, np.cumsum(widths)[:-1], axis=1))
    return parts, alive, events(status, size, t, max_speed, max_rate)
