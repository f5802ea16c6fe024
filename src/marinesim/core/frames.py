"""Angles, headings and frames.

Conventions: world NED (x north, y east, z down), body FRD; marine heading in degrees,
0 = north, 90 = east, clockwise, in [0, 360); yaw ψ in radians about NED z (so heading =
deg(ψ) wrapped).  MOOS's local frame is x east, y north.

This module is the one place for rotations, attitude kinematics and angle wrapping.  The
algebra is written once, in the ``*_c`` component functions (plain arithmetic on floats or on
numpy arrays, element by element); the vectorised array functions stack their results, and the
compiled models (numba on the CPU, numba CUDA device functions) call the same component
functions on floats (they are registered with ``numba.extending.register_jitable``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.jitable import register_jitable

__all__ = [
    "FLU_TO_FRD",
    "angle180",
    "angle180_c",
    "angle360",
    "angle360_c",
    "euler_from_quat",
    "euler_from_quat_c",
    "euler_rates_c",
    "heading_to_yaw",
    "moos_angle180",
    "moos_angle360",
    "moos_angle360_c",
    "moos_heading_to_radians",
    "quat_from_euler",
    "quat_rates_c",
    "rotate_c",
    "rotate_t_c",
    "rotation_from_euler",
    "rotation_from_quat",
    "rotation_quat_c",
    "rotation_zyx_c",
    "wrap_pi",
    "wrap_pi_c",
    "yaw_to_heading",
]

#: T = diag(1, -1, -1): a rotation of π about x mapping Gazebo FLU/ENU-body vectors to FRD.
FLU_TO_FRD = np.diag([1.0, -1.0, -1.0])


@register_jitable
def wrap_pi_c(rad: Any) -> Any:
    """Wrap angles [rad] to [-π, π): (a + π) mod 2π − π, Fossen's ``ssa``.

    (π itself where a + π lies within rounding below a whole turn, e.g. the float just
    below −π: the floor modulo rounds up to 2π.)  The one source of angle wrapping in radians.  ``%`` is the floor modulo on Python floats,
    numpy arrays (``np.mod``) and in numba's CPU and CUDA code alike: an exact ``fmod`` and
    the same sign correction, so every finite input gives the same bits on every path as
    PythonVehicleSimulator's ``ssa`` (``(angle + math.pi) % (2 * math.pi) - math.pi``).
    """
    return (rad + math.pi) % (2.0 * math.pi) - math.pi


@register_jitable
def rotation_zyx_c(cphi: Any, sphi: Any, cth: Any, sth: Any, cpsi: Any, spsi: Any) -> tuple:
    """Entries (r00, r01, …, r22) of R = Rz(ψ)·Ry(θ)·Rx(φ), body → NED (Fossen 2021, eq. 2.18).

    Parameters
    ----------
    cphi, sphi, cth, sth, cpsi, spsi : float or ndarray
        cos and sin of roll φ, pitch θ and yaw ψ.

    Returns
    -------
    tuple of 9
        Row-major entries of R.
    """
    return (
        cpsi * cth,
        -spsi * cphi + cpsi * sth * sphi,
        spsi * sphi + cpsi * cphi * sth,
        spsi * cth,
        cpsi * cphi + sphi * sth * spsi,
        -cpsi * sphi + sth * spsi * cphi,
        -sth,
        cth * sphi,
        cth * cphi,
    )


@register_jitable
def rotate_c(rot: tuple, x0: Any, x1: Any, x2: Any) -> tuple:
    """R x: a body vector in NED axes, R given by its 9 row-major entries (``*_c`` rotations)."""
    return (
        rot[0] * x0 + rot[1] * x1 + rot[2] * x2,
        rot[3] * x0 + rot[4] * x1 + rot[5] * x2,
        rot[6] * x0 + rot[7] * x1 + rot[8] * x2,
    )


@register_jitable
def rotate_t_c(rot: tuple, x0: Any, x1: Any, x2: Any) -> tuple:
    """Rᵀ x: a NED vector in body axes, R given by its 9 row-major entries."""
    return (
        rot[0] * x0 + rot[3] * x1 + rot[6] * x2,
        rot[1] * x0 + rot[4] * x1 + rot[7] * x2,
        rot[2] * x0 + rot[5] * x1 + rot[8] * x2,
    )


@register_jitable
def rotation_quat_c(q0: Any, q1: Any, q2: Any, q3: Any) -> tuple:
    """Entries (r00, …, r22) of the rotation (body → NED) of a unit quaternion, scalar first."""
    return (
        1 - 2 * (q2 * q2 + q3 * q3),
        2 * (q1 * q2 - q3 * q0),
        2 * (q1 * q3 + q2 * q0),
        2 * (q1 * q2 + q3 * q0),
        1 - 2 * (q1 * q1 + q3 * q3),
        2 * (q2 * q3 - q1 * q0),
        2 * (q1 * q3 - q2 * q0),
        2 * (q2 * q3 + q1 * q0),
        1 - 2 * (q1 * q1 + q2 * q2),
    )


@register_jitable
def _euler_quat_args_c(q0: Any, q1: Any, q2: Any, q3: Any) -> tuple:
    """(y_φ, x_φ, sin θ, y_ψ, x_ψ): φ = atan2(y_φ, x_φ), θ = asin(sin θ), ψ = atan2(y_ψ, x_ψ)."""
    return (
        2 * (q0 * q1 + q2 * q3),
        1 - 2 * (q1 * q1 + q2 * q2),
        2 * (q0 * q2 - q3 * q1),
        2 * (q0 * q3 + q1 * q2),
        1 - 2 * (q2 * q2 + q3 * q3),
    )


@register_jitable
def quat_from_euler_c(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """Unit quaternion (q0, q1, q2, q3; scalar first, body FRD → NED) of zyx Euler angles [rad]:
    the expressions of :func:`quat_from_euler` for one vehicle."""
    r2, p2, y2 = roll / 2, pitch / 2, yaw / 2
    cr, sr = math.cos(r2), math.sin(r2)
    cp, sp = math.cos(p2), math.sin(p2)
    cy, sy = math.cos(y2), math.sin(y2)
    return quat_from_half_trig_c(cr, sr, cp, sp, cy, sy)


@register_jitable
def quat_from_half_trig_c(
    cr: float, sr: float, cp: float, sp: float, cy: float, sy: float
) -> tuple[float, float, float, float]:
    """The quaternion of :func:`quat_from_euler_c` from the cosines and sines of the half
    angles (a caller that knows one of them, e.g. roll 0, passes it without calling ``cos``)."""
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


@register_jitable
def euler_from_quat_c(q0: float, q1: float, q2: float, q3: float) -> tuple[float, float, float]:
    """zyx Euler angles (φ, θ, ψ) [rad] of one unit quaternion (scalar first)."""
    y1, x1, s, y3, x3 = _euler_quat_args_c(q0, q1, q2, q3)
    return math.atan2(y1, x1), math.asin(min(1.0, max(-1.0, s))), math.atan2(y3, x3)


@register_jitable
def euler_rates_c(cphi: Any, sphi: Any, cth: Any, sth: Any, p: Any, q: Any, r: Any) -> tuple:
    """Θ̇ = T(Θ) ω, the zyx Euler-angle rates (Fossen 2021, eq. 2.41); singular at cos θ = 0."""
    return (
        p + sphi * sth / cth * q + cphi * sth / cth * r,
        cphi * q - sphi * r,
        sphi / cth * q + cphi / cth * r,
    )


@register_jitable
def quat_rates_c(q0: Any, q1: Any, q2: Any, q3: Any, p: Any, q: Any, r: Any) -> tuple:
    """q̇ = ½ q ⊗ [0, ω], the unit-quaternion kinematics (Fossen 2021, eq. 2.86)."""
    return (
        -0.5 * (q1 * p + q2 * q + q3 * r),
        0.5 * (q0 * p + (q2 * r - q3 * q)),
        0.5 * (q0 * q + (q3 * p - q1 * r)),
        0.5 * (q0 * r + (q1 * q - q2 * p)),
    )


@register_jitable
def angle360_c(deg: Any) -> Any:
    """Wrap degrees to [0, 360): the floor modulo, then 360 → 0.

    The one source of angle wrapping in degrees (floats in compiled code, numpy arrays in
    :func:`angle360`).  ``%`` is ``np.mod``'s rule on Python floats, numpy arrays and in
    numba alike (an exact ``fmod``, the sign correction, +0.0 for a zero remainder), so every
    path gives the same bits; a tiny negative angle rounds up to exactly 360.0, which the
    second step takes to 0.0 (``m - 0.0`` is ``m`` itself elsewhere, NaN included).
    Non-finite angles give NaN.
    """
    m = deg % 360.0
    return m - 360.0 * (m >= 360.0)


@register_jitable
def angle180_c(deg: Any) -> Any:
    """Wrap degrees to (-180, 180]: :func:`angle360_c`, then − 360 above 180."""
    a = angle360_c(deg)
    return a - 360.0 * (a > 180.0)


def angle360(deg: ArrayLike) -> NDArray[np.float64]:
    """Wrap degrees to [0, 360) (:func:`angle360_c` on an array)."""
    return np.asarray(angle360_c(np.asarray(deg, dtype=float)))


def angle180(deg: ArrayLike) -> NDArray[np.float64]:
    """Wrap degrees to (-180, 180] (:func:`angle180_c` on an array)."""
    return np.asarray(angle180_c(np.asarray(deg, dtype=float)))


def wrap_pi(rad: ArrayLike) -> NDArray[np.float64]:
    """Wrap radians to [-π, π) (:func:`wrap_pi_c` on an array)."""
    return wrap_pi_c(np.asarray(rad, dtype=float))


def heading_to_yaw(heading_deg: ArrayLike) -> NDArray[np.float64]:
    """Marine heading [deg, 0 = north, clockwise] → NED yaw ψ [rad] in [-π, π)."""
    return wrap_pi(np.deg2rad(np.asarray(heading_deg, dtype=float)))


def yaw_to_heading(yaw_rad: ArrayLike) -> NDArray[np.float64]:
    """NED yaw ψ [rad] → marine heading [deg] in [0, 360)."""
    return angle360(np.rad2deg(np.asarray(yaw_rad, dtype=float)))


def quat_from_euler(roll: ArrayLike, pitch: ArrayLike, yaw: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion (scalar first, body FRD → NED) of zyx Euler angles [rad]; shape (..., 4)."""
    cr, sr = np.cos(np.asarray(roll) / 2), np.sin(np.asarray(roll) / 2)
    cp, sp = np.cos(np.asarray(pitch) / 2), np.sin(np.asarray(pitch) / 2)
    cy, sy = np.cos(np.asarray(yaw) / 2), np.sin(np.asarray(yaw) / 2)
    return np.stack(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ],
        axis=-1,
    )


