"""Linear ship maneuvering model of Clarke, Gedling & Hine (1983) (``shipClarke83``): 3-DOF.

Source: PythonVehicleSimulator @ c717e07 ``vehicles/shipClarke83.py`` and ``lib/models.py``
(``clarke83``); D. Clarke, P. Gedling, G. Hine (1983), *The application of manoeuvring
criteria in hull design using linear theory*, Trans. RINA 125, 45-68; Fossen (2021), Ch. 7.
M ν̇_r + N(U_r) ν_r = τ in surge, sway and yaw, N(U_r) rebuilt from the relative speed every
step.  Upstream also rebuilds and inverts M every step; M does not depend on the speed, so its
inverse is formed once (the same LAPACK call, the same bits).  Rudder forces ∝ U_r² come from
the UNclamped rudder state; the state is clamped to ±30° only for its first-order lag
(T_δ = 1 s).  Current through ν_r only (no current-rotation term).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import CLARKE83, FleetVehicle
from marinesim.models.sixdof.pvs_vehicles import current_uv

__all__ = ["build", "clarke83", "clarke83_step"]

RHO_CLARKE = 1025.0  # density clarke83() uses (the ship itself uses 1026 for the rudder)

# parameter row
VC, BETA, TAUX, KXD, KYD, KND, DMAX, TDELTA, KN, XUNUM, L_, NYV, Q12, Q21, Q22 = range(15)
MINV, AR, CN = 15, 24, 25
SIZE = 26


def _coefficients(length: float, beam: float, draft: float, cb: float) -> dict[str, float]:
    """Non-dimensional hydrodynamic derivatives of Clarke et al. (1983), regression form."""
    s = math.pi * (draft / length) ** 2
    bt, bl, tl = beam / draft, beam / length, draft / length
    return {
        "Yvdot": -s * (1 + 0.16 * cb * beam / draft - 5.1 * (beam / length) ** 2),
        "Yrdot": -s * (0.67 * beam / length - 0.0033 * (beam / draft) ** 2),
        "Nvdot": -s * (1.1 * beam / length - 0.041 * bt),
        "Nrdot": -s * (1 / 12 + 0.017 * cb * bt - 0.33 * bl),
        "Yv": -s * (1 + 0.4 * cb * bt),
        "Yr": -s * (-1 / 2 + 2.2 * bl - 0.08 * bt),
        "Nv": -s * (1 / 2 + 2.4 * tl),
        "Nr": -s * (1 / 4 + 0.039 * bt - 0.56 * bl),
    }


def clarke83(
    U: float, L: float, B: float, T: float, Cb: float, R66: float, xg: float, T_surge: float
) -> tuple[np.ndarray, np.ndarray]:
    """3×3 M and N(U) of the linear maneuvering model, M ν̇ + N(U) ν = τ (surge, sway, yaw).

    Parameters
    ----------
    U : float
        Speed [m/s] (0.001 is added against the singularity at 0, as upstream).
    L, B, T : float
        Length, beam, draft [m].
    Cb : float
        Block coefficient [-].
    R66 : float
        Yaw radius of gyration [m].
    xg : float
        CG x-coordinate [m].
    T_surge : float
        Surge time constant [s].

    Returns
    -------
    M, N : ndarray, shape (3, 3)
    """
    rho = RHO_CLARKE
    m = rho * (Cb * L * B * T)
    iz = m * R66**2 + m * xg**2
    mrb = np.array([[m, 0, 0], [0, m, m * xg], [0, m * xg, iz]], float)
    xudot = -0.1 * m
    u = U + 0.001
    xu = -((m - xudot) / T_surge) / (0.5 * rho * L**2 * u)
    xudot = xudot / (0.5 * rho * L**3)
    k = _coefficients(L, B, T, Cb)
    ma_p = np.array(
        [[-xudot, 0, 0], [0, -k["Yvdot"], -k["Yrdot"]], [0, -k["Nvdot"], -k["Nrdot"]]], float
    )
    n_p = np.array([[-xu, 0, 0], [0, -k["Yv"], -k["Yr"]], [0, -k["Nv"], -k["Nr"]]], float)
    t_m = np.diag([1, 1, 1 / L])
    t_i = np.diag([1, 1, L])
    ma = (0.5 * rho * L**3) * t_i @ t_i @ (t_m @ (ma_p @ t_i))
    nn = (0.5 * rho * L**2 * u) * t_i @ t_i @ (t_m @ (n_p @ t_i))
    return mrb + ma, nn


def build(
    control_system: str = "stepInput",
    r: float = 0.0,
    L: float = 50.0,
    B: float = 7.0,
    T: float = 5.0,
    Cb: float = 0.7,
    V_current: float = 0.0,
    beta_current: float = 0.0,
    tau_X: float = 1e5,
) -> FleetVehicle:
    """``shipClarke83(controlSystem, r, L, B, T, Cb, V_current, beta_current, tau_X)``.

    r heading [deg], L/B/T [m], Cb [-], V_current [m/s], beta_current [deg], tau_X [N].
    """
    a = fa.check("shipClarke83", {
        "control_system": control_system, "r": r, "L": L, "B": B, "T": T, "Cb": Cb,
        "V_current": V_current, "beta_current": beta_current, "tau_X": tau_X,
    })  # fmt: skip
    d2r = math.pi / 180
    length, beam, draft, cb = a.L, a.B, a.T, a.Cb
    c: dict[str, Any] = {
        "rho": 1026, "ref": a.r, "V_c": a.V_current, "beta_c": a.beta_current * d2r,
        "L": length, "B": beam, "T": draft, "Cb": cb, "Lambda": 0.7, "tau_X": a.tau_X,
        "deltaMax": 30, "T_delta": 1.0, "wn": 0.3, "zeta": 1, "r_max": 1.0 * d2r, "zeta_d": 1,
    }  # fmt: skip
    c["R66"] = 0.27 * length if length > 100 else 0.25 * length
    c["wn_d"] = c["wn"] / 5
    u0 = 3
    m0, n0 = clarke83(u0, length, beam, draft, cb, c["R66"], 0, length)
    c["m_PID"], c["d_PID"], c["k_PID"] = float(m0[2][2]), float(n0[2][2]), 0
    b = 0.7 * draft
    ar = b**2 / c["Lambda"]
    cn = 6.13 * c["Lambda"] / (c["Lambda"] + 2.25)
    t_r = 1 - 0.28 * cb - 0.55
    a_h, x_r, x_h = 0.4, -0.45 * length, -1.0 * length
    rho = c["rho"]
    c["Nd"] = -0.25 * (x_r + a_h * x_h) * rho * u0**2 * ar * cn
    kc = _coefficients(length, beam, draft, cb)
    m_ship = RHO_CLARKE * (cb * length * beam * draft)
    row = np.zeros(SIZE)
    row[[VC, BETA, TAUX, DMAX, TDELTA, L_, AR, CN]] = (
        c["V_c"], c["beta_c"], c["tau_X"], c["deltaMax"] * d2r, c["T_delta"], length, ar, cn,
    )  # fmt: skip
    row[KXD] = -0.5 * (1 - t_r) * rho
    row[KYD] = -0.25 * (1 + a_h) * rho
    row[KND] = -0.25 * (x_r + a_h * x_h) * rho
    row[KN] = 0.5 * RHO_CLARKE * length**2
    row[XUNUM] = (m_ship - (-0.1 * m_ship)) / length
    row[NYV] = -kc["Yv"]
    row[Q12] = -kc["Yr"] * length
    row[Q21] = (1 / length) * -kc["Nv"]
    row[Q22] = (1 / length) * (-kc["Nr"] * length)
    row[MINV : MINV + 9] = np.linalg.inv(m0).ravel()
    ctor = (
        f"shipClarke83({a.control_system!r}, {a.r}, {length}, {beam}, {draft}, {cb}, "
        f"{a.V_current}, {a.beta_current}, {a.tau_X})"
    )
    return FleetVehicle(
        vehicle="shipClarke83", kind=CLARKE83, control_mode=a.control_system,
        args=a.model_dump(), consts=c, row=row[None, :],
        nu0=np.array([2, 0, 0, 0, 0, 0], float), controls=("delta_r",),
        labels=("Rudder angle (deg)",), units=("rad",),
        dof="surge, sway, yaw (3-DOF); z, phi, theta, w, p, q stay 0", constructor=ctor,
    )  # fmt: skip


@register_jitable(inline=INLINE)
def clarke83_step(pr: Any, x: Any, c: Any, h: float, y: Any) -> None:
    """ν_{k+1}, δ_{k+1} of one Clarke (1983) ship into ``y[6:13]``."""
    uc, vc = current_uv(pr[VC], pr[BETA], x[5])
    ur = x[6] - uc
    vr = x[7] - vc
    r = x[11]
    u_r = math.sqrt(ur**2 + vr**2)
    u2 = u_r**2
    xdd = pr[KXD] * u2 * pr[AR] * pr[CN]
    yd = pr[KYD] * u2 * pr[AR] * pr[CN]
    nd = pr[KND] * u2 * pr[AR] * pr[CN]
    delta = x[12]
    delta_r = -delta
    tau1 = (1 - 0.1) * pr[TAUX] - xdd * math.sin(delta_r) ** 2
    tau2 = -yd * math.sin(2 * delta_r)
    tau6 = -nd * math.sin(2 * delta_r)
    # N(U_r) as clarke83() scales it: k_N U, the yaw row and column scaled by L
    kn = pr[KN] * (u_r + 0.001)
    n00 = kn * (pr[XUNUM] / kn)
    n11 = kn * pr[NYV]
    n12 = kn * pr[Q12]
    kl = kn * pr[L_] * pr[L_]
    f0 = tau1 - n00 * ur
    f1 = tau2 - (n11 * vr + n12 * r)
    f2 = tau6 - (kl * pr[Q21] * vr + kl * pr[Q22] * r)
    o = MINV
    a0 = pr[o] * f0 + pr[o + 1] * f1 + pr[o + 2] * f2
    a1 = pr[o + 3] * f0 + pr[o + 4] * f1 + pr[o + 5] * f2
    a2 = pr[o + 6] * f0 + pr[o + 7] * f1 + pr[o + 8] * f2
    if abs(delta) >= pr[DMAX]:
        delta = math.copysign(pr[DMAX], delta)
    y[6] = x[6] + h * a0
    y[7] = x[7] + h * a1
    y[8] = x[8]
    y[9] = x[9]
    y[10] = x[10]
    y[11] = r + h * a2
    y[12] = delta + h * ((c[0] - delta) / pr[TDELTA])
