"""REMUS 100 and Otter USV built exactly as PythonVehicleSimulator builds them (batched).

Source: ``cybergalactic/PythonVehicleSimulator`` @ c717e07 (package 1.0.1),
``vehicles/remus100.py``, ``vehicles/otter.py`` and ``lib/gnc.py``; T. I. Fossen, *Handbook
of Marine Craft Hydrodynamics and Motion Control*, 2nd ed., Wiley 2021.  Written anew in
marinesim's batched form: every function takes a leading vehicle axis N (one vehicle is
N = 1) and returns new arrays; nothing is mutated (upstream ``remus100.dynamics`` mutates the
caller's ν in place; we do not).

:func:`remus100` and :func:`otter` take the upstream constructors' arguments and return
frozen parameter objects; :func:`dynamics` is upstream's
``vehicle.dynamics(eta, nu, u_actual, u_control, sampleTime)`` (forward Euler of ν and of the
actuator lags) and :func:`attitude_euler` its ``attitudeEuler``.  The PythonVehicleSimulator
loop is semi-implicit: η_{k+1} uses ν_{k+1} (see :func:`marinesim.models.integrate.pvs_step`).

Controllers (REMUS depth/heading autopilot, Otter heading autopilot, step inputs) are in
:mod:`marinesim.control.autopilots`.

Differences from upstream, on purpose: an unknown control system raises ConfigError (upstream
silently switches to ``stepInput``); out-of-range REMUS set-points raise ConfigError instead of
``sys.exit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, NumericalError
from marinesim.models import hydro

__all__ = [
    "OTTER_MODES",
    "REMUS_MODES",
    "OtterParams",
    "Remus100Params",
    "attitude_euler",
    "dynamics",
    "guard",
    "otter",
    "otter_dynamics",
    "otter_kernel",
    "remus100",
    "remus100_dynamics",
    "remus100_kernel",
    "step_batch",
    "step_c",
]

F64 = NDArray[np.float64]

REMUS_MODES = ("stepInput", "depthHeadingAutopilot")
OTTER_MODES = ("stepInput", "headingAutopilot")

# REMUS 100 propeller (Allen et al. 2000; Wageningen B-series linearised in J_a)
_D_PROP = 0.14
_T_PROP = 0.1
_JA_MAX = 0.6632
_KT_0, _KQ_0 = 0.4566, 0.0700
_KT_MAX, _KQ_MAX = 0.1798, 0.0312
#: C_A entries PythonVehicleSimulator's REMUS 100 sets to zero (pitch and yaw Munk terms).
REMUS_CA_ZERO = ((4, 0), (0, 4), (4, 2), (2, 4), (5, 0), (0, 5), (5, 1), (1, 5))


@dataclass(frozen=True)
class Remus100Params:
    """Constants of ``remus100(...)`` right after construction (units SI, angles rad).

    Attribute names follow marinesim style; :meth:`constants` returns them under the
    upstream attribute names (``MRB``, ``Minv``, ``w_roll`` ...).
    """

    control_mode: str
    ref_z: float
    ref_psi: float  # deg, as upstream stores it
    ref_n: float
    V_c: float
    beta_c: float  # rad
    rho: float
    L: float
    diam: float
    deltaMax_r: float
    deltaMax_s: float
    nMax: float
    T_delta: float
    T_n: float
    S: float
    r_bg: F64
    r_bb: F64
    CD_0: float
    MRB: F64
    W: float
    B: float
    MA: F64
    M: F64
    Minv: F64
    w_roll: float
    w_pitch: float
    CL_delta_r: float
    A_r: float
    x_r: float
    CL_delta_s: float
    A_s: float
    x_s: float
    T_surge: float
    T_sway: float
    T_heave: float
    zeta_roll: float
    zeta_pitch: float
    T_yaw: float
    K_nomoto: float
    T_nomoto: float
    name: str = "Remus 100 cylinder-shaped AUV (PythonVehicleSimulator)"
    controls: tuple[str, ...] = ("delta_r", "delta_s", "n")
    constructor: str = ""

    kind = "remus100"

    def constants(self) -> dict[str, Any]:
        """Numeric constants under their upstream attribute names."""
        return _numeric_attrs(self)


@dataclass(frozen=True)
class OtterParams:
    """Constants of ``otter(...)`` right after construction (units SI, angles rad)."""

    control_mode: str
    ref: float  # deg
    V_c: float
    beta_c: float  # rad
    tauX: float
    g: float
    T_n: float
    L: float
    B: float
    mp: float
    m_total: float
    rp: F64
    rg: F64
    S_rg: F64
    H_rg: F64
    S_rp: F64
    B_pont: float
    T: float
    Ig: F64
    l1: float
    l2: float
    k_pos: float
    k_neg: float
    n_max: float
    n_min: float
    MA: F64
    M: F64
    Minv: F64
    G: F64
    D: F64
    Binv: F64
    ca_zero: tuple[tuple[int, int], ...] = ()
    name: str = "Otter USV (PythonVehicleSimulator)"
    controls: tuple[str, ...] = ("n1", "n2")
    constructor: str = ""

    kind = "otter"

    def constants(self) -> dict[str, Any]:
        """Numeric constants under their upstream attribute names."""
        return _numeric_attrs(self)


def _numeric_attrs(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.__dict__.items():
        if isinstance(v, np.ndarray) or isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v
    return out


def _check_mode(mode: str, modes: tuple[str, ...], vehicle: str) -> str:
    if mode not in modes:
        from marinesim.core.errors import UnknownNameError

        raise UnknownNameError(f"{vehicle} control system", mode, modes, param="controlSystem")
    return mode


def remus100(
    control_system: str = "stepInput",
    r_z: float = 0,
    r_psi: float = 0,
    r_rpm: float = 0,
    V_current: float = 0,
    beta_current: float = 0,
) -> Remus100Params:
    """Build the REMUS 100 as ``remus100(controlSystem, r_z, r_psi, r_rpm, V_current, beta_current)``.

    Source: PythonVehicleSimulator ``vehicles/remus100.py`` (Fossen 2021, §8.4.2; Allen et al.
    2000).  Mass from the spheroid formula (31.029 kg), Lamb's k-factors for added mass.

    Parameters
    ----------
    control_system : {"stepInput", "depthHeadingAutopilot"}
    r_z : float
        Desired depth [m], 0 … 100.
    r_psi : float
        Desired yaw angle [deg].
    r_rpm : float
        Propeller revolution command [rpm], 0 … 1525.
    V_current : float
        Current speed [m/s].
    beta_current : float
        Current direction [deg] (towards, from north, clockwise).

    Returns
    -------
    Remus100Params

    Raises
    ------
    ConfigError
        Unknown control system or out-of-range set-points.
    """
    _check_mode(control_system, REMUS_MODES, "remus100")
    d2r = math.pi / 180
    rho = 1026
    g = 9.81
    n_max = 1525
    if r_rpm < 0.0 or r_rpm > n_max:
        raise ConfigError(
            f"the RPM value should be in the interval 0-{n_max}, got {r_rpm}", param="r_rpm"
        )
    if r_z > 100.0 or r_z < 0.0:
        raise ConfigError(f"desired depth must be between 0-100 m, got {r_z}", param="r_z")
    length, diam = 1.6, 0.19
    s = 0.7 * length * diam
    a = length / 2
    b = diam / 2
    r_bg = np.array([0, 0, 0.02], float)
    r_bb = np.array([0, 0, 0], float)
    cd = 0.42
    cd_0 = cd * math.pi * b**2 / s
    m = 4 / 3 * math.pi * rho * a * b**2
    ix = (2 / 5) * m * b**2
    iy = (1 / 5) * m * (a**2 + b**2)
    iz = iy
    mrb_cg = np.diag([m, m, m, ix, iy, iz])
    h_rg = hydro.hmtrx(r_bg)
    mrb = h_rg.T @ mrb_cg @ h_rg
    w = m * g
    bb = w
    ma_44 = 0.3 * ix
    e = math.sqrt(1 - (b / a) ** 2)
    alpha_0 = (2 * (1 - e**2) / pow(e, 3)) * (0.5 * math.log((1 + e) / (1 - e)) - e)
    beta_0 = 1 / (e**2) - (1 - e**2) / (2 * pow(e, 3)) * math.log((1 + e) / (1 - e))
    k1 = alpha_0 / (2 - alpha_0)
    k2 = beta_0 / (2 - beta_0)
    k_prime = (
        pow(e, 4) * (beta_0 - alpha_0) / ((2 - e**2) * (2 * e**2 - (2 - e**2) * (beta_0 - alpha_0)))
    )
    ma = np.diag([m * k1, m * k2, m * k2, ma_44, k_prime * iy, k_prime * iy])
    mm = mrb + ma
    minv = np.linalg.inv(mm)
    w_roll = math.sqrt(w * (r_bg[2] - r_bb[2]) / mm[3][3])
    w_pitch = math.sqrt(w * (r_bg[2] - r_bb[2]) / mm[4][4])
    s_fin = 0.00665
    t_yaw = 1
    ctor = f"remus100({control_system!r}, {r_z}, {r_psi}, {r_rpm}, {V_current}, {beta_current})"
    return Remus100Params(
        control_mode=control_system,
        ref_z=r_z,
        ref_psi=r_psi,
        ref_n=r_rpm,
        V_c=V_current,
        beta_c=beta_current * d2r,
        rho=rho,
        L=length,
        diam=diam,
        deltaMax_r=15 * d2r,
        deltaMax_s=15 * d2r,
        nMax=n_max,
        T_delta=0.1,
        T_n=1.0,
        S=s,
        r_bg=r_bg,
        r_bb=r_bb,
        CD_0=cd_0,
        MRB=mrb,
        W=w,
        B=bb,
        MA=ma,
        M=mm,
        Minv=minv,
        w_roll=w_roll,
        w_pitch=w_pitch,
        CL_delta_r=0.5,
        A_r=2 * s_fin,
        x_r=-a,
        CL_delta_s=0.7,
        A_s=2 * s_fin,
        x_s=-a,
        T_surge=20,
        T_sway=20,
        T_heave=20,
        zeta_roll=0.3,
        zeta_pitch=0.8,
        T_yaw=t_yaw,
        K_nomoto=5.0 / 20.0,
        T_nomoto=t_yaw,
        constructor=ctor,
    )


def otter(
    control_system: str = "stepInput",
    r: float = 0,
    V_current: float = 0,
    beta_current: float = 0,
    tau_X: float = 120,
) -> OtterParams:
    """Build the Otter USV as ``otter(controlSystem, r, V_current, beta_current, tau_X)``.

    Source: PythonVehicleSimulator ``vehicles/otter.py`` (Maritime Robotics Otter; Fossen 2021,
    Ch. 3, 4, 6): hull 55 kg + 25 kg payload, two pontoons, linear hydrostatics G about CO.

    Parameters
    ----------
    control_system : {"stepInput", "headingAutopilot"}
    r : float
        Desired yaw angle [deg].
    V_current : float
        Current speed [m/s].
    beta_current : float
        Current direction [deg].
    tau_X : float
        Surge force, pilot input [N].

    Returns
    -------
    OtterParams
    """
    _check_mode(control_system, OTTER_MODES, "otter")
    d2r = math.pi / 180
    g = 9.81
    rho = 1025
    t_n = 0.1
    length, beam = 2.0, 1.08
    m = 55.0
    mp = 25.0
    m_total = m + mp
    rp = np.array([0.05, 0, -0.35], float)
    rg = np.array([0.2, 0, -0.2], float)
    rg = (m * rg + mp * rp) / (m + mp)
    s_rg = hydro.smtrx(rg)
    h_rg = hydro.hmtrx(rg)
    s_rp = hydro.smtrx(rp)
    r44, r55, r66 = 0.4 * beam, 0.25 * length, 0.25 * length
    t_sway, t_yaw = 1.0, 1.0
    umax = 6 * 0.5144
    b_pont, y_pont, cw_pont, cb_pont = 0.25, 0.395, 0.75, 0.4
    nabla = (m + mp) / rho
    draft = nabla / (2 * cb_pont * b_pont * length)
    ig_cg = m * np.diag(np.array([r44**2, r55**2, r66**2]))
    ig = ig_cg - m * s_rg @ s_rg - mp * s_rp @ s_rp
    l1, l2 = -y_pont, y_pont
    k_pos = 0.02216 / 2
    k_neg = 0.01289 / 2
    n_max = math.sqrt((0.5 * 24.4 * g) / k_pos)
    n_min = -math.sqrt((0.5 * 13.6 * g) / k_neg)
    mrb_cg = np.zeros((6, 6))
    mrb_cg[0:3, 0:3] = (m + mp) * np.identity(3)
    mrb_cg[3:6, 3:6] = ig
    mrb = h_rg.T @ mrb_cg @ h_rg
    ma = -np.diag([-0.1 * m, -1.5 * m, -1.0 * m, -0.2 * ig[0, 0], -0.8 * ig[1, 1], -1.7 * ig[2, 2]])
    mm = mrb + ma
    minv = np.linalg.inv(mm)
    aw_pont = cw_pont * length * b_pont
    i_t = (
        2 * (1 / 12) * length * b_pont**3 * (6 * cw_pont**3 / ((1 + cw_pont) * (1 + 2 * cw_pont)))
        + 2 * aw_pont * y_pont**2
    )
    i_l = 0.8 * 2 * (1 / 12) * b_pont * length**3
    kb = (1 / 3) * (5 * draft / 2 - 0.5 * nabla / (length * b_pont))
    bm_t = i_t / nabla
    bm_l = i_l / nabla
    kg = draft - rg[2]
    gm_t = kb + bm_t - kg
    gm_l = kb + bm_l - kg
    g33 = rho * g * (2 * aw_pont)
    g44 = rho * g * nabla * gm_t
    g55 = rho * g * nabla * gm_l
    g_cf = np.diag([0, 0, g33, g44, g55, 0])
    h = hydro.hmtrx(np.array([-0.2, 0.0, 0.0]))
    gg = h.T @ g_cf @ h
    w3 = math.sqrt(g33 / mm[2, 2])
    w4 = math.sqrt(g44 / mm[3, 3])
    w5 = math.sqrt(g55 / mm[4, 4])
    xu = -24.4 * g / umax
    yv = -mm[1, 1] / t_sway
    zw = -2 * 0.3 * w3 * mm[2, 2]
    kp = -2 * 0.2 * w4 * mm[3, 3]
    mq = -2 * 0.4 * w5 * mm[4, 4]
    nr = -mm[5, 5] / t_yaw
    dd = -np.diag([xu, yv, zw, kp, mq, nr])
    bmat = k_pos * np.array([[1, 1], [-l1, -l2]])
    binv = np.linalg.inv(bmat)
    ctor = f"otter({control_system!r}, {r}, {V_current}, {beta_current}, {tau_X})"
    return OtterParams(
        control_mode=control_system,
        ref=r,
        V_c=V_current,
        beta_c=beta_current * d2r,
        tauX=tau_X,
        g=g,
        T_n=t_n,
        L=length,
        B=beam,
        mp=mp,
        m_total=m_total,
        rp=rp,
        rg=rg,
        S_rg=s_rg,
        H_rg=h_rg,
        S_rp=s_rp,
        B_pont=b_pont,
        T=draft,
        Ig=ig,
        l1=l1,
        l2=l2,
        k_pos=k_pos,
        k_neg=k_neg,
        n_max=n_max,
        n_min=n_min,
        MA=ma,
        M=mm,
        Minv=minv,
        G=gg,
        D=dd,
        Binv=binv,
        constructor=ctor,
    )


def _k(p: Any) -> Any:
    """Constants of ``p`` prepared once for the kernels (Python floats, sparse rows)."""
    k = p.__dict__.get("_kernel_consts")
    if k is not None:
        return k
    ns: dict[str, Any] = {}
    ns["Minv"] = hydro.sparse_rows(p.Minv)
    ns["MAs"] = hydro.sparse_rows(0.5 * (p.MA + p.MA.T))
    if isinstance(p, Remus100Params):
        mm = p.M
        ns["C"] = hydro.add_forms(
            hydro.coriolis_form(p.MRB), hydro.coriolis_form(p.MA, REMUS_CA_ZERO)
        )
        ns["d"] = (
            float(mm[0][0] / p.T_surge),
            float(mm[1][1] / p.T_sway),
            float(mm[2][2] / p.T_heave),
            float(mm[3][3] * 2 * p.zeta_roll * p.w_roll),
            float(mm[4][4] * 2 * p.zeta_pitch * p.w_pitch),
            float(mm[5][5] / p.T_yaw),
        )
        ns["r_bg"] = tuple(p.r_bg.tolist())
        ns["r_bb"] = tuple(p.r_bb.tolist())
        ns["cf"] = hydro.cross_flow_consts(p.L, p.diam, p.diam)
        ns["k_r"] = -0.5 * p.rho * p.A_r * p.CL_delta_r
        ns["k_s"] = -0.5 * p.rho * p.A_s * p.CL_delta_s
        ns["ld"] = hydro.lift_drag_consts(p.diam, p.S, p.CD_0)
    else:
        ns["rg"] = tuple(p.rg.tolist())
        ns["Ig"] = hydro.sparse_rows(p.Ig)
        ns["S_rp"] = hydro.sparse_rows(p.S_rp)
        ns["D"] = hydro.sparse_rows(p.D)
        ns["D55"] = float(p.D[5, 5])
        ns["G"] = hydro.sparse_rows(p.G)
        ns["cf"] = hydro.cross_flow_consts(p.L, p.B_pont, p.T)
    k = type("KernelConsts", (), ns)
    p.__dict__["_kernel_consts"] = k
    return k


def _current(o: Any, p: Any, psi: Any) -> tuple[Any, Any]:
    """Body components of a constant current, u_c = V_c cos(β_c − ψ), v_c = V_c sin(β_c − ψ)."""
    if p.V_c == 0:
        return 0.0, 0.0
    c, s = o.cos_sin(p.beta_c - psi)
    return p.V_c * c, p.V_c * s


def remus100_kernel(
    p: Remus100Params,
    o: Any,
    eta: tuple,
    nu: tuple,
    act: tuple,
    cmd: tuple,
    h: float,
    trig: tuple | None = None,
) -> tuple[tuple, tuple]:
    """Component-wise REMUS 100 ``dynamics`` (upstream operation order) for backend ``o``.

    Parameters
    ----------
    p : Remus100Params
    o : hydro.NumpyOps or hydro.FloatOps
        Backend: components are (N,) arrays or floats (one vehicle).
    eta, nu : tuple of 6 components
    act, cmd : tuple of 3 components
        Actual and commanded (δ_r [rad], δ_s [rad], n [rpm]).
    h : float
        Sample time [s].
    trig : tuple, optional
        :func:`hydro.euler_trig` of ``eta`` (computed when absent).

    Returns
    -------
    nu_next : tuple of 6 components
    act_next : tuple of 3 components
    """
    if trig is None:
        trig = hydro.euler_trig(o, eta)
    u, v, w, pp, q, r = nu
    still = p.V_c == 0
    u_c, v_c = _current(o, p, eta[5])
    ur = u if still else u - u_c
    vr = v if still else v - v_c
    nu_r = (ur, vr, w, pp, q, r)
    alpha = o.atan2(w, ur)
    ur2, vr2, w2 = ur**2, vr**2, w**2
    h2 = ur2 + vr2
    u_rel = o.sqrt(h2 + w2)
    uu = u_rel if still else o.sqrt(u**2 + v**2 + w2)  # without current ν_r = ν exactly
    u_rh = o.sqrt(h2)
    u_rv = o.sqrt(ur2 + w2)
    # cos α, sin α of α = atan2(w_r, u_r) without two more trig calls
    cs_alpha = (o.div_or(ur, u_rv, 1.0), o.div_or(w, u_rv, 0.0))

    delta_r, delta_s, n = act
    # upstream: if |x| >= max: x = sign(x)·max — the same as limiting to [−max, max]
    delta_r = o.clip(delta_r, -p.deltaMax_r, p.deltaMax_r)
    delta_s = o.clip(delta_s, -p.deltaMax_s, p.deltaMax_s)
    n = o.clip(n, -p.nMax, p.nMax)

    n_rps = n / 60
    va = 0.944 * uu
    an = o.fabs(n_rps)
    fwd = n_rps > 0
    # forward thrust adds the advance-ratio term; reverse (braking) has only the bollard term
    ja_an = va / _D_PROP
    ja_an *= an
    ja_an *= fwd
    # ρD⁴(K_T0·|n|n + c·J_a|n|) and ρD⁵(K_Q0·|n|n + c·J_a|n|), accumulated in place
    x_prop = _KT_0 * an * n_rps
    x_prop += (_KT_MAX - _KT_0) / _JA_MAX * ja_an
    x_prop *= p.rho * pow(_D_PROP, 4)
    k_prop = _KQ_0 * an * n_rps
    k_prop += (_KQ_MAX - _KQ_0) / _JA_MAX * ja_an
    k_prop *= p.rho * pow(_D_PROP, 5)

    kc = _k(p)
    c_nu = o.quad(kc.C, nu_r)  # (C_RB + C_A with the Munk terms removed) ν_r
    decay = o.exp(-3 * u_rel)
    d0, d1, d2, d3, d4, d5 = kc.d
    d = (d0 * decay, d1 * decay, d2, d3, d4, d5)
    x_ld, z_ld = hydro.force_lift_drag_c(o, kc.ld, alpha, u_rel, cs_alpha)
    y_cf, n_cf = hydro.cross_flow_drag_c(o, kc.cf, vr, r)
    gv = hydro.g_vect_c(o, p.W, p.B, eta[4], eta[3], kc.r_bg, kc.r_bb, trig)

    # fin forces ½ρ U² A C_Lδ δ (upstream squares the square roots U_rh, U_rv)
    y_r = u_rh**2  # rudder sway force k_r·U_rh²·δ_r
    y_r *= kc.k_r
    y_r *= delta_r
    z_s = u_rv**2  # stern-plane heave force k_s·U_rv²·δ_s
    z_s *= kc.k_s
    z_s *= delta_s
    x_r = y_r * delta_r  # rudder drag
    x_s = z_s * delta_s  # stern-plane drag
    # τ_i = forces − (c_i + d_i·ν_r,i) − g_i, row by row, accumulated in place into fresh
    # temporaries (numpy does not elide temporaries of this size; the bits are those of
    # the plain left-to-right expression)
    t0 = (1 - _T_PROP) * x_prop
    t0 += x_r
    t0 += x_s
    t0 += x_ld
    e0 = d[0] * ur
    e0 += c_nu[0]
    t0 -= e0
    t0 -= gv[0]
    t1 = y_r + y_cf
    e1 = d[1] * vr
    e1 += c_nu[1]
    t1 -= e1
    t1 -= gv[1]
    t2 = z_s + z_ld
    e2 = d[2] * w
    e2 += c_nu[2]
    t2 -= e2
    t2 -= gv[2]
    t3 = k_prop / 10
    e3 = d[3] * pp
    e3 += c_nu[3]
    t3 -= e3
    t3 -= gv[3]
    t4 = -1 * p.x_s * z_s
    e4 = d[4] * q
    e4 += c_nu[4]
    t4 -= e4
    t4 -= gv[4]
    t5 = p.x_r * y_r
    t5 += n_cf
    e5 = d[5] * r
    e5 += c_nu[5]
    t5 -= e5
    t5 -= gv[5]
    tau_sum = (t0, t1, t2, t3, t4, t5)
    acc = hydro.mv(kc.Minv, tau_sum)
    if still:
        a0, a1 = acc[0], acc[1]
    else:
        a0, a1 = r * v_c + acc[0], -r * u_c + acc[1]
    # ν_{k+1} = ν_k + h·ν̇ and the lags u + h·(c − u)/T, in place into the fresh h·(…)
    n0 = h * a0
    n0 += u
    n1 = h * a1
    n1 += v
    n2 = h * acc[2]
    n2 += w
    n3 = h * acc[3]
    n3 += pp
    n4 = h * acc[4]
    n4 += q
    n5 = h * acc[5]
    n5 += r
    nu_next = (n0, n1, n2, n3, n4, n5)
    l0 = (cmd[0] - delta_r) / p.T_delta
    l0 *= h
    l0 += delta_r
    l1 = (cmd[1] - delta_s) / p.T_delta
    l1 *= h
    l1 += delta_s
    l2 = (cmd[2] - n) / p.T_n
    l2 *= h
    l2 += n
    act_next = (l0, l1, l2)
    return nu_next, act_next


def otter_kernel(
    p: OtterParams,
    o: Any,
    eta: tuple,
    nu: tuple,
    act: tuple,
    cmd: tuple,
    h: float,
    trig: tuple | None = None,
) -> tuple[tuple, tuple]:
    """Component-wise Otter ``dynamics`` (upstream operation order) for backend ``o``.

    Parameters
    ----------
    p : OtterParams
    o : hydro.NumpyOps or hydro.FloatOps
    eta, nu : tuple of 6 components
    act, cmd : tuple of 2 components
        Actual and commanded shaft speeds n1, n2 [rad/s].
    h : float
        Sample time [s].
    trig : tuple, optional
        :func:`hydro.euler_trig` of ``eta`` (computed when absent).

    Returns
    -------
    nu_next : tuple of 6 components
    act_next : tuple of 2 components
    """
    if trig is None:
        trig = hydro.euler_trig(o, eta)
    u, v, w, pp, q, r = nu
    u_c, v_c = _current(o, p, eta[5])
    ur = u - u_c
    vr = v - v_c
    nu_r = (ur, vr, w, pp, q, r)

    # C_RB from the CG form (ω of ν) applied to ν_r, then C_A(ν_r)ν_r
    kc = _k(p)
    rg = kc.rg
    omega = (pp, q, r)
    x2 = nu_r[3:6]
    rx = hydro.cross_c(rg, x2)
    y1 = (ur - rx[0], vr - rx[1], w - rx[2])
    z1 = tuple(p.m_total * c for c in hydro.cross_c(omega, y1))
    z2 = tuple(-c for c in hydro.cross_c(hydro.mv(kc.Ig, omega), x2))
    rz = hydro.cross_c(rg, z1)
    crb = (z1[0], z1[1], z1[2], rz[0] + z2[0], rz[1] + z2[1], rz[2] + z2[2])
    ca = hydro.coriolis_c(kc.MAs, nu_r, p.ca_zero)

    cphi, sphi, cth, sth = trig[0:4]
    fz = p.mp * p.g
    f_pay = (-sth * fz, cth * sphi * fz, cth * cphi * fz)
    m_pay = hydro.mv(kc.S_rp, f_pay)
    g_0 = f_pay + m_pay

    n1 = o.clip(act[0], p.n_min, p.n_max)
    n2 = o.clip(act[1], p.n_min, p.n_max)
    t1 = o.where(n1 > 0, p.k_pos * n1 * o.fabs(n1), p.k_neg * n1 * o.fabs(n1))
    t2 = o.where(n2 > 0, p.k_pos * n2 * o.fabs(n2), p.k_neg * n2 * o.fabs(n2))
    tau = (t1 + t2, 0.0, 0.0, 0.0, 0.0, -p.l1 * t1 - p.l2 * t2)
    dnu = hydro.mv(kc.D, nu_r)
    damp = [-c for c in dnu]
    damp[5] = damp[5] - 10 * kc.D55 * o.fabs(r) * r
    y_cf, n_cf = hydro.cross_flow_drag_c(o, kc.cf, vr, r)
    cf = (0.0, y_cf, 0.0, 0.0, 0.0, n_cf)
    geta = hydro.mv(kc.G, eta)
    sum_tau = tuple(
        tau[i] + damp[i] + cf[i] - (crb[i] + ca[i]) - geta[i] + g_0[i] for i in range(6)
    )
    acc = hydro.mv(kc.Minv, sum_tau)
    nu_next = (
        u + h * (r * v_c + acc[0]),
        v + h * (-r * u_c + acc[1]),
        w + h * acc[2],
        pp + h * acc[3],
        q + h * acc[4],
        r + h * acc[5],
    )
    act_next = (n1 + h * ((cmd[0] - n1) / p.T_n), n2 + h * ((cmd[1] - n2) / p.T_n))
    return nu_next, act_next


def step_c(
    p: Remus100Params | OtterParams, o: Any, eta: tuple, nu: tuple, act: tuple, cmd: tuple, h: float
) -> tuple[tuple, tuple, tuple]:
    """One loop step on components: dynamics, then η_{k+1} = η_k + h J(η_k) ν_{k+1}.

    Parameters
    ----------
    p : Remus100Params or OtterParams
    o : hydro.NumpyOps or hydro.FloatOps
        Backend ((N,) arrays or floats for one vehicle).
    eta, nu : tuple of 6 components
        [m, rad], [m/s, rad/s].
    act, cmd : tuple of components
        Actual and commanded actuator values (vehicle units).
    h : float
        Sample time [s].

    Returns
    -------
    eta_next, nu_next, act_next : tuples of components
    """
    kernel = remus100_kernel if isinstance(p, Remus100Params) else otter_kernel
    trig = hydro.euler_trig(o, eta)
    nu_next, act_next = kernel(p, o, eta, nu, act, cmd, h, trig)
    ed = hydro.euler_kinematics_c(o, eta, nu_next, trig)
    eta_next = []
    for i in range(6):
        e = h * ed[i]  # η + h·η̇, in place into the fresh product (same bits)
        e += eta[i]
        eta_next.append(e)
    return tuple(eta_next), nu_next, act_next


def guard(
    o: Any,
    old: tuple[tuple, tuple, tuple],
    new: tuple[tuple, tuple, tuple],
    alive: Any,
    t: float,
    max_speed: float = 50.0,
    max_rate: float = 50.0,
) -> tuple[tuple[tuple, tuple, tuple], Any, list[str]]:
    """Stop vehicles whose new state is non-finite or beyond the physical bounds.

    Parameters
    ----------
    o : hydro.NumpyOps or hydro.FloatOps
    old, new : (eta, nu, act) component tuples
        State before and after the step.
    alive : ndarray of bool, shape (N,), or bool
        Vehicles still running.
    t : float
        Time of the new state [s].
    max_speed, max_rate : float
        Bounds on |ν_lin| [m/s] and |ω| [rad/s].

    Returns
    -------
    state : (eta, nu, act)
        The new state, with stopped vehicles frozen at their last valid state.
    alive : ndarray of bool or bool
    events : list of str
        A NumericalError text per vehicle stopped in this step (index and time).
    """
    eta, nu, act = new
    if o is hydro.PY:
        sp2 = nu[0] ** 2 + nu[1] ** 2 + nu[2] ** 2
        rt2 = nu[3] ** 2 + nu[4] ** 2 + nu[5] ** 2
        total = sum(eta) + sum(nu) + sum(act)
        ok = math.isfinite(total) and sp2 <= max_speed**2 and rt2 <= max_rate**2
        if ok or not alive:
            return (new if alive else old), alive, []
        msg = _why(math.isfinite(total), math.sqrt(sp2), math.sqrt(rt2), max_speed, max_rate)
        return old, False, [str(NumericalError(msg, entity="vehicle[0]", t=t))]
    sp2 = nu[0] ** 2
    sp2 += nu[1] ** 2
    sp2 += nu[2] ** 2
    rt2 = nu[3] ** 2
    rt2 += nu[4] ** 2
    rt2 += nu[5] ** 2
    total = eta[0] + eta[1]
    for c in (*eta[2:], *act):
        total += c
    # a non-finite ν fails the bound comparisons (NaN and inf compare False), so only η and
    # the actuator states need the explicit finiteness test
    ok = (sp2 <= max_speed**2) & (rt2 <= max_rate**2) & np.isfinite(total)
    alive_new = alive & ok
    if alive_new.all():
        return new, alive_new, []
    newly = np.flatnonzero(alive & ~ok)
    out = tuple(
        tuple(np.where(alive_new, n_c, o_c) for n_c, o_c in zip(n_part, o_part, strict=True))
        for n_part, o_part in zip(new, old, strict=True)
    )
    events = [
        str(
            NumericalError(
                _why(
                    all(
                        bool(np.isfinite(c if np.ndim(c) == 0 else c[i]))
                        for part in new
                        for c in part
                    ),
                    float(np.sqrt(sp2[i])),
                    float(np.sqrt(rt2[i])),
                    max_speed,
                    max_rate,
                ),
                entity=f"vehicle[{i}]",
                t=t,
            )
        )
        for i in newly
    ]
    return out, alive_new, events  # type: ignore[return-value]


def _why(finite: bool, speed: float, rate: float, max_speed: float, max_rate: float) -> str:
    if not finite:
        why = "state became non-finite"
    elif speed > max_speed:
        why = f"speed {speed:.4g} m/s exceeds {max_speed:g} m/s"
    else:
        why = f"angular rate {rate:.4g} rad/s exceeds {max_rate:g} rad/s"
    return f"diverged: {why}; vehicle stopped"


def step_batch(
    p: Remus100Params | OtterParams,
    state: tuple[tuple, tuple, tuple],
    cmd: tuple,
    h: float,
    alive: NDArray[np.bool_],
    t: float,
    *,
    chunk: int = 65536,
) -> tuple[tuple[tuple, tuple, tuple], NDArray[np.bool_], list[str]]:
    """One guarded loop step of N vehicles (:func:`step_c` then :func:`guard`), in slices.

    The numpy kernels create a few hundred temporary (N,) arrays per step; slicing a very
    large batch into ``chunk`` vehicles bounds that memory.  (Measured at N = 10⁴: smaller
    slices were slower — Python overhead per slice outweighs cache effects — hence the large
    default.)  Results equal the unsliced step element by element.

    Parameters
    ----------
    p : Remus100Params or OtterParams
    state : (eta, nu, act)
        Component tuples of (N,) arrays.
    cmd : tuple of (N,) arrays
        Commands.
    h : float
        Sample time [s].
    alive : ndarray of bool, shape (N,)
    t : float
        Time of the new state [s].
    chunk : int
        Vehicles per slice.

    Returns
    -------
    state, alive, events
        As :func:`guard` (event indices refer to the whole batch).
    """
    n = alive.shape[0]
    if n <= chunk:
        new = step_c(p, hydro.NP, *state, cmd, h)
        return guard(hydro.NP, state, new, alive, t)
    out = tuple(tuple(np.empty(n) for _ in part) for part in state)
    alive_out = np.empty(n, dtype=bool)
    events: list[str] = []
    for lo in range(0, n, chunk):
        sl = slice(lo, min(n, lo + chunk))
        part = tuple(tuple(c[sl] for c in comp) for comp in state)
        new = step_c(p, hydro.NP, *part, tuple(c[sl] for c in cmd), h)
        res, alive_out[sl], ev = guard(hydro.NP, part, new, alive[sl], t)
        for dst, src in zip(out, res, strict=True):
            for d, s in zip(dst, src, strict=True):
                d[sl] = s
        for e in ev:  # re-index "vehicle[i]" to the batch
            i = int(e.split("[", 1)[1].split("]", 1)[0])
            events.append(e.replace(f"vehicle[{i}]", f"vehicle[{lo + i}]", 1))
    return out, alive_out, events


def _cols(a: F64) -> tuple:
    return tuple(a[:, i] for i in range(a.shape[1]))


def remus100_dynamics(
    p: Remus100Params, eta: F64, nu: F64, u_actual: F64, u_control: F64, h: float
) -> tuple[F64, F64]:
    """One forward-Euler step of ν and the actuator lags of the REMUS 100 (upstream order).

    Parameters
    ----------
    p : Remus100Params
    eta : ndarray, shape (N, 6)
        [x, y, z, φ, θ, ψ] [m, rad].
    nu : ndarray, shape (N, 6)
        [u, v, w, p, q, r] [m/s, rad/s].
    u_actual : ndarray, shape (N, 3)
        Actual rudder δ_r [rad], stern plane δ_s [rad], propeller n [rpm].
    u_control : ndarray, shape (N, 3)
        Commanded δ_r, δ_s [rad], n [rpm].
    h : float
        Sample time [s].

    Returns
    -------
    nu_next : ndarray, shape (N, 6)
    u_actual_next : ndarray, shape (N, 3)
    """
    nn, aa = remus100_kernel(
        p, hydro.NP, _cols(eta), _cols(nu), _cols(u_actual), _cols(u_control), h
    )
    return _stack(nn, eta.shape[0]), _stack(aa, eta.shape[0])


def _stack(comps: tuple, n: int) -> F64:
    return np.stack([np.broadcast_to(c, (n,)) for c in comps], axis=1)


def otter_dynamics(
    p: OtterParams, eta: F64, nu: F64, u_actual: F64, u_control: F64, h: float
) -> tuple[F64, F64]:
    """One forward-Euler step of ν and the propeller lags of the Otter USV (upstream order).

    Parameters
    ----------
    p : OtterParams
    eta : ndarray, shape (N, 6)
    nu : ndarray, shape (N, 6)
    u_actual : ndarray, shape (N, 2)
        Actual shaft speeds n1 (left), n2 (right) [rad/s].
    u_control : ndarray, shape (N, 2)
        Commanded shaft speeds [rad/s].
    h : float
        Sample time [s].

    Returns
    -------
    nu_next : ndarray, shape (N, 6)
    u_actual_next : ndarray, shape (N, 2)
    """
    nn, aa = otter_kernel(p, hydro.NP, _cols(eta), _cols(nu), _cols(u_actual), _cols(u_control), h)
    return _stack(nn, eta.shape[0]), _stack(aa, eta.shape[0])


def dynamics(
    p: Remus100Params | OtterParams, eta: F64, nu: F64, u_actual: F64, u_control: F64, h: float
) -> tuple[F64, F64]:
    """``vehicle.dynamics(eta, nu, u_actual, u_control, sampleTime)`` for either vehicle.

    Parameters
    ----------
    p : Remus100Params or OtterParams
    eta, nu : ndarray, shape (N, 6)
    u_actual, u_control : ndarray, shape (N, m)
        m = 3 (REMUS 100) or 2 (Otter); units in :func:`remus100_dynamics`,
        :func:`otter_dynamics`.
    h : float
        Sample time [s].

    Returns
    -------
    nu_next : ndarray, shape (N, 6)
    u_actual_next : ndarray, shape (N, m)
    """
    if isinstance(p, Remus100Params):
        return remus100_dynamics(p, eta, nu, u_actual, u_control, h)
    return otter_dynamics(p, eta, nu, u_actual, u_control, h)


def attitude_euler(eta: F64, nu: F64, h: float) -> F64:
    """η_{k+1} = η_k + h·J(η_k)ν (forward Euler; upstream ``attitudeEuler``, Fossen 2021).

    Parameters
    ----------
    eta : ndarray, shape (N, 6)
    nu : ndarray, shape (N, 6)
        The velocity to integrate with (the loop passes ν_{k+1}).
    h : float
        Sample time [s].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    return eta + h * hydro.euler_kinematics(eta, nu)
