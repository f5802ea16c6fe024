"""Doppler velocity log: bottom lock within an altitude window, water track otherwise (§6.2).

Pure and batched over N.  Fixed consumption: 3 normals and 1 uniform per vehicle per sample.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field

__all__ = ["BOTTOM", "NONE", "WATER", "DvlParams", "dvl_measure", "sensor_velocity"]

NONE, BOTTOM, WATER = 0, 1, 2


class DvlParams(ParamsBase):
    """DVL: noise (required), altitude window of bottom lock, water track, lever arm, dropouts."""

    noise_std: float = field(
        ..., unit="m/s", description="velocity noise sigma per axis", ge=0, allow_inf_nan=False
    )
    min_altitude: float = field(..., unit="m", description="lowest altitude with bottom lock", ge=0)
    max_altitude: float = field(
        ..., unit="m", description="highest altitude with bottom lock", gt=0
    )
    water_track: bool = field(True, description="report velocity through water when not locked")
    water_track_noise_std: float | None = field(
        None, unit="m/s", description="water-track noise sigma (default: noise_std)", ge=0
    )
    lever_arm: tuple[float, float, float] = field(
        (0.0, 0.0, 0.0), unit="m", description="DVL position in body FRD"
    )
    delay: float = field(0.0, unit="s", description="measurement describes t - delay", ge=0)
    dropout_probability: float = field(
        0.0, unit="", description="probability a ping is lost", ge=0, le=1
    )
    buffer_size: int = field(
        1, unit="", description="last delivered samples kept in the plugin state", ge=1
    )
    seafloor_depth: float | None = field(
        None,
        unit="m",
        description="flat seafloor depth; overrides the environment's terrain when set",
        gt=0,
    )

    def model_post_init(self, __context: object) -> None:  # noqa: D102
        if self.min_altitude >= self.max_altitude:
            raise ConfigError(
                f"min_altitude ({self.min_altitude} m) must be below max_altitude ({self.max_altitude} m)",
                param="min_altitude",
            )


def sensor_velocity(
    vel_body: NDArray[np.float64], ang_vel: NDArray[np.float64], lever_arm: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Velocity of a point at ``lever_arm`` on the body: v + ω × r [m/s], (N, 3).

    Parameters
    ----------
    vel_body : ndarray, shape (N, 3)
        Body velocity at the origin [m/s].
    ang_vel : ndarray, shape (N, 3)
        Body angular rate ω [rad/s].
    lever_arm : ndarray, shape (3,)
        Sensor position r in body FRD [m].
    """
    return vel_body + np.cross(ang_vel, lever_arm)


def dvl_measure(
    vel_body: NDArray[np.float64],
    ang_vel: NDArray[np.float64],
    current_body: NDArray[np.float64],
    altitude: NDArray[np.float64],
    normal: NDArray[np.float64],
    uniform: NDArray[np.float64],
    params: DvlParams,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """DVL velocities (N, 3) and mode (N,): 0 none, 1 bottom lock, 2 water track.

    Parameters
    ----------
    vel_body : ndarray, shape (N, 3)
        Body velocity over ground [m/s].
    ang_vel : ndarray, shape (N, 3)
        Body angular rate [rad/s] (lever-arm term ω × r).
    current_body : ndarray, shape (N, 3)
        Water current in the body frame [m/s] (water track measures v − current).
    altitude : ndarray, shape (N,)
        Height above the seafloor [m] (NaN = unknown → no lock).
    normal : ndarray, shape (N, 3)
    uniform : ndarray, shape (N,)
    params : DvlParams
    """
    arm = np.asarray(params.lever_arm, dtype=float)
    v_sensor = sensor_velocity(np.asarray(vel_body, float), np.asarray(ang_vel, float), arm)
    alt = np.asarray(altitude, dtype=float)
    with np.errstate(invalid="ignore"):
        lock = (alt >= params.min_altitude) & (alt <= params.max_altitude)
    ok = np.asarray(uniform) >= params.dropout_probability
    wt_std = (
        params.noise_std if params.water_track_noise_std is None else params.water_track_noise_std
    )
    nz = np.asarray(normal, dtype=float)
    bottom = v_sensor + params.noise_std * nz
    water = v_sensor - np.asarray(current_body, float) + wt_std * nz
    out = np.where(lock[:, None], bottom, water)
    mode = np.where(lock, BOTTOM, WATER if params.water_track else NONE)
    mode = np.where(ok, mode, NONE).astype(np.int64)
    return out, mode
