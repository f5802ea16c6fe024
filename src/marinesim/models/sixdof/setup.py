"""Set-up helpers of the 6-DOF models: matrices and coefficients built once from a vehicle's
parameters, before any step (Fossen 2021).

* :func:`smtrx` — the skew-symmetric matrix S(a), S(a)b = a × b;
* :func:`hmtrx` — the system transformation matrix H(r);
* :func:`m_rb` — the rigid-body mass matrix about the CO, H(r_g)ᵀ diag(m I₃, I_g) H(r_g);
* :func:`hoerner` — Hoerner's 2-D cross-flow drag coefficient (:data:`HOERNER_TABLE`).

No law of motion is written here: the laws a step runs are :mod:`marinesim.models.sixdof.terms`
and the vehicles' own modules; these functions only build their parameters.  Each works on a
leading vehicle axis as well (one vehicle is N = 1) and returns new arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["HOERNER_TABLE", "hmtrx", "hoerner", "m_rb", "smtrx"]

F64 = NDArray[np.float64]


def smtrx(a: ArrayLike) -> F64:
    """Skew-symmetric matrix S(a) with S(a)b = a × b (Fossen 2021, Ch. 2).

    Parameters
    ----------
    a : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    a = np.asarray(a, dtype=float)
    z = np.zeros(a.shape[:-1])
    return np.stack(
        (
            np.stack((z, -a[..., 2], a[..., 1]), axis=-1),
            np.stack((a[..., 2], z, -a[..., 0]), axis=-1),
            np.stack((-a[..., 1], a[..., 0], z), axis=-1),
        ),
        axis=-2,
    )


def hmtrx(r: ArrayLike) -> F64:
    """System transformation matrix H(r) = [[I₃, S(r)ᵀ], [0, I₃]] (Fossen 2021, Ch. 3).

    Parameters
    ----------
    r : array_like, shape (..., 3)
        Point (e.g. the CG) relative to the CO, body axes [m].

    Returns
    -------
    ndarray, shape (..., 6, 6)
        M_CO = H(r)ᵀ M_CG H(r).
    """
    r = np.asarray(r, dtype=float)
    h = np.broadcast_to(np.eye(6), (*r.shape[:-1], 6, 6)).copy()
    h[..., 0:3, 3:6] = np.swapaxes(smtrx(r), -1, -2)
    return h


def m_rb(m: ArrayLike, r_g: ArrayLike, i_g: ArrayLike) -> F64:
    """Rigid-body mass matrix about the CO, M_RB = H(r_g)ᵀ diag(m I₃, I_g) H(r_g).

    Fossen 2021, rigid-body kinetics chapter.

    Parameters
    ----------
    m : float or array_like, shape (...)
        Mass [kg].
    r_g : array_like, shape (..., 3)
        CG relative to the CO, body axes [m].
    i_g : array_like, shape (..., 3, 3)
        Inertia about the CG, body axes [kg·m²].

    Returns
    -------
    ndarray, shape (..., 6, 6)
    """
    m = np.asarray(m, dtype=float)
    r_g = np.asarray(r_g, dtype=float)
    i_g = np.asarray(i_g, dtype=float)
    lead = np.broadcast_shapes(m.shape, r_g.shape[:-1], i_g.shape[:-2])
    mcg = np.zeros((*lead, 6, 6))
    mcg[..., 0:3, 0:3] = m[..., None, None] * np.eye(3)
    mcg[..., 3:6, 3:6] = i_g
    h = hmtrx(np.broadcast_to(r_g, (*lead, 3)))
    return np.swapaxes(h, -1, -2) @ mcg @ h


#: Hoerner's 2-D cross-flow drag coefficient, digitised: (B / 2T, C_D).  Fossen 2021, Ch. 6.
HOERNER_TABLE = (
    (
        0.0109,
        0.1766,
        0.3530,
        0.4519,
        0.4728,
        0.4929,
        0.4933,
        0.5585,
        0.6464,
        0.8336,
        0.9880,
        1.3081,
        1.6392,
        1.8600,
        2.3129,
        2.6000,
        3.0088,
        3.4508,
        3.7379,
        4.0031,
    ),
    (
        1.9661,
        1.9657,
        1.8976,
        1.7872,
        1.5837,
        1.2786,
        1.2108,
        1.0836,
        0.9986,
        0.8796,
        0.8284,
        0.7599,
        0.6914,
        0.6571,
        0.6307,
        0.5962,
        0.5868,
        0.5859,
        0.5599,
        0.5593,
    ),
)


def hoerner(beam: float, draft: float) -> float:
    """2-D cross-flow drag coefficient from Hoerner's curve, linear interpolation.

    Parameters
    ----------
    beam, draft : float
        Section beam and draft [m].

    Returns
    -------
    float
        C_D,2D [-].
    """
    return float(np.interp(beam / (2.0 * draft), HOERNER_TABLE[0], HOERNER_TABLE[1]))
