"""Esso Osaka-type tanker of Van Berlekom & Goddard (1972) with shallow-water terms: 3-DOF.

Source: PythonVehicleSimulator @ c717e07 ``vehicles/tanker.py``; W. B. Van Berlekom and
T. A. Goddard (1972), *Maneuvering of large tankers*, Trans. SNAME 80, 264-298; Fossen (2021).
L = 304.8 m, T = 18.46 m; z = T/(h − T) for water depth h; the shallow-water Y_uvz is
−0.85 (1 − 0.8/z) only when z ≥ 0.8; the propeller speed n = rpm/60 is a constant.  Forces
come from the UNclamped rudder state; for propagation the state is clamped to ±30° and
δ̇ = δ_c − δ limited to ±5°/s.  Current through ν_r only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.core.jitable import INLINE
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet.base import TANKER, FleetVehicle
from marinesim.models.sixdof.fleet.nomoto_ships import rudder_rate
from marinesim.models.sixdof.pvs_vehicles import current_uv

__all__ = ["COEFFS", "build", "tanker_step"]

LENGTH, DRAFT = 304.8, 18.46

#: Non-dimensional coefficients (Van Berlekom & Goddard 1972), upstream names.
COEFFS = {
    "t": 0.22, "cun": 0.605, "cnn": 38.2, "Tuu": -0.00695, "Tun": -0.00063, "Tnn": 0.0000354,
    "m11": 1.050, "m22": 2.020, "m33": 0.1232, "d11": 2.020, "d22": -0.752, "d33": -0.231,
    "Xuuz": -0.0061, "YT": 0.04, "NT": -0.02, "Xuu": -0.0377, "Yvv": -2.400, "Nvr": -0.300,
    "Xvv": 0.3, "Yuv": -1.205, "Nuv": -0.451, "Xudotz": -0.05, "Yvdotz": -0.387,
    "Nrdotz": -0.0045, "Yurz": 0.182, "Nurz": -0.047, "Xvrz": 0.387, "Yvvz": -1.5,
    "Nvrz": -0.120, "Xccdd": -0.093, "Nuvz": -0.241, "Xccbd": 0.152, "Yccd": 0.208,
    "Nccd": -0.098, "Xvvzz": 0.0125, "Yccbbd": -2.16, "Nccbbd": 0.688, "Yccbbdz": -0.191,
    "Nccbbdz": 0.344,
}  # fmt: skip
_ORDER = tuple(COEFFS)
# parameter row: VC, BETA, L, N, Z, YUVZ, M11Z, M22Z, M33Z, DMAX, RMAX, then COEFFS in order
VC, BETA, L_, N_, Z_, YUVZ, M11, M22, M33, DMAX, RMAX = range(11)
C0 = 11
SIZE = C0 + len(_ORDER)


def _c(name: str) -> int:
    return C0 + _ORDER.index(name)


T_, CUN, CNN, TUU, TUN, TNN = (_c(k) for k in ("t", "cun", "cnn", "Tuu", "Tun", "Tnn"))
D11, D22, D33 = _c("d11"), _c("d22"), _c("d33")
XUUZ, YT, NT, XUU, YVV, NVR, XVV, YUV, NUV = (
    _c(k) for k in ("Xuuz", "YT", "NT", "Xuu", "Yvv", "Nvr", "Xvv", "Yuv", "Nuv")
)
YURZ, NURZ, XVRZ, YVVZ, NVRZ, XCCDD, NUVZ, XCCBD, YCCD, NCCD, XVVZZ = (
    _c(k)
    for k in ("Yurz", "Nurz", "Xvrz", "Yvvz", "Nvrz", "Xccdd", "Nuvz", "Xccbd", "Yccd", "Nccd",
              "Xvvzz")
)  # fmt: skip
YCCBBD, NCCBBD, YCCBBDZ, NCCBBDZ = (_c(k) for k in ("Yccbbd", "Nccbbd", "Yccbbdz", "Nccbbdz"))


def build(
    control_system: str = "stepInput",
    r: float = 0.0,
    V_current: float = 0.0,
    beta_current: float = 0.0,
    depth: float = 20.0,
    rpm: float = 80.0,
) -> FleetVehicle:
    """``tanker(controlSystem, r, V_current, beta_current, depth, rpm)``.

    r heading [deg], V_current [m/s], beta_current [deg], depth water depth [m] > 18.46,
    rpm shaft speed [rpm] in 10-90.
    """
    a = fa.check("tanker", {
        "control_system": control_system, "r": r, "V_current": V_current,
        "beta_current": beta_current, "depth": depth, "rpm": rpm,
    })  # fmt: skip
    d2r = math.pi / 180
    c: dict[str, Any] = {
        "D2R": d2r, "ref": a.r, "V_c": a.V_current, "beta_c": a.beta_current * d2r,
        "waterDdepth": a.depth, "n_c": a.rpm, "L": LENGTH, "T": DRAFT, "deltaMax": 30,
        "DdeltaMax": 5, "nMax": 90.0, "wn": 0.15, "zeta": 0.8, "r_max": 1.0 * math.pi / 180,
        "zeta_d": 1.0,
    }  # fmt: skip
    c["wn_d"] = c["wn"] / 5
    z = DRAFT / (a.depth - DRAFT)
    yuvz = -0.85 * (1.0 - 0.8 / z) if z >= 0.8 else 0.0
    k = COEFFS
    row = np.zeros(SIZE)
    row[[VC, BETA, L_, N_, Z_, YUVZ, M11, M22, M33, DMAX, RMAX]] = (
        c["V_c"], c["beta_c"], LENGTH, a.rpm / 60.0, z, yuvz,
        k["m11"] - k["Xudotz"] * z, k["m22"] - k["Yvdotz"] * z, k["m33"] - k["Nrdotz"] * z,
        c["deltaMax"] * math.pi / 180, c["DdeltaMax"] * math.pi / 180,
    )  # fmt: skip
    row[C0:] = [k[n] for n in _ORDER]
    ctor = (
        f"tanker({a.control_system!r}, {a.r}, {a.V_current}, {a.beta_current}, {a.depth}, {a.rpm})"
    )
    return FleetVehicle(
        vehicle="tanker", kind=TANKER, control_mode=a.control_system, args=a.model_dump(),
        consts=c, row=row[None, :], nu0=np.array([4.8, 0, 0, 0, 0, 0], float),
        controls=("delta_r",), labels=("Rudder angle (deg)",), units=("rad",),
        dof="surge, sway, yaw (3-DOF); z, phi, theta, w, p, q stay 0", constructor=ctor,
    )  # fmt: skip


@register_jitable(inline=INLINE)
def tanker_step(pr: Any, x: Any, c: Any, h: float, y: Any) -> None:
    """ν_{k+1}, δ_{k+1} of one tanker into ``y[6:13]`` (upstream sums, left to right)."""
    length = pr[L_]
    n = pr[N_]
    z = pr[Z_]
    delta = x[12]
    r = x[11]
    uc, vc = current_uv(pr[VC], pr[BETA], x[5])
    u_r = x[6] - uc
    v_r = x[7] - vc
    beta = v_r / u_r
    g_t = 1 / length * pr[TUU] * u_r**2 + pr[TUN] * u_r * n + length * pr[TNN] * abs(n) * n
    cc = math.sqrt(pr[CUN] * u_r * n + pr[CNN] * n**2)
    acc = abs(cc) * cc
    g_x = (
        1
        / length
        * (
            pr[XUU] * u_r**2
            + length * pr[D11] * v_r * r
            + pr[XVV] * v_r**2
            + pr[XCCDD] * acc * delta**2
            + pr[XCCBD] * acc * beta * delta
            + length * g_t * (1 - pr[T_])
            + pr[XUUZ] * u_r**2 * z
            + length * pr[XVRZ] * v_r * r * z
            + pr[XVVZZ] * v_r**2 * z**2
        )
    )
    g_y = (
        1
        / length
        * (
            pr[YUV] * u_r * v_r
            + pr[YVV] * abs(v_r) * v_r
            + pr[YCCD] * acc * delta
            + length * pr[D22] * u_r * r
            + pr[YCCBBD] * acc * abs(beta) * beta * abs(delta)
            + pr[YT] * g_t * length
            + length * pr[YURZ] * u_r * r * z
            + pr[YUVZ] * u_r * v_r * z
            + pr[YVVZ] * abs(v_r) * v_r * z
            + pr[YCCBBDZ] * acc * abs(beta) * beta * abs(delta) * z
        )
    )
    g_n = (
        pr[NUV] * u_r * v_r
        + length * pr[NVR] * abs(v_r) * r
        + pr[NCCD] * acc * delta
        + length * pr[D33] * u_r * r
        + pr[NCCBBD] * acc * abs(beta) * beta * abs(delta)
        + length * pr[NT] * g_t
        + length * pr[NURZ] * u_r * r * z
        + pr[NUVZ] * u_r * v_r * z
        + length * pr[NVRZ] * abs(v_r) * r * z
        + pr[NCCBBDZ] * acc * abs(beta) * beta * abs(delta) * z
    )
    delta_p, d_dot = rudder_rate(delta, c[0], pr[DMAX], pr[RMAX])
    y[6] = x[6] + h * (g_x / pr[M11])
    y[7] = x[7] + h * (g_y / pr[M22])
    y[8] = x[8]
    y[9] = x[9]
    y[10] = x[10]
    y[11] = r + h * (g_n / (length**2 * pr[M33]))
    y[12] = delta_p + h * d_dot
