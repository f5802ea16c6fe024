"""The generic Fossen 6-DOF vehicle (``fossen6dof``), one vehicle per call, all backends.

    M ν̇_r + C_RB(ν) ν_r + C_A(ν_r) ν_r + D(ν_r) ν_r − g_f(η) = τ,   ν_r = ν − [Rᵀ v_c; 0]
    ν̇ = ν̇_r − [ω × Rᵀ v_c; 0],   ṗ = R ν₁,   q̇ = ½ q ⊗ [0; ω]  (or Θ̇ = T(Θ) ω)

:func:`derivative` composes the terms of :mod:`.terms`; :func:`step_one` integrates one
vehicle (RK4 or semi-implicit Euler with :mod:`marinesim.models.sixdof.integrate`'s stages);
:func:`run` walks N vehicles on a backend (:mod:`marinesim.models.sixdof.backends`).

Parameters travel as a float array ``par`` of shape (P, :data:`SIZE`), P = 1 (shared by all
vehicles) or N, laid out by the offsets below (:func:`pack` fills it from a built model).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.core import frames
from marinesim.models.sixdof import backends, guard, integrate, terms

__all__ = ["SIZE", "derivative", "derivatives", "pack", "run", "step_one"]

F64 = NDArray[np.float64]

# offsets in a parameter row
MASS, R_G, R_B, I_G = 0, 1, 4, 7
M_A, M_INV, D_L, D_LF, D_Q = 16, 52, 88, 124, 160
VOLUME, NEUTRAL, HEIGHT, LINEAR, HAS_LF = 166, 167, 168, 169, 170
G_LIN, G_0 = 171, 207
SIZE = 213


def pack(model: Any) -> F64:
    """Parameter rows (P, SIZE) of a built :class:`~marinesim.models.sixdof.fossen6dof.Fossen6Dof`."""
    n = model.m.shape[0] if model.batched else 1

    def rows(a: Any, width: int) -> F64:
        return np.broadcast_to(np.asarray(a, dtype=float).reshape(-1, width), (n, width))

    ma = np.asarray(model.m_a, dtype=float)
    if model.symmetrise_ma:
        ma = 0.5 * (ma + np.swapaxes(ma, -1, -2))
    par = np.zeros((n, SIZE))
    par[:, MASS] = np.broadcast_to(model.mass, (n,))
    par[:, R_G : R_G + 3] = rows(model.r_g, 3)
    par[:, R_B : R_B + 3] = rows(model.r_b, 3)
    par[:, I_G : I_G + 9] = rows(model.i_g, 9)
    par[:, M_A : M_A + 36] = rows(ma, 36)
    par[:, M_INV : M_INV + 36] = rows(model.m_inv, 36)
    par[:, D_L : D_L + 36] = rows(model.d_l, 36)
    par[:, D_LF : D_LF + 36] = rows(model.d_lf, 36)
    par[:, D_Q : D_Q + 6] = rows(model.d_q, 6)
    par[:, VOLUME] = np.broadcast_to(model.volume, (n,))
    par[:, NEUTRAL] = np.broadcast_to(model.neutral, (n,))
    par[:, HEIGHT] = np.broadcast_to(model.height, (n,))
    par[:, LINEAR] = 1.0 if model.linear_hydrostatics else 0.0
    par[:, HAS_LF] = 1.0 if np.any(model.d_lf) else 0.0
    par[:, G_LIN : G_LIN + 36] = rows(model.g_lin, 36)
    par[:, G_0 : G_0 + 6] = rows(model.g_0, 6)
    return np.ascontiguousarray(par)


@register_jitable
def derivative(
    par: Any, zero: Any, x: Any, tau: Any, cur: Any, rho: float, g: float, quat: bool, out: Any
) -> None:
    """ẋ of one vehicle, x = [p (3), attitude (4 or 3), ν (6)], with τ and the current held.

    Parameters
    ----------
    par : ndarray, shape (SIZE,)
        Parameter row.
    zero : ndarray of int, shape (K, 2)
        C_A entries removed (neglected Munk terms).
    x : ndarray, shape (13,) or (12,)
    tau : ndarray, shape (6,)
        Body wrench about the CO [N, N·m].
    cur : ndarray, shape (3,)
        NED water velocity [m/s].
    rho, g : float
        Density [kg/m³], gravity [m/s²].
    quat : bool
        Attitude as a unit quaternion (else zyx Euler angles).
    out : ndarray, same shape as x
        Receives ẋ.
    """
    ka = 4 if quat else 3
    o = 3 + ka
    if quat:
        rot = frames.rotation_quat_c(x[3], x[4], x[5], x[6])
    else:
        cphi, sphi = math.cos(x[3]), math.sin(x[3])
        cth, sth = math.cos(x[4]), math.sin(x[4])
        rot = frames.rotation_zyx_c(cphi, sphi, cth, sth, math.cos(x[5]), math.sin(x[5]))
    u, v, w, p, q, r = x[o], x[o + 1], x[o + 2], x[o + 3], x[o + 4], x[o + 5]
    nc = terms.current_in_body(rot, cur[0], cur[1], cur[2])
    nu_r = (u - nc[0], v - nc[1], w - nc[2], p, q, r)
    r_g = (par[R_G], par[R_G + 1], par[R_G + 2])
    c_rb = terms.rigid_body_coriolis(par[MASS], r_g, par, I_G, (p, q, r), nu_r)
    c_a = terms.added_mass_coriolis(par, M_A, nu_r, zero)
    d = terms.damping(par, D_L, D_LF if par[HAS_LF] != 0.0 else -1, D_Q, nu_r)
    if par[LINEAR] != 0.0:
        if quat:
            e = frames.euler_from_quat_c(x[3], x[4], x[5], x[6])
        else:
            e = (x[3], x[4], x[5])
        gv = terms.linear_restoring(par, G_LIN, G_0, (x[0], x[1], x[2], e[0], e[1], e[2]))
    else:
        w_n = par[MASS] * g
        b_n = w_n if par[NEUTRAL] != 0.0 else rho * g * par[VOLUME]
        hgt = par[HEIGHT]
        if not math.isnan(hgt):
            b_n = b_n * min(1.0, max(0.0, (x[2] + hgt / 2) / hgt))
        r_b = (par[R_B], par[R_B + 1], par[R_B + 2])
        gv = terms.hydrostatic_restoring(w_n, b_n, r_g, r_b, rot[6], rot[7], rot[8])
    rhs = (
        tau[0] - c_rb[0] - c_a[0] - d[0] + gv[0],
        tau[1] - c_rb[1] - c_a[1] - d[1] + gv[1],
        tau[2] - c_rb[2] - c_a[2] - d[2] + gv[2],
        tau[3] - c_rb[3] - c_a[3] - d[3] + gv[3],
        tau[4] - c_rb[4] - c_a[4] - d[4] + gv[4],
        tau[5] - c_rb[5] - c_a[5] - d[5] + gv[5],
    )
    acc = terms.mat6_times(par, M_INV, rhs)
    wc = terms.cross3(p, q, r, nc[0], nc[1], nc[2])
    out[0], out[1], out[2] = frames.rotate_c(rot, u, v, w)
    if quat:
        qd = frames.quat_rates_c(x[3], x[4], x[5], x[6], p, q, r)
        out[3], out[4], out[5], out[6] = qd[0], qd[1], qd[2], qd[3]
    else:
        ed = frames.euler_rates_c(cphi, sphi, cth, sth, p, q, r)
        out[3], out[4], out[5] = ed[0], ed[1], ed[2]
    out[o] = acc[0] - wc[0]
    out[o + 1] = acc[1] - wc[1]
    out[o + 2] = acc[2] - wc[2]
    out[o + 3] = acc[3]
    out[o + 4] = acc[4]
    out[o + 5] = acc[5]


@register_jitable
def step_one(
    i: int,
    par: Any,
    zero: Any,
    state: Any,
    tau: Any,
    cur: Any,
    rho: float,
    g: float,
    h: float,
    quat: bool,
    use_rk4: bool,
    max_speed: float,
    max_rate: float,
    alive: Any,
    work: Any,
    out: Any,
    status: Any,
    size: Any,
) -> None:
    """Advance vehicle ``i`` by h: ``out[i]`` from ``state[i]`` (rows of P = 1 broadcast).

    ``work`` has shape (N, 5, m): RK4 stage derivatives and the stage state of each vehicle.
    A quaternion is normalised after the step.  Then the divergence guard
    (:func:`.guard.check_one`, plus the Euler-angle singularity): a stopped vehicle keeps
    ``state[i]``, ``alive[i]`` turns false and ``status[i]``/``size[i]`` say why.
    """
    pr = par[terms.row_index(par, i)]
    tr = tau[terms.row_index(tau, i)]
    cr = cur[terms.row_index(cur, i)]
    x = state[i]
    y = out[i]
    k1, k2, k3, k4, xs = work[i, 0], work[i, 1], work[i, 2], work[i, 3], work[i, 4]
    m = x.shape[0]
    if use_rk4:
        derivative(pr, zero, x, tr, cr, rho, g, quat, k1)
        integrate.rk4_stage(x, k1, 0.5 * h, xs)
        derivative(pr, zero, xs, tr, cr, rho, g, quat, k2)
        integrate.rk4_stage(x, k2, 0.5 * h, xs)
        derivative(pr, zero, xs, tr, cr, rho, g, quat, k3)
        integrate.rk4_stage(x, k3, h, xs)
        derivative(pr, zero, xs, tr, cr, rho, g, quat, k4)
        integrate.rk4_combine(x, k1, k2, k3, k4, h, y)
    else:  # semi-implicit Euler: ν first, then the pose with the new ν
        o = m - 6
        derivative(pr, zero, x, tr, cr, rho, g, quat, k1)
        for j in range(o):
            xs[j] = x[j]
        integrate.euler_update(x, k1, h, xs, o, m)
        derivative(pr, zero, xs, tr, cr, rho, g, quat, k2)
        integrate.euler_update(x, k2, h, y, 0, o)
        for j in range(o, m):
            y[j] = xs[j]
    if quat:
        nq = math.sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] + y[6] * y[6])
        y[3] = y[3] / nq
        y[4] = y[4] / nq
        y[5] = y[5] / nq
        y[6] = y[6] / nq
    code, mag = guard.check_one(y, m - 6, max_speed, max_rate)
    if code == guard.OK and not quat and abs(math.cos(y[4])) < 1e-6:
        code = guard.SINGULAR
    guard.apply_one(i, code, mag, x, y, alive, status, size)


@register_jitable
def derivative_one(
    i: int, par: Any, zero: Any, state: Any, tau: Any, cur: Any, rho: float, g: float,
    quat: bool, out: Any,
) -> None:  # fmt: skip
    """``out[i]`` = ẋ of vehicle ``i`` (rows of P = 1 broadcast)."""
    pr = par[terms.row_index(par, i)]
    tr = tau[terms.row_index(tau, i)]
    cr = cur[terms.row_index(cur, i)]
    derivative(pr, zero, state[i], tr, cr, rho, g, quat, out[i])


STEP = backends.kernels(step_one, 2)  # args[2] is the state (N, m)
DERIVATIVE = backends.kernels(derivative_one, 2)


def run(
    par: F64,
    zero: NDArray[np.int64],
    state: F64,
    tau: F64,
    cur: F64,
    rho: float,
    g: float,
    h: float,
    *,
    quat: bool,
    use_rk4: bool,
    alive: NDArray[np.bool_],
    max_speed: float,
    max_rate: float,
    backend: str | None = None,
) -> tuple[F64, NDArray[np.int8], F64]:
    """One guarded step of N vehicles on a backend.

    Parameters
    ----------
    par : ndarray, shape (P, SIZE)
        P = 1 (shared) or N.
    zero : ndarray of int, shape (K, 2)
    state : ndarray, shape (N, 13) or (N, 12)
        [p, q (or Θ), ν] per vehicle.
    tau : ndarray, shape (1, 6) or (N, 6)
    cur : ndarray, shape (1, 3) or (N, 3)
    rho, g, h : float
    quat, use_rk4 : bool
    alive : ndarray of bool, shape (N,)
        Updated in place: vehicles stopped in this step turn false.
    max_speed, max_rate : float
        Divergence bounds [m/s], [rad/s].
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda`` (:mod:`marinesim.models.sixdof.backends`).

    Returns
    -------
    out : ndarray, same shape as ``state``
    status, size : ndarray, shape (N,)
        Guard codes (:mod:`.guard`) and magnitudes of the vehicles stopped in this step.
    """
    name = backends.resolve(backend)
    n, m = state.shape
    out = np.empty_like(state)
    work = np.empty((n, 5, m))
    status = np.zeros(n, dtype=np.int8)
    size = np.zeros(n)
    args = (
        par, zero, state, tau, cur, float(rho), float(g), float(h), quat, use_rk4,
        float(max_speed), float(max_rate), alive, work, out, status, size,
    )  # fmt: skip
    STEP.launch(name, args, {12: alive, 14: out, 15: status, 16: size})
    return out, status, size


def derivatives(
    par: F64, zero: NDArray[np.int64], state: F64, tau: F64, cur: F64, rho: float, g: float,
    *, quat: bool, backend: str | None = None,
) -> F64:  # fmt: skip
    """ẋ of N vehicles (shapes as :func:`run`) on a backend."""
    out = np.empty_like(state)
    args = (par, zero, state, tau, cur, float(rho), float(g), quat, out)
    DERIVATIVE.launch(backends.resolve(backend), args, {8: out})
    return out
