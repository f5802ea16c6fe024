"""GPS position fixes, available only near the surface (engine spec §6.2).

Pure and batched over N; random numbers are passed in (fixed consumption: two normals and one
uniform per vehicle per sample, drawn whether or not a fix is possible).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from marinesim.core.params import ParamsBase, field

__all__ = ["GpsParams", "gps_measure"]


class GpsParams(ParamsBase):
    """GPS receiver: horizontal noise (required), surface limit, delay and dropouts."""

    noise_std: float = field(
        ...,
        unit="m",
        description="horizontal position noise sigma per axis",
        ge=0,
        allow_inf_nan=False,
    )
    max_depth: float = field(
        0.5, unit="m", description="fix only when depth <= max_depth", allow_inf_nan=False
    )
    delay: float = field(0.0, unit="s", description="measurement describes t - delay", ge=0)
    dropout_probability: float = field(
        0.0, unit="", description="probability a fix is lost", ge=0, le=1
    )
    buffer_size: int = field(
        1, unit="", description="last delivered samples kept in the plugin state", ge=1
    )


def gps_measure(
    pos: NDArray[np.float64],
    normal: NDArray[np.float64],
    uniform: NDArray[np.float64],
    params: GpsParams,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Noisy (north, east) fixes.

    Parameters
    ----------
    pos : ndarray, shape (N, 3)
        True NED position [m] (depth = pos[:, 2]).
    normal : ndarray, shape (N, 2)
        Standard normal draws.
    uniform : ndarray, shape (N,)
        Uniform [0, 1) draws for the dropout.
    params : GpsParams

    Returns
    -------
    ne : ndarray, shape (N, 2)
        Measured north, east [m] (also filled where there is no fix).
    fix : ndarray of bool, shape (N,)
        True where a fix is delivered (at the surface and not dropped).
    """
    pos = np.asarray(pos, dtype=float)
    ne = pos[:, :2] + params.noise_std * np.asarray(normal)
    fix = (pos[:, 2] <= params.max_depth) & (np.asarray(uniform) >= params.dropout_probability)
    return ne, fix
