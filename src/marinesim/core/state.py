"""Batched vehicle state (structure of arrays).

:class:`VehicleState` is what the engine keeps per entity block as ``state_truth`` and
``state`` (belief): NED position, attitude quaternion (scalar first, body FRD → NED), body
velocities.  Every array has a leading axis N; one vehicle is N = 1.  Model-specific memory
(uSimMarine's speed and heading, rotor speeds, fin angles) lives in each model's own state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from marinesim.core.frames import (
    euler_from_quat,
    quat_from_euler,
    rotation_from_quat,
    yaw_to_heading,
)

__all__ = ["VehicleState"]


@dataclass(frozen=True)
class VehicleState:
    """Kinematic state of N vehicles.

    Attributes
    ----------
    pos : ndarray, shape (N, 3)
        NED position relative to the scenario origin [m] (north, east, down; depth = pos[:, 2]).
    quat : ndarray, shape (N, 4)
        Attitude quaternion, scalar first, body FRD → NED.
    vel : ndarray, shape (N, 3)
        Body-frame linear velocity (u, v, w) [m/s].
    ang_vel : ndarray, shape (N, 3)
        Body-frame angular velocity (p, q, r) [rad/s].
    accel : ndarray, shape (N, 3)
        Body-frame specific acceleration [m/s²] (zeros when the model does not provide it).
    t : float
        Simulation time the state describes [s].
    cov : ndarray, shape (N, k, k), optional
        Covariance (belief only).
    """

    pos: NDArray[np.float64]
    quat: NDArray[np.float64]
    vel: NDArray[np.float64]
    ang_vel: NDArray[np.float64]
    accel: NDArray[np.float64]
    t: float = 0.0
    cov: NDArray[np.float64] | None = field(default=None)

    @classmethod
    def zeros(cls, n: int, t: float = 0.0) -> VehicleState:
        """N vehicles at the origin, level, heading north, at rest."""
        quat = np.zeros((n, 4))
        quat[:, 0] = 1.0
        return cls(np.zeros((n, 3)), quat, np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)), t)

    @classmethod
    def from_pose(
        cls,
        north: NDArray[np.float64],
        east: NDArray[np.float64],
        depth: NDArray[np.float64],
        heading_deg: NDArray[np.float64],
        speed: NDArray[np.float64] | None = None,
        pitch: NDArray[np.float64] | None = None,
        t: float = 0.0,
    ) -> VehicleState:
        """State from NED position [m], marine heading [deg], forward speed [m/s], pitch [rad]."""
        n = np.asarray(north, dtype=float)
        size = n.shape[0]
        pitch_a = np.zeros(size) if pitch is None else np.asarray(pitch, dtype=float)
        quat = quat_from_euler(np.zeros(size), pitch_a, np.deg2rad(np.asarray(heading_deg, dtype=float)))
        vel = np.zeros((size, 3))
        if speed is not None:
            vel[:, 0] = speed
        pos = np.stack([n, np.asarray(east, dtype=float), np.asarray(depth, dtype=float)], axis=1)
        return cls(pos, quat, vel, np.zeros((size, 3)), np.zeros((size, 3)), t)

    @property
    def n(self) -> int:
        """Number of vehicles."""
        return int(self.pos.shape[0])

    @property
    def euler(self) -> NDArray[np.float64]:
        """(N, 3) roll, pitch, yaw [rad]."""
        return euler_from_quat(self.quat)

    @property
    def heading_deg(self) -> NDArray[np.float64]:
        """(N,) marine heading [deg] in [0, 360)."""
        return yaw_to_heading(self.euler[:, 2])

    @property
    def depth(self) -> NDArray[np.float64]:
        """(N,) depth [m], positive down."""
        return self.pos[:, 2]

    @property
    def vel_ned(self) -> NDArray[np.float64]:
        """(N, 3) velocity in NED [m/s]."""
        return np.einsum("nij,nj->ni", rotation_from_quat(self.quat), self.vel)

    @property
    def speed_over_ground(self) -> NDArray[np.float64]:
        """(N,) horizontal speed over ground [m/s]."""
        v = self.vel_ned
        return np.hypot(v[:, 0], v[:, 1])

    @property
    def course_deg(self) -> NDArray[np.float64]:
        """(N,) course over ground, marine degrees [0, 360)."""
        v = self.vel_ned
        return yaw_to_heading(np.arctan2(v[:, 1], v[:, 0]))

    def replace(self, **changes: object) -> VehicleState:
        """Copy with some fields replaced."""
        return replace(self, **changes)  # type: ignore[arg-type]
