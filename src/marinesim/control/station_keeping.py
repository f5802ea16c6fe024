"""Station keeping of a 6-DOF vehicle: position, depth and heading hold → body wrench.

A PID per NED axis (north, east, down) and on yaw, a PD levelling roll and pitch; the NED
force is rotated into the body frame.  Anti-windup: each integral is clamped so that its term
stays within a bound, and an axis stops integrating while the allocator reports (its unmet
wrench) that the force asked for in the direction the error pushes is not delivered.

Batched over N vehicles; N = 1 is the same path.  Used by the engine's
``station_keeping_pid`` controller plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.frames import rotation_from_quat, wrap_pi

__all__ = ["StationKeepingOutput", "StationKeepingState", "station_keeping_pid"]

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
    p = gains
    rot = rotation_from_quat(quat)  # body → NED, (N, 3, 3)
    e_ned = target[:, :3] - pos
    kp = np.array([p.kp_pos, p.kp_pos, p.kp_depth])
    ki = np.array([p.ki_pos, p.ki_pos, p.ki_depth])
    kd = np.array([p.kd_pos, p.kd_pos, p.kd_depth])
    # conditional integration: freeze an axis whose demanded force is not delivered in the
    # direction the error pushes (the allocator's unmet wrench, rotated to NED)
    unmet_ned = np.einsum("nij,nj->ni", rot, unmet[:, :3])
    frozen = (np.abs(unmet_ned) > p.unmet_tolerance) & (np.sign(unmet_ned) == np.sign(e_ned))
    lim = np.where(ki > 0, p.integral_limit_force / np.where(ki > 0, ki, 1.0), 0.0)
    act = active[:, None]
    integ = np.where(frozen | ~act, state.int_ned, state.int_ned + h * e_ned)
    integ = np.clip(integ, -lim, lim)
    f_ned = kp * e_ned + ki * integ - kd * vel_ned
    f_body = np.einsum("nji,nj->ni", rot, f_ned)  # Rᵀ f
    e_yaw = wrap_pi(np.radians(target[:, 3]) - euler[:, 2])
    r = ang_vel[:, 2]
    frozen_y = (np.abs(unmet[:, 5]) > p.unmet_tolerance) & (np.sign(unmet[:, 5]) == np.sign(e_yaw))
    lim_y = p.integral_limit_moment / p.ki_yaw if p.ki_yaw > 0 else 0.0
    iy = np.where(frozen_y | ~active, state.int_yaw, state.int_yaw + h * e_yaw)
    iy = np.clip(iy, -lim_y, lim_y)
    n_mom = p.kp_yaw * e_yaw + p.ki_yaw * iy - p.kd_yaw * r
    k_mom = -p.kp_att * euler[:, 0] - p.kd_att * ang_vel[:, 0]
    m_mom = -p.kp_att * euler[:, 1] - p.kd_att * ang_vel[:, 1]
    wrench = np.empty((pos.shape[0], 6))
    wrench[:, :3] = np.clip(f_body, -p.max_force, p.max_force)
    wrench[:, 3] = np.clip(k_mom, -p.max_moment, p.max_moment)
    wrench[:, 4] = np.clip(m_mom, -p.max_moment, p.max_moment)
    wrench[:, 5] = np.clip(n_mom, -p.max_moment, p.max_moment)
    wrench = np.where(act, wrench, 0.0)
    return StationKeepingOutput(wrench, e_ned, e_yaw), StationKeepingState(integ, iy)
