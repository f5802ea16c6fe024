"""Station keeping of a 6-DOF vehicle: position, depth and heading hold → body wrench.

A PID per NED axis (north, east, down) and on yaw, a PD levelling roll and pitch; the NED
force is rotated into the body frame.  Anti-windup: each integral is clamped so that its term
stays within a bound, and an axis stops integrating while the allocator reports (its unmet
wrench) that the force asked for in the direction the error pushes is not delivered.

Batched over N vehicles; N = 1 is the same path.  Used by the engine's
``station_keeping_pid`` controller plugin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.compile import lazy_kernels, walk_rows
from marinesim.core.frames import rotate_t_c, rotation_quat_c, wrap_pi_c
from marinesim.core.jitable import register_jitable

__all__ = [
    "GAINS",
    "StationKeepingOutput",
    "StationKeepingState",
    "dot3_einsum",
    "gain_row",
    "station_keeping_pid",
    "station_keeping_row",
]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class StationKeepingState:
    """Integrals of the station-keeping PID.

    Attributes
    ----------
    int_ned : ndarray, shape (N, 3)
        ∫ position error dt along north, east, down [m·s].
    int_yaw : ndarray, shape (N,)
        ∫ heading error dt [rad·s].
    """

    int_ned: F64
    int_yaw: F64

    @classmethod
    def zeros(cls, n: int) -> StationKeepingState:
        """Integrals at zero for N vehicles."""
        return cls(np.zeros((n, 3)), np.zeros(n))


@dataclass(frozen=True)
class StationKeepingOutput:
    """Wrench and errors of one update.

    Attributes
    ----------
    wrench : ndarray, shape (N, 6)
        Body wrench [X, Y, Z, K, M, N] [N, N·m] (0 for inactive vehicles).
    error_ned : ndarray, shape (N, 3)
        Target minus position, NED [m].
    error_yaw : ndarray, shape (N,)
        Target minus heading, wrapped to (−π, π] [rad].
    """

    wrench: F64
    error_ned: F64
    error_yaw: F64


def station_keeping_pid(
    gains: Any,
    state: StationKeepingState,
    target: F64,
    pos: F64,
    quat: F64,
    euler: F64,
    vel_ned: F64,
    ang_vel: F64,
    unmet: F64,
    active: NDArray[np.bool_],
    h: float,
) -> tuple[StationKeepingOutput, StationKeepingState]:
    """One station-keeping update of N vehicles.

    Parameters
    ----------
    gains : object
        Attributes (SI): ``kp_pos`` [N/m], ``ki_pos`` [N/(m·s)], ``kd_pos`` [N·s/m],
        ``kp_depth``, ``ki_depth``, ``kd_depth`` (same units), ``kp_yaw`` [N·m/rad],
        ``ki_yaw`` [N·m/(rad·s)], ``kd_yaw`` [N·m·s/rad], ``kp_att`` [N·m/rad], ``kd_att``
        [N·m·s/rad], ``integral_limit_force`` [N], ``integral_limit_moment`` [N·m],
        ``max_force`` [N], ``max_moment`` [N·m], ``unmet_tolerance`` [N or N·m] (e.g. the
        engine plugin's parameters).
    state : StationKeepingState
    target : ndarray, shape (N, 4)
        [north, east, depth] [m] and heading [deg, marine].
    pos : ndarray, shape (N, 3)
        Position NED [m].
    quat : ndarray, shape (N, 4)
        Attitude, body (FRD) → NED, scalar first.
    euler : ndarray, shape (N, 3)
        Roll, pitch, yaw [rad].
    vel_ned : ndarray, shape (N, 3)
        Velocity over ground, NED [m/s].
    ang_vel : ndarray, shape (N, 3)
        Body rates p, q, r [rad/s].
    unmet : ndarray, shape (N, 6)
        Wrench demanded but not delivered (allocator) [N, N·m].
    active : ndarray of bool, shape (N,)
        Vehicles being controlled (the others: zero wrench, integrals held).
    h : float
        Time since the last update [s].

    Returns
    -------
    StationKeepingOutput, StationKeepingState
    """
    g = gain_row(gains)
    n = pos.shape[0]
    int_ned = np.array(state.int_ned, dtype=float)  # updated in place by the row law
    int_yaw = np.array(state.int_yaw, dtype=float)
    wrench = np.empty((n, 6))
    e_ned = np.empty((n, 3))
    e_yaw = np.empty(n)
    args = (
        g, _c(target), _c(pos), _c(quat), _c(euler), _c(vel_ned), _c(ang_vel), _c(unmet),
        np.ascontiguousarray(active, dtype=np.bool_), float(h), int_ned, int_yaw, wrench,
        e_ned, e_yaw,
    )  # fmt: skip
    walk_rows(_kernels, n, args)
    return StationKeepingOutput(wrench, e_ned, e_yaw), StationKeepingState(int_ned, int_yaw)


def _c(a: Any) -> F64:
    return np.ascontiguousarray(a, dtype=float)


#: Order of the gains in :func:`gain_row` (the attributes of the ``gains`` object).
GAINS = (
    "kp_pos", "ki_pos", "kd_pos", "kp_depth", "ki_depth", "kd_depth", "kp_yaw", "ki_yaw",
    "kd_yaw", "kp_att", "kd_att", "integral_limit_force", "integral_limit_moment", "max_force",
    "max_moment", "unmet_tolerance",
)  # fmt: skip


def gain_row(gains: Any) -> F64:
    """The gains as the float row :func:`station_keeping_row` reads (order of :data:`GAINS`)."""
    return np.array([float(getattr(gains, name)) for name in GAINS])


@register_jitable
def _same_sign(a: float, b: float) -> bool:
    """``np.sign(a) == np.sign(b)`` (NaN: never)."""
    if a != a or b != b:
        return False
    sa = 1.0 if a > 0.0 else (-1.0 if a < 0.0 else 0.0)
    sb = 1.0 if b > 0.0 else (-1.0 if b < 0.0 else 0.0)
    return sa == sb


@register_jitable
def dot3_einsum(r0: float, r1: float, r2: float, x0: float, x1: float, x2: float) -> float:
    """r·x in the order numpy's ``einsum("nij,nj->ni", …)`` sums it: (r0·x0 + r2·x2) + r1·x1.

    (Its contiguous inner loop pairs the elements in SIMD lanes; the belief's ``vel_ned``
    is computed that way, and the compiled law must give the same bits.)
    """
    return (r0 * x0 + r2 * x2) + r1 * x1


@register_jitable
def _clip(x: float, lo: float, hi: float) -> float:
    """``np.clip(x, lo, hi)`` for lo ≤ hi (NaN stays NaN)."""
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


@register_jitable
def station_keeping_row(
    i: int, g: Any, target: Any, pos: Any, quat: Any, euler: Any, vel_ned: Any, ang_vel: Any,
    unmet: Any, active: Any, h: float, int_ned: Any, int_yaw: Any, wrench: Any, e_ned: Any,
    e_yaw: Any,
) -> None:  # fmt: skip
    """The station-keeping law of vehicle ``i`` (the one copy: every route runs it).

    ``g``: the gains (:func:`gain_row`); the other arrays as :func:`station_keeping_pid`'s,
    row ``i``.  Updates ``int_ned[i]`` and ``int_yaw[i]`` and writes ``wrench[i]``,
    ``e_ned[i]`` and ``e_yaw[i]``.  Sums run in the order of the ``einsum`` calls it
    replaced (:func:`dot3_einsum`; Rᵀ f in index order), so the values are those of the
    vectorised law, bit for bit.
    """
    r = rotation_quat_c(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3])  # body → NED
    tol = g[15]
    act = active[i]
    f_ned0 = 0.0
    f_ned1 = 0.0
    f_ned2 = 0.0
    for a in range(3):
        kp = g[0] if a < 2 else g[3]
        ki = g[1] if a < 2 else g[4]
        kd = g[2] if a < 2 else g[5]
        e = target[i, a] - pos[i, a]
        e_ned[i, a] = e
        # conditional integration: freeze an axis whose demanded force is not delivered in
        # the direction the error pushes (the allocator's unmet wrench, rotated to NED)
        un = dot3_einsum(r[3 * a], r[3 * a + 1], r[3 * a + 2], unmet[i, 0], unmet[i, 1], unmet[i, 2])
        frozen = abs(un) > tol and _same_sign(un, e)
        lim = g[11] / ki if ki > 0 else 0.0
        integ = int_ned[i, a]
        if not (frozen or not act):
            integ = integ + h * e
        integ = _clip(integ, -lim, lim)
        int_ned[i, a] = integ
        f = kp * e + ki * integ - kd * vel_ned[i, a]
        if a == 0:
            f_ned0 = f
        elif a == 1:
            f_ned1 = f
        else:
            f_ned2 = f
    fb = rotate_t_c(r, f_ned0, f_ned1, f_ned2)  # Rᵀ f
    ey = wrap_pi_c(target[i, 3] * (math.pi / 180.0) - euler[i, 2])
    e_yaw[i] = ey
    frozen_y = abs(unmet[i, 5]) > tol and _same_sign(unmet[i, 5], ey)
    lim_y = g[12] / g[7] if g[7] > 0 else 0.0
    iy = int_yaw[i]
    if not (frozen_y or not act):
        iy = iy + h * ey
    iy = _clip(iy, -lim_y, lim_y)
    int_yaw[i] = iy
    n_mom = g[6] * ey + g[7] * iy - g[8] * ang_vel[i, 2]
    k_mom = -g[9] * euler[i, 0] - g[10] * ang_vel[i, 0]
    m_mom = -g[9] * euler[i, 1] - g[10] * ang_vel[i, 1]
    if not act:
        for c in range(6):
            wrench[i, c] = 0.0
        return
    for c in range(3):
        wrench[i, c] = _clip(fb[c], -g[13], g[13])
    wrench[i, 3] = _clip(k_mom, -g[14], g[14])
    wrench[i, 4] = _clip(m_mom, -g[14], g[14])
    wrench[i, 5] = _clip(n_mom, -g[14], g[14])


#: The compiled loop over vehicles (rows), cached on disk, built at the first call.
_kernels = lazy_kernels(station_keeping_row, 1, error_model="numpy")
