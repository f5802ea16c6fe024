"""The 6-DOF terms on arrays of N vehicles, named after the textbook symbols (Fossen 2021).

Each function here reshapes its arguments into components and calls the one copy of its law:
the per-vehicle terms of :mod:`marinesim.models.sixdof.terms` and
:mod:`marinesim.models.sixdof.pvs_vehicles`, and the rotations of :mod:`marinesim.core.frames`
(plain arithmetic that also runs on numpy arrays component by component).  No law is written
here; these are the array views used by PythonVehicleSimulator's array face
(:mod:`marinesim.models.sixdof.pvs`), by checks and by users who want one term alone.  Names
and citations follow PythonVehicleSimulator's ``lib/gnc.py``: T. I. Fossen, *Handbook of
Marine Craft Hydrodynamics and Motion Control*, 2nd ed., Wiley 2021 ("Fossen 2021").
Matrices built once from parameters are in :mod:`marinesim.models.sixdof.setup`.

Conventions: body frame FRD (x forward, y starboard, z down), world frame NED,
ν = [u, v, w, p, q, r] (m/s, rad/s), η = [x, y, z, φ, θ, ψ] (m, rad, zyx Euler angles),
τ = [X, Y, Z, K, M, N] (N, N·m) about the body origin CO.  All work on a leading vehicle axis
N (one vehicle is N = 1) and return new arrays (no mutation); matrices of one vehicle are
(6, 6), batched matrices (N, 6, 6).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core import frames
from marinesim.models.sixdof import pvs_vehicles as pv
from marinesim.models.sixdof import terms

__all__ = [
    "c_rb_cg_times",
    "coriolis_times",
    "cross",
    "cross_flow_drag_pvs",
    "damping_times",
    "euler_kinematics",
    "force_lift_drag",
    "g_vect",
    "g_vect_rot",
    "m2c",
    "quat_kinematics",
    "rzyx",
    "tzyx",
]

F64 = NDArray[np.float64]


def _cols(a: ArrayLike) -> tuple:
    a = np.asarray(a, dtype=float)
    return tuple(a[..., i] for i in range(a.shape[-1]))


def cross(a: F64, b: F64) -> F64:
    """Row-wise cross product a × b, shapes (..., 3) (:func:`terms.cross3` per component)."""
    return np.stack(terms.cross3(*_cols(a), *_cols(b)), axis=-1)


def m2c(mass: ArrayLike, nu: ArrayLike) -> F64:
    """Coriolis–centripetal matrix C(ν) from a 6×6 mass matrix (Fossen 2021, Ch. 3).

    The mass matrix is symmetrised first, C = [[0, −S(a₁)], [−S(a₁), −S(a₂)]] with
    [a₁; a₂] = M ν (PythonVehicleSimulator's ``m2c``); entries by :func:`terms.c_entry`.

    Parameters
    ----------
    mass : array_like, shape (6, 6) or (N, 6, 6)
    nu : array_like, shape (N, 6)

    Returns
    -------
    ndarray, shape (N, 6, 6)
    """
    mass = np.asarray(mass, dtype=float)
    nu = np.asarray(nu, dtype=float)
    ms = 0.5 * (mass + np.swapaxes(mass, -1, -2))
    a = _cols(np.einsum("...ij,...j->...i", ms, nu))
    c = np.zeros((*nu.shape[:-1], 6, 6))
    for i in range(6):
        for j in range(6):
            c[..., i, j] = terms.c_entry(a, i, j)
    return c


def coriolis_times(
    mass: ArrayLike, nu: F64, zero: Sequence[tuple[int, int]] = (), *, symmetric: bool = False
) -> F64:
    """C(ν)ν for the :func:`m2c` parametrisation without forming C (Fossen 2021, Ch. 3).

    :func:`terms.added_mass_coriolis` on the components of ν.

    Parameters
    ----------
    mass : array_like, shape (6, 6)
        Mass matrix (symmetrised unless ``symmetric``).
    nu : ndarray, shape (N, 6)
        Velocity the matrix is formed with and applied to [m/s, rad/s].
    zero : sequence of (row, col)
        Entries of C set to zero (PythonVehicleSimulator's neglected Munk terms; 0-based).
    symmetric : bool
        Skip the symmetrisation when the caller knows M is symmetric.

    Returns
    -------
    ndarray, shape (N, 6)
    """
    mass = np.asarray(mass, dtype=float)
    ms = mass if symmetric else 0.5 * (mass + mass.T)
    z = np.array(zero, dtype=np.int64).reshape(-1, 2)
    return np.stack(terms.added_mass_coriolis(ms.ravel(), 0, _cols(nu), z), axis=-1)


def c_rb_cg_times(m: float, i_g: F64, r_g: F64, omega: F64, x: F64) -> F64:
    """C_RB(ν)x, linear-velocity-independent parametrisation (:func:`terms.rigid_body_coriolis`).

    Parameters
    ----------
    m : float
        Mass [kg].
    i_g : ndarray, shape (3, 3)
        Inertia about the CG [kg·m²].
    r_g : ndarray, shape (3,)
        CG relative to the CO [m].
    omega : ndarray, shape (N, 3)
        Angular velocity (p, q, r) [rad/s].
    x : ndarray, shape (N, 6)

    Returns
    -------
    ndarray, shape (N, 6)
    """
    par = np.asarray(i_g, dtype=float).ravel()
    rg = tuple(float(c) for c in np.asarray(r_g, dtype=float))
    return np.stack(terms.rigid_body_coriolis(m, rg, par, 0, _cols(omega), _cols(x)), axis=-1)


def damping_times(d_l: F64, nu_r: F64, d_lf: F64 | None = None, d_q: F64 | None = None) -> F64:
    """D(ν_r)ν_r = D_L ν_r + u_r D_LF ν_r + diag(D_Q)|ν_r|ν_r (:func:`terms.damping`).

    Parameters
    ----------
    d_l : ndarray, shape (6, 6)
        Linear damping [N·s/m, N·m·s/rad].
    nu_r : ndarray, shape (N, 6)
        Relative velocity.
    d_lf : ndarray, shape (6, 6), optional
        Damping linear in the forward speed u_r.
    d_q : ndarray, shape (6,), optional
        Quadratic damping diagonal.

    Returns
    -------
    ndarray, shape (N, 6)
    """
    par = np.concatenate(
        (
            np.asarray(d_l, dtype=float).ravel(),
            np.zeros(36) if d_lf is None else np.asarray(d_lf, dtype=float).ravel(),
            np.zeros(6) if d_q is None else np.asarray(d_q, dtype=float).ravel(),
        )
    )
    return np.stack(terms.damping(par, 0, -1 if d_lf is None else 36, 72, _cols(nu_r)), axis=-1)


def g_vect(
    w: ArrayLike, b: ArrayLike, theta: F64, phi: F64, r_bg: ArrayLike, r_bb: ArrayLike
) -> F64:
    """Restoring forces g(η) of a submerged body about the CO, Euler form (Fossen 2021, Ch. 4).

    PythonVehicleSimulator's ``gvect``: −:func:`terms.hydrostatic_restoring` with Rᵀe_z =
    (−sin θ, cos θ sin φ, cos θ cos φ).

    Parameters
    ----------
    w, b : float or ndarray, shape (N,)
        Weight and buoyancy [N].
    theta, phi : ndarray, shape (N,)
        Pitch and roll [rad].
    r_bg, r_bb : array_like, shape (3,)
        CG and CB relative to the CO [m].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    cth = np.cos(theta)
    k = (-np.sin(theta), cth * np.sin(phi), cth * np.cos(phi))
    return g_vect_rot(w, b, None, r_bg, r_bb, k=k)


def g_vect_rot(
    w: ArrayLike,
    b: ArrayLike,
    rot: F64 | None,
    r_g: ArrayLike,
    r_b: ArrayLike,
    *,
    k: tuple | None = None,
) -> F64:
    """Representation-free restoring forces g = −[f_g + f_b ; r_g × f_g + r_b × f_b].

    f_g = Rᵀ[0, 0, W], f_b = −Rᵀ[0, 0, B] (Fossen 2021, Ch. 4; :func:`terms.hydrostatic_restoring`).

    Parameters
    ----------
    w, b : float or ndarray, shape (N,)
        Weight and buoyancy [N].
    rot : ndarray, shape (N, 3, 3)
        Body → NED rotation.
    r_g, r_b : array_like, shape (3,)
        CG and CB relative to the CO [m].
    k : tuple of 3 arrays, optional
        Rᵀ e_z when the caller has it (then ``rot`` is not used).

    Returns
    -------
    ndarray, shape (N, 6)
    """
    if k is None:
        k = (rot[:, 2, 0], rot[:, 2, 1], rot[:, 2, 2])
    rg = tuple(np.asarray(r_g, dtype=float))
    rb = tuple(np.asarray(r_b, dtype=float))
    g = terms.hydrostatic_restoring(
        np.asarray(w, dtype=float), np.asarray(b, dtype=float), rg, rb, *k
    )
    return -np.stack(np.broadcast_arrays(*g), axis=-1)


def rzyx(phi: F64, theta: F64, psi: F64) -> F64:
    """R(Θ) = Rz(ψ)Ry(θ)Rx(φ), body → NED, shape (N, 3, 3): :func:`frames.rotation_from_euler`."""
    return frames.rotation_from_euler(phi, theta, psi)


def tzyx(phi: F64, theta: F64) -> F64:
    """Euler-angle rate transformation T(Θ), shape (N, 3, 3), singular at θ = ±90°.

    The columns are :func:`frames.euler_rates_c` of the unit angular velocities.
    """
    cphi, sphi = np.cos(phi), np.sin(phi)
    cth, sth = np.cos(theta), np.sin(theta)
    one, zero = np.ones_like(cphi), np.zeros_like(cphi)
    cols = [
        np.stack(frames.euler_rates_c(cphi, sphi, cth, sth, *e), axis=-1)
        for e in ((one, zero, zero), (zero, one, zero), (zero, zero, one))
    ]
    return np.stack(cols, axis=-1)


def euler_kinematics(eta: F64, nu: F64) -> F64:
    """η̇ = [R(Θ) ν₁ ; T(Θ) ν₂] for zyx Euler angles (Fossen 2021, Ch. 2).

    Parameters
    ----------
    eta : ndarray, shape (N, 6)
        [x, y, z, φ, θ, ψ] [m, rad].
    nu : ndarray, shape (N, 6)
        [u, v, w, p, q, r] [m/s, rad/s].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    phi, th, psi = eta[:, 3], eta[:, 4], eta[:, 5]
    cphi, sphi, cth, sth = np.cos(phi), np.sin(phi), np.cos(th), np.sin(th)
    r = frames.rotation_zyx_c(cphi, sphi, cth, sth, np.cos(psi), np.sin(psi))
    u, v, w, p, q, rr = _cols(nu)
    return np.stack(
        (
            *frames.rotate_c(r, u, v, w),
            *frames.euler_rates_c(cphi, sphi, cth, sth, p, q, rr),
        ),
        axis=1,
    )


def quat_kinematics(quat: F64, omega: F64) -> F64:
    """q̇ = ½ q ⊗ [0, ω], unit quaternion scalar first (:func:`frames.quat_rates_c`).

    Parameters
    ----------
    quat : ndarray, shape (N, 4)
    omega : ndarray, shape (N, 3)
        Body angular velocity [rad/s].

    Returns
    -------
    ndarray, shape (N, 4)
    """
    return np.stack(frames.quat_rates_c(*_cols(quat), *_cols(omega)), axis=-1)


def cross_flow_drag_pvs(
    length: float, beam: float, draft: float, nu_r: F64, rho: float = 1026.0
) -> F64:
    """Cross-flow drag by strip theory, as PythonVehicleSimulator's ``crossFlowDrag``.

    21 strips of width L/20 from x = −L/2 (Fossen 2021, Ch. 6); the law is
    :func:`marinesim.models.sixdof.pvs_vehicles.cross_flow_drag`.

    Parameters
    ----------
    length, beam, draft : float
        [m].
    nu_r : ndarray, shape (N, 6)
        Relative velocity.
    rho : float
        Water density [kg/m³] (upstream: 1026 always).

    Returns
    -------
    ndarray, shape (N, 6)
        [0, Y_h, 0, 0, 0, N_h].
    """
    k, xl = pv._cross_flow_consts(length, beam, draft)
    par = np.concatenate(([k * rho / 1026.0], xl))
    yh, nh = pv.cross_flow_drag(par, 0, 1, nu_r[:, 1], nu_r[:, 5])
    z = np.zeros_like(yh)
    return np.stack((z, yh, z, z, z, nh), axis=1)


def force_lift_drag(
    b: float, s: float, cd_0: float, alpha: F64, u_r: F64, rho: float = 1026.0
) -> F64:
    """Hull lift and drag of a submerged "wing", linear lift (Beard & McLain 2012; Fossen 2021).

    As PythonVehicleSimulator's ``forceLiftDrag`` with no stall blending (σ = 0); the law is
    :func:`marinesim.models.sixdof.pvs_vehicles.hull_lift_drag`.

    Parameters
    ----------
    b : float
        Span [m].
    s : float
        Area [m²].
    cd_0 : float
        Parasitic drag coefficient [-].
    alpha : ndarray, shape (N,)
        Angle of attack [rad].
    u_r : ndarray, shape (N,)
        Relative speed [m/s].
    rho : float
        Density [kg/m³].

    Returns
    -------
    ndarray, shape (N, 6)
        [X, 0, Z, 0, 0, 0] in body axes [N].
    """
    ar = b**2 / s
    par = np.array(
        [np.pi * ar / (1 + np.sqrt(1 + (ar / 2) ** 2)), np.pi * 0.7 * ar, 0.5 * rho, s, cd_0]
    )
    alpha = np.asarray(alpha, dtype=float)
    x, zf = pv.hull_lift_drag(par, 0, alpha, np.asarray(u_r, float), np.cos(alpha), np.sin(alpha))
    z = np.zeros_like(x)
    return np.stack((x, z, zf, z, z, z), axis=1)
