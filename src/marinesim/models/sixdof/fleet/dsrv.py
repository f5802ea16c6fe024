"""The NPS deep-submergence rescue vehicle (DSRV): 2-DOF heave/pitch, surge held.

Source: PythonVehicleSimulator @ c717e07 ``vehicles/DSRV.py``; A. J. Healey (1992), *Marine
Vehicle Dynamics Lecture Notes*, NPS; Fossen (2021).  Non-dimensional linear model in w and q
with a speed-dependent pitch stiffness M_θ = −0.156276/U², U = √(U0² + (W0 + w)²); only w and
q are integrated (forward Euler) and u is reset to U0 = 4.11 m/s after every step.  Stern
plane δ_s [rad]: clamped to ±20° before use, first-order lag T_δ = 1 s from the clamped value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import DSRV, FleetVehicle

__all__ = ["build", "dsrv_step"]

# parameter row
U0, W0, DMAX, TDELTA, M11, M12, M21, M22, DET = 0, 1, 2, 3, 4, 5, 6, 7, 8
MQ, ZQ, MW, ZW, MDELTA, ZDELTA = 9, 10, 11, 12, 13, 14
SIZE = 15


def build(control_system: str = "stepInput", r: float = 0.0) -> FleetVehicle:
    """``DSRV(controlSystem, r)``: r = desired depth [m] (``depthAutopilot``)."""
    a = fa.check("DSRV", {"control_system": control_system, "r": r})
    iy, m = 0.001925, 0.036391
    mqdot, zqdot, mwdot, zwdot = -0.001573, -0.000130, -0.000146, -0.031545
    c: dict[str, Any] = {
        "ref": a.r, "L": 5.0, "deltaMax": 20, "T_delta": 1.0, "U0": 4.11, "W0": 0,
        "m11": m - zwdot, "m12": -zqdot, "m22": iy - mqdot, "m21": -mwdot,
        "Mq": -0.01131, "Zq": -0.017455, "Mw": 0.011175, "Zw": -0.043938,
        "Mdelta": -0.012797, "Zdelta": 0.027695,
        "wn": 1, "zeta": 1, "w_max": 1, "zeta_d": 1,
    }  # fmt: skip
    c["detM"] = c["m11"] * c["m22"] - c["m12"] * c["m21"]
    c["wn_d"] = c["wn"] / 5
    row = np.zeros(SIZE)
    row[[U0, W0, DMAX, TDELTA, M11, M12, M21, M22, DET]] = (
        c["U0"], c["W0"], c["deltaMax"] * math.pi / 180, c["T_delta"], c["m11"], c["m12"],
        c["m21"], c["m22"], c["detM"],
    )  # fmt: skip
    row[[MQ, ZQ, MW, ZW, MDELTA, ZDELTA]] = (
        c["Mq"], c["Zq"], c["Mw"], c["Zw"], c["Mdelta"], c["Zdelta"],
    )  # fmt: skip
    return FleetVehicle(
        vehicle="DSRV", kind=DSRV, control_mode=a.control_system, args=a.model_dump(),
        consts=c, row=row[None, :], nu0=np.array([c["U0"], 0, c["W0"], 0, 0, 0], float),
        controls=("delta_s",), labels=("Stern plane (deg)",), units=("rad",),
        dof="heave w and pitch q integrated; surge reset to U0 = 4.11 m/s every step",
        constructor=f"DSRV({a.control_system!r}, {a.r})",
    )  # fmt: skip


@register_jitable(inline=INLINE)
def dsrv_step(pr: Any, x: Any, c: Any, h: float, y: Any) -> None:
    """ν_{k+1}, δ_{k+1} of one DSRV into ``y[6:13]`` (forward Euler, upstream order)."""
    delta = x[12]
    w = x[8]
    q = x[10]
    theta = x[4]
    u_tot = math.sqrt(pr[U0] ** 2 + (pr[W0] + w) ** 2)
    m_theta = -0.156276 / u_tot**2
    if abs(delta) >= pr[DMAX]:
        delta = math.copysign(pr[DMAX], delta)
    zf = pr[ZQ] * q + pr[ZW] * w + pr[ZDELTA] * delta
    mf = pr[MQ] * q + pr[MW] * w + m_theta * theta + pr[MDELTA] * delta
    w_dot = (pr[M22] * zf - pr[M12] * mf) / pr[DET]
    q_dot = (-pr[M21] * zf + pr[M11] * mf) / pr[DET]
    y[6] = pr[U0]
    y[7] = x[7]
    y[8] = w + h * w_dot
    y[9] = x[9]
    y[10] = q + h * q_dot
    y[11] = x[11]
    y[12] = delta + h * ((c[0] - delta) / pr[TDELTA])
