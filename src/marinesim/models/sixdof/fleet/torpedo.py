"""The torpedo AUV: the REMUS 100 hull with four independent fins and a lagged thruster.

Source: PythonVehicleSimulator @ c717e07 ``vehicles/torpedo.py`` and ``lib/actuator.py``
(``fin``, ``thruster``); Fossen (2021), §8.4.2; Allen et al. (2000).  The hull (mass, added
mass, damping, hull lift/drag, cross-flow drag, restoring, C_RB/C_A with the Munk terms
removed) is exactly the REMUS 100's and comes from
:func:`marinesim.models.sixdof.pvs_vehicles.remus100_forces` with its own actuators idle.
Fins (order top rudder 270°, bottom rudder 90°, starboard stern plane 180°, port stern plane
0°; x = −L/2, lever c = 0.1 m): lift ½ρ S C_L δ U_plane² with U_plane the relative speed in
the fin's plane; each state lags 0.1 s and is clamped to ±15° AFTER the lag.  Thruster: the
REMUS propeller law from the vehicle's absolute speed, |n| ≤ 1525 rpm only in the thrust; its
state lags 0.1 s.  Forces of step k come from the states of step k.  Current through ν_r plus
the current-rotation term.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof import pvs, terms
from marinesim.models.sixdof import pvs_vehicles as pv
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import TORPEDO, FleetVehicle
from marinesim.models.sixdof.pvs_vehicles import current_uv

__all__ = ["FIN_ANGLES_DEG", "build", "torpedo_step"]

#: Fin roll angles [deg] in actuator order (top, bottom, starboard, port).
FIN_ANGLES_DEG = (270.0, 90.0, 180.0, 0.0)
# after the REMUS 100 hull row: per fin (sin, cos, x, y, z, ½ρ S C_L), then limits and lags
F0 = pv.R_SIZE
FW = 6
FDMAX, FTD, NMAX, TN, RHO = F0 + 24, F0 + 25, F0 + 26, F0 + 27, F0 + 28
SIZE = F0 + 29


def build(
    control_system: str = "stepInput", r_z: float = 0.0, r_psi: float = 0.0, r_rpm: float = 0.0,
    V_current: float = 0.0, beta_current: float = 0.0,
) -> FleetVehicle:  # fmt: skip
    """``torpedo(controlSystem, r_z, r_psi, r_rpm, V_current, beta_current)``.

    r_z depth [m] in 0-100, r_psi heading [deg], r_rpm [rpm] in 0-1525, V_current [m/s],
    beta_current [deg].
    """
    a = fa.check("torpedo", {
        "control_system": control_system, "r_z": r_z, "r_psi": r_psi, "r_rpm": r_rpm,
        "V_current": V_current, "beta_current": beta_current,
    })  # fmt: skip
    hull = pvs.remus100("stepInput", a.r_z, a.r_psi, a.r_rpm, a.V_current, a.beta_current)
    row = np.zeros(SIZE)
    row[:F0] = pv.pack_remus100(hull)[0]
    rho, s_fin, x_fin, lever = 1026, 0.00665, -hull.L / 2, 0.1
    fins = []
    for k, (deg, cl) in enumerate(zip(FIN_ANGLES_DEG, (0.5, 0.5, 0.7, 0.7), strict=True)):
        ang = np.deg2rad(deg)
        y_f, z_f = np.cos(ang) * lever, np.sin(ang) * lever
        o = F0 + FW * k
        row[o : o + FW] = np.sin(ang), np.cos(ang), x_fin, y_f, z_f, 0.5 * rho * s_fin * cl
        fins.append({"area": s_fin, "CL": cl, "angle_rad": float(ang), "R": [x_fin, y_f, z_f]})
    row[[FDMAX, FTD, NMAX, TN, RHO]] = np.deg2rad(15), 0.1, 1525, 0.1, rho
    c: dict[str, Any] = {
        k: v for k, v in hull.constants().items()
        if k not in ("A_r", "A_s", "CL_delta_r", "CL_delta_s", "T_delta", "T_n", "deltaMax_r",
                     "deltaMax_s", "nMax", "x_r", "x_s")
    }  # fmt: skip
    c.update(ref_z=a.r_z, ref_psi=a.r_psi, ref_n=a.r_rpm, _fins=fins)
    ctor = (
        f"torpedo({a.control_system!r}, {a.r_z}, {a.r_psi}, {a.r_rpm}, {a.V_current}, "
        f"{a.beta_current})"
    )
    return FleetVehicle(
        vehicle="torpedo", kind=TORPEDO, control_mode=a.control_system, args=a.model_dump(),
        consts=c, row=row[None, :], nu0=np.zeros(6),
        controls=("delta_r_top", "delta_r_bottom", "delta_s_star", "delta_s_port", "n"),
        labels=("T Tail rudder (deg)", "B Tail rudder (deg)", "Star Stern plane (deg)",
                "Port Stern plane (deg)", "Propeller revolution (rpm)"),
        units=("rad", "rad", "rad", "rad", "rpm"), dof="6-DOF", constructor=ctor,
    )  # fmt: skip


@register_jitable(inline=INLINE)
def _thrust(pr: Any, n_state: float, speed: float) -> tuple[float, float]:
    """(X, K) of the thruster at state ``n_state`` [rpm], clamped to ±n_max for the force."""
    n = n_state
    if abs(n) >= pr[NMAX]:
        n = math.copysign(pr[NMAX], n)
    n_rps = n / 60
    rho = pr[RHO]
    if n_rps > 0:
        va = 0.944 * speed
        x = (
            rho
            * pv.D_PROP**4
            * (
                pv.KT_0 * abs(n_rps) * n_rps
                + (pv.KT_MAX - pv.KT_0) / pv.JA_MAX * (va / pv.D_PROP) * abs(n_rps)
            )
        )
        k = (
            rho
            * pv.D_PROP**5
            * (
                pv.KQ_0 * abs(n_rps) * n_rps
                + (pv.KQ_MAX - pv.KQ_0) / pv.JA_MAX * (va / pv.D_PROP) * abs(n_rps)
            )
        )
    else:
        x = rho * pv.D_PROP**4 * pv.KT_0 * abs(n_rps) * n_rps
        k = rho * pv.D_PROP**5 * pv.KQ_0 * abs(n_rps) * n_rps
    return (1 - pv.T_PROP) * x, k / 10


@register_jitable(inline=INLINE)
def torpedo_step(
    pr: Any, zero: Any, x: Any, c: Any, h: float, y: Any, trig: tuple, rot: tuple
) -> None:
    """ν_{k+1} and the five actuator states of one torpedo into ``y[6:17]``."""
    nu = (x[6], x[7], x[8], x[9], x[10], x[11])
    uc, vc = current_uv(pr[pv.R_VC], pr[pv.R_BETA], x[5])
    f = pv.remus100_forces(pr, zero, nu, (0.0, 0.0, 0.0), trig, rot, uc, vc)
    ur = nu[0] - uc
    vr = nu[1] - vc
    w = nu[2]
    fy_s = 0.0
    fz_s = 0.0
    mx = 0.0
    my = 0.0
    mz = 0.0
    for k in range(4):
        o = F0 + FW * k
        sa, ca = pr[o], pr[o + 1]
        vy_rot = math.sqrt((vr * sa) ** 2 + (w * ca) ** 2)
        u_plane = math.sqrt(ur**2 + vy_rot**2)
        d = x[12 + k]
        lift = pr[o + 5] * d * u_plane**2
        fy = sa * lift
        fz = -ca * lift
        rx, ry, rz = pr[o + 2], pr[o + 3], pr[o + 4]
        fy_s += fy
        fz_s += fz
        mx += ry * fz - rz * fy
        my += -rx * fz
        mz += rx * fy
        dn = d + h * ((c[k] - d) / pr[FTD])
        if abs(dn) >= pr[FDMAX]:
            dn = math.copysign(pr[FDMAX], dn)
        y[12 + k] = dn
    speed = math.sqrt(nu[0] ** 2 + nu[1] ** 2 + nu[2] ** 2)
    xp, kp = _thrust(pr, x[16], speed)
    y[16] = x[16] + h * ((c[4] - x[16]) / pr[TN])
    tau = (f[0] + xp, f[1] + fy_s, f[2] + fz_s, f[3] + mx + kp, f[4] + my, f[5] + mz)
    acc = terms.mat6_times(pr, pv.R_MINV, tau)
    pv.nu_euler_with_current(y, nu, acc, h, uc, vc)
