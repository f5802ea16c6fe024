"""Frigate and ROV Zefakkel: 1-DOF Norrbin yaw models, T ṙ + n3 r³ + n1 r = K δ.

Source: PythonVehicleSimulator @ c717e07 ``vehicles/frigate.py``, ``vehicles/ROVzefakkel.py``;
Fossen (2021), Ch. 7 (Nomoto and Norrbin models); the Zefakkel data after Van Amerongen
(1982).  Only r is integrated; u = U (the constructor's speed) never changes and
v = w = p = q = 0.  K, T (frigate: also n3) are ``np.interp`` of the speed table at U, held
constant outside it.  Rudder δ [rad]: clamped to ±30°, δ̇ = δ_c − δ limited to ±10°/s, forward
Euler.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import NOMOTO, FleetVehicle

__all__ = ["FRIGATE_TABLE", "ROV_TABLE", "frigate", "nomoto_step", "rovzefakkel", "rudder_rate"]

K_, T_, N1, N3, DMAX, RMAX = 0, 1, 2, 3, 4, 5
SIZE = 6

#: Frigate speed table: U [m/s], K [1/s], T [s], n3 [s²].
FRIGATE_TABLE = {
    "U": (6.0, 9.0, 12.0), "K": (0.08, 0.18, 0.23), "T": (20.0, 27.0, 21.0), "n3": (0.4, 0.6, 0.3)
}  # fmt: skip
#: ROV Zefakkel speed table: U [m/s], K [1/s], T [s] (n3 = 0.4 s²).
ROV_TABLE = {
    "U": (2.0, 2.6, 3.6, 4.0, 5.0, 6.2),
    "K": (0.15, 0.19, 0.29, 0.37, 0.50, 0.83),
    "T": (33.0, 33.0, 33.0, 33.0, 31.0, 43.0),
}


def _interp(u: float, table: dict[str, tuple[float, ...]], key: str) -> float:
    return float(np.interp(u, np.array(table["U"], float), np.array(table[key], float)))


def _ship(name: str, a: Any, length: float, k: float, t: float, n3: float) -> FleetVehicle:
    c: dict[str, Any] = {
        "ref": a.r, "L": length, "deltaMax": 30, "DdeltaMax": 10, "n1": 1, "n3": n3, "K": k,
        "T": t, "wn": 0.4, "zeta": 1, "r_max": 1 * math.pi / 180, "zeta_d": 1,
    }  # fmt: skip
    c["wn_d"] = c["wn"] / 5
    row = np.array(
        [k, t, 1.0, n3, c["deltaMax"] * math.pi / 180, c["DdeltaMax"] * math.pi / 180], float
    )
    return FleetVehicle(
        vehicle=name, kind=NOMOTO, control_mode=a.control_system, args=a.model_dump(),
        consts=c, row=row[None, :], nu0=np.array([a.U, 0, 0, 0, 0, 0], float),
        controls=("delta",), labels=("Rudder angle (deg)",), units=("rad",),
        dof="yaw rate r only (u = U constant, v = w = p = q = 0)",
        constructor=f"{name}({a.control_system!r}, {a.U}, {a.r})",
    )  # fmt: skip


def frigate(control_system: str = "stepInput", U: float = 5.0, r: float = 0.0) -> FleetVehicle:
    """``frigate(controlSystem, U, r)``: U cruise speed [m/s] in 5-12, r heading [deg]."""
    a = fa.check("frigate", {"control_system": control_system, "U": U, "r": r})
    u = float(a.U)
    tb = FRIGATE_TABLE
    return _ship(
        "frigate", a, 100.0, _interp(u, tb, "K"), _interp(u, tb, "T"), _interp(u, tb, "n3")
    )


def rovzefakkel(control_system: str = "stepInput", U: float = 3.0, r: float = 0.0) -> FleetVehicle:
    """``ROVzefakkel(controlSystem, U, r)``: U cruise speed [m/s] in 1-7, r heading [deg]."""
    a = fa.check("ROVzefakkel", {"control_system": control_system, "U": U, "r": r})
    u = float(a.U)
    return _ship(
        "ROVzefakkel", a, 45.0, _interp(u, ROV_TABLE, "K"), _interp(u, ROV_TABLE, "T"), 0.4
    )


@register_jitable(inline=INLINE)
def rudder_rate(delta: float, delta_c: float, d_max: float, rate_max: float) -> tuple:
    """(δ clamped to ±d_max, δ̇ = δ_c − δ limited to ±rate_max): the unit-gain rudder servo."""
    if abs(delta) >= d_max:
        delta = math.copysign(d_max, delta)
    d_dot = delta_c - delta
    if abs(d_dot) >= rate_max:
        d_dot = math.copysign(rate_max, d_dot)
    return delta, d_dot


@register_jitable(inline=INLINE)
def nomoto_step(pr: Any, x: Any, c: Any, h: float, y: Any) -> None:
    """ν_{k+1}, δ_{k+1} of one Norrbin ship into ``y[6:13]``."""
    r = x[11]
    delta, d_dot = rudder_rate(x[12], c[0], pr[DMAX], pr[RMAX])
    r_dot = (1 / pr[T_]) * (pr[K_] * delta - pr[N3] * r**3 - pr[N1] * r)
    for j in range(6, 11):
        y[j] = x[j]
    y[11] = r + h * r_dot
    y[12] = delta + h * d_dot