def euler_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """zyx Euler angles (roll, pitch, yaw) [rad] of unit quaternions (..., 4); shape (..., 3)."""
    q = np.asarray(q, dtype=float)
    y1, x1, sth, y3, x3 = _euler_quat_args_c(q[..., 0], q[..., 1], q[..., 2], q[..., 3])
    roll = np.arctan2(y1, x1)
    pitch = np.arcsin(np.clip(sth, -1.0, 1.0))
    yaw = np.arctan2(y3, x3)
    return np.stack([roll, pitch, yaw], axis=-1)


def rotation_from_euler(roll: ArrayLike, pitch: ArrayLike, yaw: ArrayLike) -> NDArray[np.float64]:
    """R = Rz(ψ)·Ry(θ)·Rx(φ) (body → NED), shape (..., 3, 3) (Fossen 2021, eq. 2.18)."""
    e = rotation_zyx_c(
        np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    )
    return _stack33(e)


def rotation_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Rotation matrix (body → NED) of unit quaternions (..., 4) scalar first; shape (..., 3, 3)."""
    q = np.asarray(q, dtype=float)
    return _stack33(rotation_quat_c(q[..., 0], q[..., 1], q[..., 2], q[..., 3]))


def _stack33(e: tuple) -> NDArray[np.float64]:
    e = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in e))
    rows = [np.stack(e[3 * i : 3 * i + 3], -1) for i in range(3)]
    return np.stack(rows, axis=-2)


# MOOS-IvP's AngleUtils, with its own arithmetic (the uSimMarine replays depend on its bits)


def moos_angle360(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """MOOS-IvP ``angle360``: subtract/add 360 until 0 ≤ a < 360 (repeated, not fmod)."""
    if a.size and a.min() >= 0.0 and a.max() < 360.0:
        return a  # already in range (the usual case): two reductions, no temporaries
    hi = a >= 360.0
    while hi.any():
        a = np.where(hi, a - 360.0, a)
        hi = a >= 360.0
    lo = a < 0.0
    while lo.any():
        a = np.where(lo, a + 360.0, a)
        lo = a < 0.0
    # a tiny negative angle + 360 rounds to exactly 360.0: that is 0 (headings in [0, 360))
    return np.where(a >= 360.0, a - 360.0, a)


def moos_angle180(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """MOOS-IvP ``angle180``: :func:`moos_angle360`, then a − 360 where a > 180."""
    a = moos_angle360(a)
    return a - 360.0 * (a > 180.0)  # a - 360 where a > 180, a - 0.0 (= a) elsewhere


def moos_heading_to_radians(ang: ArrayLike) -> Any:
    """MOOS-IvP ``headingToRadians``: wrap((90 − ang)·π/180) once into [−π, π]."""
    r = ((90.0 - np.asarray(ang, dtype=np.float64)) * math.pi) / 180.0
    r = np.where(r > math.pi, r - 2 * math.pi, r)
    return np.where(r < -math.pi, r + 2 * math.pi, r)


def moos_angle360_c(a: float) -> float:
    """One angle [deg] to [0, 360) as uSimMarine's configuration reading does (fmod first
    beyond ±1e6, then repeated ±360); non-finite values pass through."""
    if not math.isfinite(a):
        return a
    if abs(a) > 1e6:
        a = math.fmod(a, 360.0)
    while a < 0.0:
        a += 360.0
    while a >= 360.0:
        a -= 360.0
    return a
