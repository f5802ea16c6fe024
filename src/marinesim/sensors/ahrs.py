"""Compass / AHRS: attitude with roll, pitch and yaw noise applied in the body frame (§6.2)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from marinesim.core.params import ParamsBase, field
from marinesim.sensors.attitude import perturb_body

__all__ = ["AhrsParams", "ahrs_measure"]


class AhrsParams(ParamsBase):
    """AHRS noise (required) and bias per axis, in degrees."""

    roll_std_deg: float = field(
        ..., unit="deg", description="roll noise sigma", ge=0, allow_inf_nan=False
    )
    pitch_std_deg: float = field(
        ..., unit="deg", description="pitch noise sigma", ge=0, allow_inf_nan=False
    )
    yaw_std_deg: float = field(
        ..., unit="deg", description="yaw (heading) noise sigma", ge=0, allow_inf_nan=False
    )
    yaw_bias_deg: float = field(
        0.0, unit="deg", description="constant heading bias (compass deviation)"
    )
    delay: float = field(0.0, unit="s", description="measurement describes t - delay", ge=0)
    dropout_probability: float = field(
        0.0, unit="", description="probability a sample is lost", ge=0, le=1
    )
    buffer_size: int = field(
        1, unit="", description="last delivered samples kept in the plugin state", ge=1
    )


def ahrs_measure(
    quat: NDArray[np.float64],
    normal: NDArray[np.float64],
    uniform: NDArray[np.float64],
    params: AhrsParams,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Measured attitude quaternions (N, 4) and delivered mask (N,).

    Parameters
    ----------
    quat : ndarray, shape (N, 4)
        True attitude (scalar first, body → NED).
    normal : ndarray, shape (N, 3)
        Standard normals for roll, pitch, yaw.
    uniform : ndarray, shape (N,)
        Dropout draws.
    params : AhrsParams
    """
    sig = np.deg2rad([params.roll_std_deg, params.pitch_std_deg, params.yaw_std_deg])
    ang = np.asarray(normal, dtype=float) * sig
    ang[:, 2] += np.deg2rad(params.yaw_bias_deg)
    return perturb_body(quat, ang), np.asarray(uniform) >= params.dropout_probability
