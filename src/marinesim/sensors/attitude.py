"""Attitude helpers shared by the navigation sensors (quaternion product, body perturbations).

Quaternions are scalar first, body FRD → NED, shape (N, 4); every function is batched over N.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["perturb_body", "quat_from_rotvec", "quat_mul"]


def quat_mul(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Hamilton product a ⊗ b of (N, 4) scalar-first quaternions; returns (N, 4)."""
    a0, a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    b0, b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
        ],
        axis=-1,
    )


def quat_from_rotvec(rv: NDArray[np.float64]) -> NDArray[np.float64]:
    """Unit quaternions (N, 4) of rotation vectors ``rv`` (N, 3) [rad]."""
    rv = np.asarray(rv, dtype=float)
    ang = np.linalg.norm(rv, axis=-1)
    half = 0.5 * ang
    # sin(x/2)/x with its limit 1/2 at x = 0
    k = np.where(ang > 1e-12, np.sin(half) / np.where(ang > 1e-12, ang, 1.0), 0.5)
    return np.concatenate([np.cos(half)[..., None], rv * k[..., None]], axis=-1)


def perturb_body(quat: NDArray[np.float64], angles: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotate attitudes ``quat`` (N, 4) by small body-frame angles (roll, pitch, yaw) [rad], (N, 3).

    The perturbation is applied on the body side, q ⊗ δq, and the result is normalised.
    """
    q = quat_mul(np.asarray(quat, dtype=float), quat_from_rotvec(angles))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)
