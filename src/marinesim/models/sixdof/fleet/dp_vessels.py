"""DP vessels: the semisubmersible (6-DOF linear) and the offshore supply vessel (3-DOF).

Source: PythonVehicleSimulator @ c717e07 ``vehicles/semisub.py``, ``vehicles/supply.py``;
Fossen (2021), Ch. 6 and 12; supply vessel from Fossen, Sagatun & Sørensen (1996), bis-scaled.
One law for both: M ν̇ = τ − D ν_r − G η with constant M⁻¹, D, G (the supply vessel's 3×3
surge-sway-yaw matrices sit in the (0, 1, 5) rows and columns, G = 0; its other three
velocities stay 0), τ = [τ_X, τ_Y, 0, 0, 0, τ_N] = B (|n| n) with B = T K (3×6).  The six
propeller speeds [rpm] are clamped IN PLACE to ±n_max before use (the logged row is the
unclamped state) and lag with T_n = 1 s from the clamped value.  Current through ν_r only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof import terms
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import DP_VESSEL, FleetVehicle
from marinesim.models.sixdof.pvs_vehicles import current_uv

__all__ = ["dp_step", "semisub", "supply"]

VC, BETA, TN = 0, 1, 2
NMAX, BMAT, MINV, DMAT, GMAT = 3, 9, 27, 63, 99
SIZE = 135
_IDX3 = (0, 1, 5)


def _vehicle(name: str, a: Any, c: dict[str, Any], minv6: Any, d6: Any, g6: Any,
             labels: tuple[str, ...], dof: str) -> FleetVehicle:  # fmt: skip
    c["B_pseudoInv"] = c["B"].T @ np.linalg.inv(c["B"] @ c["B"].T)
    row = np.zeros(SIZE)
    row[[VC, BETA, TN]] = c["V_c"], c["beta_c"], c["T_n"]
    row[NMAX : NMAX + 6] = c["n_max"]
    row[BMAT : BMAT + 18] = c["B"].ravel()
    row[MINV : MINV + 36] = minv6.ravel()
    row[DMAT : DMAT + 36] = d6.ravel()
    row[GMAT : GMAT + 36] = g6.ravel()
    ctor = (
        f"{name}({a.control_system!r}, {a.r_x}, {a.r_y}, {a.r_n}, {a.V_current}, {a.beta_current})"
    )
    return FleetVehicle(
        vehicle=name, kind=DP_VESSEL, control_mode=a.control_system, args=a.model_dump(),
        consts=c, row=row[None, :], nu0=np.zeros(6), controls=tuple(f"n{i}" for i in range(1, 7)),
        labels=labels, units=("rpm",) * 6, dof=dof, constructor=ctor,
    )  # fmt: skip


def _common(a: Any) -> dict[str, Any]:
    d2r = math.pi / 180
    return {
        "ref": np.array([a.r_x, a.r_y, a.r_n * d2r], float), "V_c": a.V_current,
        "beta_c": a.beta_current * d2r, "T_n": 1.0, "x_d": 0.0, "y_d": 0.0, "psi_d": 0.0,
        "zeta": np.diag([1.0, 1.0, 1.0]),
    }  # fmt: skip


def semisub(
    control_system: str = "stepInput", r_x: float = 0.0, r_y: float = 0.0, r_n: float = 0.0,
    V_current: float = 0.0, beta_current: float = 0.0,
) -> FleetVehicle:  # fmt: skip
    """``semisub(controlSystem, r_x, r_y, r_n, V_current, beta_current)``.

    r_x, r_y [m], r_n heading [deg], V_current [m/s], beta_current [deg].
    """
    a = fa.check("semisub", {
        "control_system": control_system, "r_x": r_x, "r_y": r_y, "r_n": r_n,
        "V_current": V_current, "beta_current": beta_current,
    })  # fmt: skip
    c = _common(a)
    c["L"] = 84.6
    c["n_max"] = np.array([160, 160, 160, 160, 250, 250], float)
    mrb = 1.0e10 * np.array([
        [0.0027, 0, 0, 0, -0.0530, 0], [0, 0.0027, 0, 0.0530, 0, -0.0014],
        [0, 0, 0.0027, 0, 0.0014, 0], [0, 0.0530, 0, 3.4775, 0, -0.0265],
        [-0.0530, 0, 0.0014, 0, 3.8150, 0], [0, -0.0014, 0, -0.0265, 0, 3.7192],
    ], float)  # fmt: skip
    ma = 1.0e10 * np.array([
        [0.0017, 0, 0, 0, -0.0255, 0], [0, 0.0042, 0, 0.0365, 0, 0], [0, 0, 0.0021, 0, 0, 0],
        [0, 0.0365, 0, 1.3416, 0, 0], [-0.0255, 0, 0, 0, 2.2267, 0], [0, 0, 0, 0, 0, 3.2049],
    ], float)  # fmt: skip
    c["D"] = 1.0e09 * np.array([
        [0.0004, 0, 0, 0, -0.0085, 0], [0, 0.0003, 0, 0.0067, 0, -0.0002],
        [0, 0, 0.0034, 0, 0.0017, 0], [0, 0.0067, 0, 4.8841, 0, -0.0034],
        [-0.0085, 0, 0.0017, 0, 7.1383, 0], [0, -0.0002, 0, -0.0034, 0, 0.8656],
    ], float)  # fmt: skip
    c["G"] = 1.0e10 * np.diag([0.0, 0.0, 0.0006, 1.4296, 2.6212, 0.0])
    c["M"] = mrb + ma
    c["Minv"] = np.linalg.inv(c["M"])
    k = np.diag([3.5, 3.5, 25.0, 25.0, 25.0, 25.0])
    t = np.array([[0, 0, 0, 0, 1, 1], [1, 1, 1, 1, 0, 0],
                  [30, 20, -20, -30, -c["L"] / 2, c["L"] / 2]], float)  # fmt: skip
    c["B"] = t @ k
    c["wn"] = np.diag([0.15, 0.15, 0.05])
    c["M3"] = np.diag([c["M"][0][0], c["M"][1][1], c["M"][5][5]])
    c["D3"] = np.diag([c["D"][0][0], c["D"][1][1], c["D"][5][5]])
    labels = (
        "#1 Bow tunnel thruster (RPM)", "#2 Bow tunnel thruster (RPM)",
        "#3 Aft tunnel thruster (RPM)", "#4 Aft tunnel thruster (RPM)",
        "#5 Right poontoon main propeller (RPM)", "$6 Left pontoon main propeller (RPM)",
    )  # fmt: skip
    return _vehicle("semisub", a, c, c["Minv"], c["D"], c["G"], labels, "6-DOF linear")


def supply(
    control_system: str = "stepInput", r_x: float = 0.0, r_y: float = 0.0, r_n: float = 0.0,
    V_current: float = 0.0, beta_current: float = 0.0,
) -> FleetVehicle:  # fmt: skip
    """``supply(controlSystem, r_x, r_y, r_n, V_current, beta_current)``.

    r_x, r_y [m], r_n heading [deg], V_current [m/s], beta_current [deg].
    """
    a = fa.check("supply", {
        "control_system": control_system, "r_x": r_x, "r_y": r_y, "r_n": r_n,
        "V_current": V_current, "beta_current": beta_current,
    })  # fmt: skip
    c = _common(a)
    g = 9.81
    m = 6000.0e3
    c["L"] = 76.2
    c["n_max"] = np.array([250, 250, 250, 250, 160, 160], float)
    k = np.diag([3.2, 3.2, 3.2, 3.2, 31.2, 31.2])
    t = np.array([[0, 0, 0, 0, 1, 1], [1, 1, 1, 1, 0, 0], [30, 22, -22, -30, -8, 8]], float)
    c["B"] = t @ k
    tbis_inv = np.diag([1.0, 1.0, c["L"]])
    mbis = np.array([[1.1274, 0, 0], [0, 1.8902, -0.0744], [0, -0.0744, 0.1278]], float)
    dbis = np.array([[0.0358, 0, 0], [0, 0.1183, -0.0124], [0, -0.0041, 0.0308]], float)
    c["M3"] = m * tbis_inv @ mbis @ tbis_inv
    c["M3inv"] = np.linalg.inv(c["M3"])
    c["D3"] = m * math.sqrt(g / c["L"]) * tbis_inv @ dbis @ tbis_inv
    c["wn"] = np.diag([0.1, 0.1, 0.2])
    minv6, d6 = np.zeros((6, 6)), np.zeros((6, 6))
    for i, ii in enumerate(_IDX3):
        for j, jj in enumerate(_IDX3):
            minv6[ii, jj] = c["M3inv"][i, j]
            d6[ii, jj] = c["D3"][i, j]
    labels = (
        "#1 Bow tunnel thruster (RPM)", "#2 Bow tunnel thruster (RPM)",
        "#3 Stern tunnel thruster (RPM)", "#4 Stern tunnel thruster (RPM)",
        "#5 Right main propeller (RPM)", "#6 Left main propeller (RPM)",
    )  # fmt: skip
    return _vehicle(
        "supply", a, c, minv6, d6, np.zeros((6, 6)), labels,
        "surge, sway, yaw (3-DOF); z, phi, theta, w, p, q stay 0",
    )  # fmt: skip


@register_jitable(inline=INLINE)
def dp_step(pr: Any, x: Any, c: Any, h: float, y: Any) -> None:
    """ν_{k+1}, n_{k+1} of one DP vessel into ``y[6:18]``."""
    uc, vc = current_uv(pr[VC], pr[BETA], x[5])
    nu_r = (x[6] - uc, x[7] - vc, x[8], x[9], x[10], x[11])
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    for i in range(6):
        n = x[12 + i]
        if n > pr[NMAX + i]:
            n = pr[NMAX + i]
        elif n < -pr[NMAX + i]:
            n = -pr[NMAX + i]
        sq = abs(n) * n
        t0 += pr[BMAT + i] * sq
        t1 += pr[BMAT + 6 + i] * sq
        t2 += pr[BMAT + 12 + i] * sq
        y[12 + i] = n + h * ((c[i] - n) / pr[TN])
    dn = terms.mat6_times(pr, DMAT, nu_r)
    ge = terms.mat6_times(pr, GMAT, (x[0], x[1], x[2], x[3], x[4], x[5]))
    f = (
        t0 - dn[0] - ge[0], t1 - dn[1] - ge[1], 0.0 - dn[2] - ge[2],
        0.0 - dn[3] - ge[3], 0.0 - dn[4] - ge[4], t2 - dn[5] - ge[5],
    )  # fmt: skip
    acc = terms.mat6_times(pr, MINV, f)
    for j in range(6):
        y[6 + j] = x[6 + j] + h * acc[j]
