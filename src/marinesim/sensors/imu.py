"""Inertial measurement unit: accelerometer and gyro with white noise and bias random walks.

Engine spec §6.2.  Pure and batched over N.  Per sample of length Δt every vehicle draws 12
standard normals (3 accelerometer noise, 3 gyro noise, 3 + 3 bias increments) whatever happens,
so streams never shift.  Bias random walks are dt-correct: b ← b + σ_b·√Δt·n.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from marinesim.core.params import ParamsBase, field

__all__ = ["ImuParams", "imu_measure", "specific_force"]


class ImuParams(ParamsBase):
    """IMU noise model (all noise levels required, no defaults)."""

    accel_noise_std: float = field(
        ...,
        unit="m/s^2",
        description="accelerometer white noise sigma per sample",
        ge=0,
        allow_inf_nan=False,
    )
    gyro_noise_std: float = field(
        ...,
        unit="rad/s",
        description="gyro white noise sigma per sample",
        ge=0,
        allow_inf_nan=False,
    )
    accel_bias_walk: float = field(
        ...,
        unit="m/s^2/sqrt(s)",
        description="accelerometer bias random walk",
        ge=0,
        allow_inf_nan=False,
    )
    gyro_bias_walk: float = field(
        ..., unit="rad/s/sqrt(s)", description="gyro bias random walk", ge=0, allow_inf_nan=False
    )
    accel_bias_init_std: float = field(
        0.0, unit="m/s^2", description="sigma of the initial accelerometer bias", ge=0
    )
    gyro_bias_init_std: float = field(
        0.0, unit="rad/s", description="sigma of the initial gyro bias", ge=0
    )
    dropout_probability: float = field(
        0.0, unit="", description="probability a sample is lost", ge=0, le=1
    )
    delay: float = field(0.0, unit="s", description="sample describes t - delay", ge=0)
    buffer_size: int = field(
        1, unit="", description="last delivered samples kept in the plugin state", ge=1
    )


def specific_force(
    accel_ned: NDArray[np.float64], rot: NDArray[np.float64], gravity: float = 9.81
) -> NDArray[np.float64]:
    """Body specific force f = Rᵀ(a − [0, 0, g]) [m/s²], (N, 3).

    Parameters
    ----------
    accel_ned : ndarray, shape (N, 3)
        Kinematic acceleration in NED [m/s²].
    rot : ndarray, shape (N, 3, 3)
        Body → NED rotation matrices.
    gravity : float
        [m/s²]; NED z points down, so a vehicle at rest reads f = (0, 0, −g) when level.
    """
    a = np.asarray(accel_ned, dtype=float).copy()
    a[:, 2] -= gravity
    return np.einsum("nji,nj->ni", rot, a)


def imu_measure(
    f_true: NDArray[np.float64],
    w_true: NDArray[np.float64],
    bias_a: NDArray[np.float64],
    bias_g: NDArray[np.float64],
    normal: NDArray[np.float64],
    dt: float,
    params: ImuParams,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """One IMU sample and the biases after it.

    Parameters
    ----------
    f_true, w_true : ndarray, shape (N, 3)
        True specific force [m/s²] and angular rate [rad/s] (body).
    bias_a, bias_g : ndarray, shape (N, 3)
        Current biases [m/s²], [rad/s].
    normal : ndarray, shape (N, 12)
        Standard normals: accel noise, gyro noise, accel bias step, gyro bias step.
    dt : float
        Sample period [s] (the bias walks advance by it after the sample).
    params : ImuParams

    Returns
    -------
    f_meas, w_meas, bias_a_next, bias_g_next : ndarray, shape (N, 3)
    """
    nz = np.asarray(normal, dtype=float)
    f_meas = f_true + bias_a + params.accel_noise_std * nz[:, 0:3]
    w_meas = w_true + bias_g + params.gyro_noise_std * nz[:, 3:6]
    sq = np.sqrt(dt)
    bias_a_next = bias_a + params.accel_bias_walk * sq * nz[:, 6:9]
    bias_g_next = bias_g + params.gyro_bias_walk * sq * nz[:, 9:12]
    return f_meas, w_meas, bias_a_next, bias_g_next
