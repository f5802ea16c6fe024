"""PythonVehicleSimulator's REMUS 100 and Otter: the shared 6-DOF terms plus their own.

One loop step of ``simulate()`` per vehicle (Fossen, PythonVehicleSimulator): the vehicle's
``dynamics`` — its forces, ν_{k+1} = ν_k + h ν̇ and the actuator lags by forward Euler — then
η_{k+1} = η_k + h J(η_k) ν_{k+1}.  The Coriolis, restoring and kinematics terms are those of
:mod:`.terms` and :mod:`marinesim.core.frames`; what is the vehicle's own is written here:

* REMUS 100 (Allen et al. 2000): propeller (Wageningen B-series linear in J_a), rudder and
  stern-plane lift and drag, hull lift and drag, cross-flow drag, speed-dependent damping;
* Otter USV: two propellers (quadratic, asymmetric), payload weight, linear damping with a
  quadratic yaw term, cross-flow drag and linear hydrostatics.

A vehicle's state row is [η (6), ν (6), actuators (m)], m = 3 (δ_r, δ_s [rad], n [rpm]) or
2 (n1, n2 [rad/s]).  Parameters are a float row laid out by the offsets below
(:func:`pack_remus100`, :func:`pack_otter`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.core import frames
from marinesim.core.jitable import INLINE
from marinesim.models.sixdof import backends, guard, terms

__all__ = [
    "OTTER",
    "REMUS100",
    "attitude_euler_row",
    "current_uv",
    "cross_flow_drag",
    "hull_lift_drag",
    "pack_otter",
    "pack_remus100",
    "step_guarded",
    "step_one",
]

F64 = NDArray[np.float64]

REMUS100, OTTER = 0, 1
STRIPS = 21

# REMUS 100 propeller (Allen et al. 2000; Wageningen B-series linearised in J_a)
D_PROP = 0.14
T_PROP = 0.1
JA_MAX = 0.6632
KT_0, KQ_0 = 0.4566, 0.0700
KT_MAX, KQ_MAX = 0.1798, 0.0312

# REMUS 100 parameter row
R_VC, R_BETA, R_DMAX_R, R_DMAX_S, R_NMAX, R_RHO, R_W, R_B = 0, 1, 2, 3, 4, 5, 6, 7
R_XR, R_XS, R_TDELTA, R_TN, R_KR, R_KS = 8, 9, 10, 11, 12, 13
R_D, R_RBG, R_RBB, R_CF, R_LD = 14, 20, 23, 26, 27
R_MRB, R_MA, R_MINV, R_XL = 32, 68, 104, 140
R_SIZE = 161

# Otter parameter row
O_VC, O_BETA, O_M, O_RG, O_IG, O_RP, O_FZ = 0, 1, 2, 3, 6, 15, 18
O_NMIN, O_NMAX, O_KPOS, O_KNEG, O_L1, O_L2, O_TN, O_D55, O_CF = 19, 20, 21, 22, 23, 24, 25, 26, 27
O_MA, O_D, O_G, O_MINV, O_XL = 28, 64, 100, 136, 172
O_SIZE = 193


def _cross_flow_consts(length: float, beam: float, draft: float) -> tuple[float, F64]:
    """½ρ T C_D,2D dx (ρ = 1026 as upstream) and the 21 strip positions x += L/20 from −L/2."""
    from marinesim.models.sixdof import setup

    k = 0.5 * 1026.0 * draft * setup.hoerner(beam, draft) * (length / 20)
    xs, x, dx = [], -length / 2, length / 20
    for _ in range(STRIPS):
        xs.append(x)
        x += dx
    return float(k), np.array(xs)


def pack_remus100(p: Any) -> F64:
    """Parameter row (1, R_SIZE) of a :class:`~marinesim.models.sixdof.pvs.Remus100Params`."""
    row = np.zeros(R_SIZE)
    mm = p.M
    row[[R_VC, R_BETA, R_DMAX_R, R_DMAX_S, R_NMAX, R_RHO, R_W, R_B]] = (
        p.V_c, p.beta_c, p.deltaMax_r, p.deltaMax_s, p.nMax, p.rho, p.W, p.B,
    )  # fmt: skip
    row[[R_XR, R_XS, R_TDELTA, R_TN]] = p.x_r, p.x_s, p.T_delta, p.T_n
    row[R_KR] = -0.5 * p.rho * p.A_r * p.CL_delta_r
    row[R_KS] = -0.5 * p.rho * p.A_s * p.CL_delta_s
    row[R_D : R_D + 6] = (
        mm[0][0] / p.T_surge,
        mm[1][1] / p.T_sway,
        mm[2][2] / p.T_heave,
        mm[3][3] * 2 * p.zeta_roll * p.w_roll,
        mm[4][4] * 2 * p.zeta_pitch * p.w_pitch,
        mm[5][5] / p.T_yaw,
    )
    row[R_RBG : R_RBG + 3] = p.r_bg
    row[R_RBB : R_RBB + 3] = p.r_bb
    row[R_CF], row[R_XL : R_XL + STRIPS] = _cross_flow_consts(p.L, p.diam, p.diam)
    # hull lift and drag constants: C_Lα, π e AR (e = 0.7), ½ρ (ρ = 1026), S, C_D0
    ar = p.diam**2 / p.S
    row[R_LD : R_LD + 5] = (
        math.pi * ar / (1 + math.sqrt(1 + (ar / 2) ** 2)),
        math.pi * 0.7 * ar,
        1 / 2 * 1026.0,
        p.S,
        p.CD_0,
    )
    row[R_MRB : R_MRB + 36] = (0.5 * (p.MRB + p.MRB.T)).ravel()
    row[R_MA : R_MA + 36] = (0.5 * (p.MA + p.MA.T)).ravel()
    row[R_MINV : R_MINV + 36] = np.asarray(p.Minv, dtype=float).ravel()
    return row[None, :]


def pack_otter(p: Any) -> F64:
    """Parameter row (1, O_SIZE) of an :class:`~marinesim.models.sixdof.pvs.OtterParams`."""
    row = np.zeros(O_SIZE)
    row[[O_VC, O_BETA, O_M]] = p.V_c, p.beta_c, p.m_total
    row[O_RG : O_RG + 3] = p.rg
    row[O_IG : O_IG + 9] = np.asarray(p.Ig, dtype=float).ravel()
    row[O_RP : O_RP + 3] = p.rp
    row[O_FZ] = p.mp * p.g
    row[[O_NMIN, O_NMAX, O_KPOS, O_KNEG, O_L1, O_L2, O_TN, O_D55]] = (
        p.n_min, p.n_max, p.k_pos, p.k_neg, p.l1, p.l2, p.T_n, p.D[5, 5],
    )  # fmt: skip
    row[O_CF], row[O_XL : O_XL + STRIPS] = _cross_flow_consts(p.L, p.B_pont, p.T)
    row[O_MA : O_MA + 36] = (0.5 * (p.MA + p.MA.T)).ravel()
    row[O_D : O_D + 36] = np.asarray(p.D, dtype=float).ravel()
    row[O_G : O_G + 36] = np.asarray(p.G, dtype=float).ravel()
    row[O_MINV : O_MINV + 36] = np.asarray(p.Minv, dtype=float).ravel()
    return row[None, :]


@register_jitable(inline=INLINE)
def cross_flow_drag(par: Any, o_k: int, o_xl: int, vr: float, rr: float) -> tuple:
    """(Y_h, N_h) of strip-theory cross-flow drag (PythonVehicleSimulator's ``crossFlowDrag``).

    Y = −k Σ |v + x r|(v + x r), N = −k Σ x |v + x r|(v + x r) over the strips in order,
    k = ½ρ T C_D,2D dx (Fossen 2021, Ch. 6).
    """
    sy = 0.0
    sn = 0.0
    for j in range(STRIPS):
        x = par[o_xl + j]
        s = vr + x * rr
        a = abs(s) * s
        sy += a
        sn += x * a
    k = par[o_k]
    return -k * sy, -k * sn


@register_jitable(inline=INLINE)
def hull_lift_drag(
    par: Any, o: int, alpha: float, u_r: float, ca: float, sa: float
) -> tuple[float, float]:
    """(X, Z) of the hull's lift and drag, linear lift, no stall (``forceLiftDrag``).

    C_L = C_Lα α, C_D = C_D0 + C_L²/(π e AR), forces ½ρU²S C rotated from the flow axes
    (cos α = ``ca``, sin α = ``sa``) to body axes (Beard & McLain 2012; Fossen 2021).
    """
    cl = par[o] * alpha
    cd = cl * cl / par[o + 1] + par[o + 4]
    q = par[o + 2] * u_r * u_r * par[o + 3]
    f_drag = q * cd
    f_lift = q * cl
    return -ca * f_drag + sa * f_lift, -sa * f_drag - ca * f_lift


@register_jitable(inline=INLINE)
def current_uv(v_c: float, beta_c: float, psi: float) -> tuple[float, float]:
    """(u_c, v_c) = V_c (cos(β_c − ψ), sin(β_c − ψ)) [m/s] of a constant current, V_c [m/s]
    towards β_c [rad] (PythonVehicleSimulator's vehicles)."""
    if v_c == 0.0:
        return 0.0, 0.0
    return v_c * math.cos(beta_c - psi), v_c * math.sin(beta_c - psi)


@register_jitable(inline=INLINE)
def _clip(x: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, x))


@register_jitable
def remus100_forces(
    par: Any, zero: Any, nu: tuple, act: tuple, trig: tuple, rot: tuple, uc: float, vc: float
) -> tuple:
    """τ − C ν_r − D ν_r − g of the REMUS 100 (actuators already clipped): 6 floats."""
    u, v, w, p, q, r = nu
    delta_r, delta_s, n = act
    ur = u - uc
    vr = v - vc
    nu_r = (ur, vr, w, p, q, r)
    alpha = math.atan2(w, ur)
    h2 = ur * ur + vr * vr
    u_rel = math.sqrt(h2 + w * w)
    uu = u_rel if par[R_VC] == 0.0 else math.sqrt(u * u + v * v + w * w)
    u_rh = math.sqrt(h2)
    u_rv = math.sqrt(ur * ur + w * w)
    ca = ur / u_rv if u_rv > 0 else 1.0
    sa = w / u_rv if u_rv > 0 else 0.0
    # propeller: thrust and torque, forward thrust with the advance-ratio term
    n_rps = n / 60
    an = abs(n_rps)
    ja_an = 0.944 * uu / D_PROP * an if n_rps > 0 else 0.0
    rho = par[R_RHO]
    x_prop = (KT_0 * an * n_rps + (KT_MAX - KT_0) / JA_MAX * ja_an) * rho * D_PROP**4
    k_prop = (KQ_0 * an * n_rps + (KQ_MAX - KQ_0) / JA_MAX * ja_an) * rho * D_PROP**5
    # Coriolis: C_RB and C_A (pitch/yaw Munk terms removed) in the m2c parametrisation
    c_rb = terms.added_mass_coriolis(par, R_MRB, nu_r, zero[0:0])
    c_a = terms.added_mass_coriolis(par, R_MA, nu_r, zero)
    decay = math.exp(-3 * u_rel)
    d0 = par[R_D] * decay
    d1 = par[R_D + 1] * decay
    x_ld, z_ld = hull_lift_drag(par, R_LD, alpha, u_rel, ca, sa)
    y_cf, n_cf = cross_flow_drag(par, R_CF, R_XL, vr, r)
    gf = terms.hydrostatic_restoring(
        par[R_W], par[R_B], (par[R_RBG], par[R_RBG + 1], par[R_RBG + 2]),
        (par[R_RBB], par[R_RBB + 1], par[R_RBB + 2]), rot[6], rot[7], rot[8],
    )  # fmt: skip
    # rudder and stern-plane lift ½ρU²A C_Lδ δ and their drag
    y_r = u_rh * u_rh * par[R_KR] * delta_r
    z_s = u_rv * u_rv * par[R_KS] * delta_s
    x_r = y_r * delta_r
    x_s = z_s * delta_s
    return (
        (1 - T_PROP) * x_prop + x_r + x_s + x_ld - (d0 * ur + (c_rb[0] + c_a[0])) + gf[0],
        y_r + y_cf - (d1 * vr + (c_rb[1] + c_a[1])) + gf[1],
        z_s + z_ld - (par[R_D + 2] * w + (c_rb[2] + c_a[2])) + gf[2],
        k_prop / 10 - (par[R_D + 3] * p + (c_rb[3] + c_a[3])) + gf[3],
        -par[R_XS] * z_s - (par[R_D + 4] * q + (c_rb[4] + c_a[4])) + gf[4],
        par[R_XR] * y_r + n_cf - (par[R_D + 5] * r + (c_rb[5] + c_a[5])) + gf[5],
    )


@register_jitable
def otter_forces(
    par: Any, zero: Any, nu: tuple, act: tuple, trig: tuple, rot: tuple, eta: tuple,
    uc: float, vc: float,
) -> tuple:  # fmt: skip
    """τ + D-terms − C ν_r − G η + g₀ of the Otter (propellers already clipped): 6 floats."""
    u, v, w, p, q, r = nu
    n1, n2 = act
    ur = u - uc
    vr = v - vc
    nu_r = (ur, vr, w, p, q, r)
    c_rb = terms.rigid_body_coriolis(
        par[O_M], (par[O_RG], par[O_RG + 1], par[O_RG + 2]), par, O_IG, (p, q, r), nu_r
    )
    c_a = terms.added_mass_coriolis(par, O_MA, nu_r, zero)
    g0 = terms.hydrostatic_restoring(
        par[O_FZ], 0.0, (par[O_RP], par[O_RP + 1], par[O_RP + 2]), (0.0, 0.0, 0.0),
        rot[6], rot[7], rot[8],
    )  # fmt: skip
    t1 = (par[O_KPOS] if n1 > 0 else par[O_KNEG]) * n1 * abs(n1)
    t2 = (par[O_KPOS] if n2 > 0 else par[O_KNEG]) * n2 * abs(n2)
    tau0 = t1 + t2
    tau5 = -par[O_L1] * t1 - par[O_L2] * t2
    dn = terms.mat6_times(par, O_D, nu_r)
    y_cf, n_cf = cross_flow_drag(par, O_CF, O_XL, vr, r)
    ge = terms.mat6_times(par, O_G, eta)
    return (
        tau0 - dn[0] - (c_rb[0] + c_a[0]) - ge[0] + g0[0],
        -dn[1] + y_cf - (c_rb[1] + c_a[1]) - ge[1] + g0[1],
        -dn[2] - (c_rb[2] + c_a[2]) - ge[2] + g0[2],
        -dn[3] - (c_rb[3] + c_a[3]) - ge[3] + g0[3],
        -dn[4] - (c_rb[4] + c_a[4]) - ge[4] + g0[4],
        tau5 + (-dn[5] - 10 * par[O_D55] * abs(r) * r) + n_cf - (c_rb[5] + c_a[5])
        - ge[5] + g0[5],
    )  # fmt: skip


@register_jitable(inline=INLINE)
def nu_euler_with_current(y: Any, nu: Any, acc: tuple, h: float, uc: float, vc: float) -> None:
    """y[6:12] = ν_k + h (ν̇ + [r v_c, −r u_c, 0, 0, 0, 0]): forward Euler of the velocities with
    the current-rotation term −ω × ν_c of a constant current (REMUS 100, Otter, torpedo).

    ``acc`` is M⁻¹τ [m/s², rad/s²], ``uc``, ``vc`` the current in body axes [m/s].
    """
    r = nu[5]
    y[6] = nu[0] + h * (r * vc + acc[0])
    y[7] = nu[1] + h * (-r * uc + acc[1])
    y[8] = nu[2] + h * acc[2]
    y[9] = nu[3] + h * acc[3]
    y[10] = nu[4] + h * acc[4]
    y[11] = nu[5] + h * acc[5]


@register_jitable
def step_one(
    i: int, kind: int, par: Any, zero: Any, state: Any, cmd: Any, h: float,
    max_speed: float, max_rate: float, alive: Any, out: Any, status: Any, size: Any,
) -> None:  # fmt: skip
    """One ``simulate()`` step of vehicle ``i``: ``out[i]`` from ``state[i]`` and ``cmd[i]``.

    Then the divergence guard (:func:`.guard.check_one`): a stopped vehicle keeps
    ``state[i]``, ``alive[i]`` turns false and ``status[i]``/``size[i]`` say why.
    """
    x = state[i]
    c = cmd[terms.row_index(cmd, i)]
    y = out[i]
    pr = par[0]
    cphi, sphi = math.cos(x[3]), math.sin(x[3])
    cth, sth = math.cos(x[4]), math.sin(x[4])
    cpsi, spsi = math.cos(x[5]), math.sin(x[5])
    trig = (cphi, sphi, cth, sth, cpsi, spsi)
    rot = frames.rotation_zyx_c(cphi, sphi, cth, sth, cpsi, spsi)
    nu = (x[6], x[7], x[8], x[9], x[10], x[11])
    if kind == REMUS100:
        uc, vc = current_uv(pr[R_VC], pr[R_BETA], x[5])
        act3 = (
            _clip(x[12], -pr[R_DMAX_R], pr[R_DMAX_R]),
            _clip(x[13], -pr[R_DMAX_S], pr[R_DMAX_S]),
            _clip(x[14], -pr[R_NMAX], pr[R_NMAX]),
        )
        f = remus100_forces(pr, zero, nu, act3, trig, rot, uc, vc)
        acc = terms.mat6_times(pr, R_MINV, f)
        y[12] = act3[0] + h * ((c[0] - act3[0]) / pr[R_TDELTA])
        y[13] = act3[1] + h * ((c[1] - act3[1]) / pr[R_TDELTA])
        y[14] = act3[2] + h * ((c[2] - act3[2]) / pr[R_TN])
    else:
        uc, vc = current_uv(pr[O_VC], pr[O_BETA], x[5])
        act2 = (
            _clip(x[12], pr[O_NMIN], pr[O_NMAX]),
            _clip(x[13], pr[O_NMIN], pr[O_NMAX]),
        )
        eta = (x[0], x[1], x[2], x[3], x[4], x[5])
        f = otter_forces(pr, zero, nu, act2, trig, rot, eta, uc, vc)
        acc = terms.mat6_times(pr, O_MINV, f)
        y[12] = act2[0] + h * ((c[0] - act2[0]) / pr[O_TN])
        y[13] = act2[1] + h * ((c[1] - act2[1]) / pr[O_TN])
    nu_euler_with_current(y, nu, acc, h, uc, vc)
    attitude_euler_row(x, y, h, trig, rot)
    code, mag = guard.check_one(y, 6, max_speed, max_rate)
    guard.apply_one(i, code, mag, x, y, alive, status, size)


@register_jitable(inline=INLINE)
def attitude_euler_row(x: Any, y: Any, h: float, trig: tuple, rot: tuple) -> None:
    """y[0:6] = x[0:6] + h J(η_k) y[6:12]: ``attitudeEuler`` with ν_{k+1} already in ``y``.

    ``trig`` = (cos φ, sin φ, cos θ, sin θ, cos ψ, sin ψ) of η_k = x[0:6], ``rot`` its R
    (row-major, :func:`marinesim.core.frames.rotation_zyx_c`).
    """
    u, v, w, p, q, r = y[6], y[7], y[8], y[9], y[10], y[11]
    pd = frames.rotate_c(rot, u, v, w)
    y[0] = x[0] + h * pd[0]
    y[1] = x[1] + h * pd[1]
    y[2] = x[2] + h * pd[2]
    ed = frames.euler_rates_c(trig[0], trig[1], trig[2], trig[3], p, q, r)
    y[3] = x[3] + h * ed[0]
    y[4] = x[4] + h * ed[1]
    y[5] = x[5] + h * ed[2]


STEP = backends.kernels(step_one, 3)  # args[3] is the state (N, 12 + m)


def step_guarded(
    step: backends.Kernels, kind: int, par: F64, zero: NDArray[np.int64], x: F64, cmd: F64,
    h: float, alive: NDArray[np.bool_], t: float, *, backend: str | None = None,
    max_speed: float = 50.0, max_rate: float = 50.0,
) -> tuple[F64, NDArray[np.bool_], list[str]]:  # fmt: skip
    """One guarded loop step of N vehicles on packed rows (N = 1 included).

    Runs a kernel with :func:`step_one`'s argument layout: :data:`STEP` (REMUS 100, Otter)
    or the PVS fleet's (:mod:`marinesim.models.sixdof.fleet.kernel`).

    Parameters
    ----------
    step : Kernels
    kind : int
        Vehicle kind the kernel's ``step_one`` dispatches on (:data:`REMUS100` ...).
    par : ndarray, shape (1, size) or (N, size)
        Packed parameters (shared or per vehicle).
    zero : ndarray of int, shape (K, 2)
        C_A entries removed.
    x, cmd, h, alive, t, backend, max_speed, max_rate
        The state rows, commands, sample time, running vehicles, time of the new state,
        backend and divergence bounds of :func:`marinesim.models.sixdof.pvs.step_guarded`.

    Returns
    -------
    x_next, alive, events
        As :func:`marinesim.models.sixdof.pvs.step_guarded`.
    """
    name = backends.resolve(backend)
    xs = np.ascontiguousarray(x, dtype=float)
    cs = np.ascontiguousarray(np.asarray(cmd, dtype=float).reshape(-1, xs.shape[1] - 12))
    al = np.array(alive, dtype=bool).reshape(xs.shape[0])
    n = xs.shape[0]
    out = np.empty_like(xs)
    status = np.zeros(n, dtype=np.int8)
    size = np.zeros(n)
    args = (
        kind, par, zero, xs, cs, float(h), float(max_speed), float(max_rate), al, out, status,
        size,
    )  # fmt: skip
    with np.errstate(all="ignore"):
        step.launch(name, args, {8: al, 9: out, 10: status, 11: size})
    ev = guard.events(status, size, t, max_speed, max_rate) if status.any() else []
    return out, al, ev
