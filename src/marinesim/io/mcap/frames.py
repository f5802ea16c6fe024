"""Frame conventions at the ROS boundary: NED/FRD inside marinesim, ENU/FLU in ROS messages.

marinesim works in NED (north, east, down) for the world and FRD (forward, right, down) for the
body; ROS (REP-103, REP-105) uses ENU (east, north, up) and FLU (forward, left, up).  Both maps
are their own inverses:

* world NED → ENU: ``(x_e, y_e, z_e) = (y_n, x_n, −z_n)``;
* body FRD → FLU: ``(x, y, z) → (x, −y, −z)`` (a half turn about the forward axis);
* attitude: with ``q`` the rotation body FRD → NED, the ROS orientation (body FLU → ENU) is
  ``q_ENU←NED ⊗ q ⊗ q_FRD←FLU``; in zyx Euler angles (roll φ, pitch θ, yaw ψ) this is
  ``(φ, −θ, π/2 − ψ)``;
* marine heading ψ_m [deg, 0 = north, clockwise] → ENU yaw ``π/2 − rad(ψ_m)`` (0 = east,
  counter-clockwise).

Quaternions are scalar first ``(w, x, y, z)`` here, as in :mod:`marinesim.core.frames`; the
message builders reorder them to ROS's ``(x, y, z, w)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.frames import quat_from_euler
from marinesim.sensors.attitude import quat_mul  # one Hamilton product

__all__ = [
    "Q_ENU_NED",
    "Q_FRD_FLU",
    "enu_flu_quat",
    "euler_ned_to_enu_quat",
    "frd_to_flu",
    "heading_to_enu_yaw",
    "ned_to_enu",
    "quat_mul",
]

_H = math.sqrt(0.5)
#: Rotation NED → ENU (swap north/east, flip down) as a quaternion (w, x, y, z).
Q_ENU_NED = np.array([0.0, _H, _H, 0.0])
#: Rotation FLU → FRD (half turn about x) as a quaternion (w, x, y, z).
Q_FRD_FLU = np.array([0.0, 1.0, 0.0, 0.0])


def ned_to_enu(v: ArrayLike) -> NDArray[np.float64]:
    """World vectors (..., 3) NED → ENU (also ENU → NED: the map is an involution)."""
    a = np.asarray(v, dtype=float)
    return np.stack([a[..., 1], a[..., 0], -a[..., 2]], axis=-1)


def frd_to_flu(v: ArrayLike) -> NDArray[np.float64]:
    """Body vectors (..., 3) FRD → FLU (also FLU → FRD)."""
    a = np.asarray(v, dtype=float)
    return np.stack([a[..., 0], -a[..., 1], -a[..., 2]], axis=-1)


def enu_flu_quat(q_ned_frd: ArrayLike) -> NDArray[np.float64]:
    """Attitude body FRD → NED (..., 4) as body FLU → ENU (and back: an involution up to sign).

    The result has a non-negative scalar part.
    """
    q = quat_mul(quat_mul(Q_ENU_NED, np.asarray(q_ned_frd, dtype=float)), Q_FRD_FLU)
    return np.where(q[..., :1] < 0, -q, q)


def euler_ned_to_enu_quat(roll: ArrayLike, pitch: ArrayLike, yaw: ArrayLike) -> NDArray[np.float64]:
    """ROS orientation (body FLU → ENU, (..., 4) scalar first) of NED zyx Euler angles [rad]."""
    return enu_flu_quat(quat_from_euler(roll, pitch, yaw))


def heading_to_enu_yaw(heading_deg: ArrayLike) -> NDArray[np.float64]:
    """Marine heading [deg, 0 = north, clockwise] → ENU yaw [rad] in (−π, π]."""
    y = np.pi / 2 - np.deg2rad(np.asarray(heading_deg, dtype=float))
    return np.pi - np.mod(np.pi - y, 2 * np.pi)
