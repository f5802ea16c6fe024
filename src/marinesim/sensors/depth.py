"""Depth (pressure) sensor (engine spec §6.2).

The sensor measures gauge pressure ρ·g·d and converts it back with its own assumed density and
gravity; with the environment's values the conversion is exact and only the noise remains.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from marinesim.core.params import ParamsBase, field

__all__ = ["DepthParams", "depth_measure"]


class DepthParams(ParamsBase):
    """Pressure depth sensor: noise (required), bias, assumed density, delay, dropouts."""

    noise_std: float = field(
        ..., unit="m", description="depth noise sigma", ge=0, allow_inf_nan=False
    )
    bias: float = field(0.0, unit="m", description="constant depth bias", allow_inf_nan=False)
    assumed_density: float | None = field(
        None,
        unit="kg/m^3",
        description="density used for pressure -> depth (default: the water's)",
        gt=0,
    )
    delay: float = field(0.0, unit="s", description="measurement describes t - delay", ge=0)
    dropout_probability: float = field(
        0.0, unit="", description="probability a sample is lost", ge=0, le=1
    )
    buffer_size: int = field(
        1, unit="", description="last delivered samples kept in the plugin state", ge=1
    )


def depth_measure(
    depth: NDArray[np.float64],
    normal: NDArray[np.float64],
    uniform: NDArray[np.float64],
    params: DepthParams,
    density: float = 1025.0,
    gravity: float = 9.81,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Measured depth [m] (N,) and delivered mask (N,).

    Parameters
    ----------
    depth : ndarray, shape (N,)
        True depth [m], positive down.
    normal, uniform : ndarray, shape (N,)
        One standard normal and one uniform draw per vehicle.
    params : DepthParams
    density, gravity : float
        Water density [kg/m³] and gravity [m/s²] of the environment.
    """
    rho_assumed = density if params.assumed_density is None else params.assumed_density
    pressure = density * gravity * np.asarray(depth, dtype=float)  # Pa, gauge
    d = pressure / (rho_assumed * gravity) + params.bias + params.noise_std * np.asarray(normal)
    return d, np.asarray(uniform) >= params.dropout_probability
