"""Angles, headings and frames.

Conventions: world NED (x north, y east, z down), body FRD; marine heading in degrees,
0 = north, 90 = east, clockwise, in [0, 360); yaw ψ in radians about NED z (so heading =
deg(ψ) wrapped).  MOOS's local frame is x east, y north.  All functions are vectorised.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "FLU_TO_FRD",
    "angle180",
    "angle360",
    "euler_from_quat",
    "heading_to_yaw",
    "quat_from_euler",
    "rotation_from_euler",
    "rotation_from_quat",
    "wrap_pi",
    "yaw_to_heading",
]

#: T = diag(1, -1, -1): a rotation of π about x mapping Gazebo FLU/ENU-body vectors to FRD.
FLU_TO_FRD = np.diag([1.0, -1.0, -1.0])


def angle360(deg: ArrayLike) -> NDArray[np.float64]:
    """Wrap degrees to [0, 360)."""
    a = np.mod(np.asarray(deg, dtype=float), 360.0)
    return np.where(a >= 360.0, a - 360.0, a)


def angle180(deg: ArrayLike) -> NDArray[np.float64]:
    """Wrap degrees to (-180, 180]."""
    a = angle360(deg)
    return np.where(a > 180.0, a - 360.0, a)


def wrap_pi(rad: ArrayLike) -> NDArray[np.float64]:
    """Wrap radians to [-π, π)."""
    r = np.asarray(rad, dtype=float)
    return np.mod(r + np.pi, 2.0 * np.pi) - np.pi


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
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def rotation_from_euler(roll: ArrayLike, pitch: ArrayLike, yaw: ArrayLike) -> NDArray[np.float64]:
    """R = Rz(ψ)·Ry(θ)·Rx(φ) (body → NED), shape (..., 3, 3) (Fossen 2021, eq. 2.18)."""
    cphi, sphi = np.cos(roll), np.sin(roll)
    cth, sth = np.cos(pitch), np.sin(pitch)
    cpsi, spsi = np.cos(yaw), np.sin(yaw)
    r = np.stack(
        [
            np.stack([cpsi * cth, -spsi * cphi + cpsi * sth * sphi, spsi * sphi + cpsi * cphi * sth], -1),
            np.stack([spsi * cth, cpsi * cphi + sphi * sth * spsi, -cpsi * sphi + sth * spsi * cphi], -1),
            np.stack([-sth, cth * sphi, cth * cphi], -1),
        ],
        axis=-2,
    )
    return r


def rotation_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Rotation matrix (body → NED) of unit quaternions (..., 4) scalar first; shape (..., 3, 3)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )
