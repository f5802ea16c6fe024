"""REMUS 100 and Otter USV built exactly as PythonVehicleSimulator builds them (batched).

Source: ``cybergalactic/PythonVehicleSimulator`` @ c717e07 (package 1.0.1),
``vehicles/remus100.py``, ``vehicles/otter.py`` and ``lib/gnc.py``; T. I. Fossen, *Handbook
of Marine Craft Hydrodynamics and Motion Control*, 2nd ed., Wiley 2021.  Written anew in
marinesim's batched form: every function takes a leading vehicle axis N (one vehicle is
N = 1) and returns new arrays; nothing is mutated (upstream ``remus100.dynamics`` mutates the
caller's ν in place; we do not).

:func:`remus100` and :func:`otter` take the upstream constructors' arguments and return
frozen parameter objects; the equations are those of
:mod:`marinesim.models.sixdof.pvs_vehicles` (the shared 6-DOF terms plus each vehicle's own),
run on a backend by :func:`step_array` / :func:`step_batch`; :func:`dynamics` is upstream's
``vehicle.dynamics(eta, nu, u_actual, u_control, sampleTime)`` (forward Euler of ν and of the
actuator lags) and :func:`attitude_euler` its ``attitudeEuler``.  The PythonVehicleSimulator
loop is semi-implicit: η_{k+1} uses ν_{k+1} (see :mod:`marinesim.models.sixdof.integrate`).

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

from marinesim.core.errors import ConfigError
from marinesim.models.sixdof import arrays, setup
from marinesim.models.sixdof import pvs_vehicles as pv

__all__ = [
    "OTTER_MODES",
    "REMUS_MODES",
    "OtterParams",
    "Remus100Params",
    "attitude_euler",
    "dynamics",
    "otter",
    "otter_dynamics",
    "remus100",
    "remus100_dynamics",
    "step_array",
    "step_batch",
    "step_guarded",
]

F64 = NDArray[np.float64]

REMUS_MODES = ("stepInput", "depthHeadingAutopilot")
OTTER_MODES = ("stepInput", "headingAutopilot")

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
    h_rg = setup.hmtrx(r_bg)
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
    s_rg = setup.smtrx(rg)
    h_rg = setup.hmtrx(rg)
    s_rp = setup.smtrx(rp)
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
    h = setup.hmtrx(np.array([-0.2, 0.0, 0.0]))
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


def _kernel_params(p: Remus100Params | OtterParams) -> tuple[int, F64, NDArray[np.int64]]:
    """Vehicle kind, packed parameter row and C_A zero entries (built once per parameters)."""
    k = p.__dict__.get("_kernel_params")
    if k is None:
        if isinstance(p, Remus100Params):
            k = (pv.REMUS100, pv.pack_remus100(p), np.array(REMUS_CA_ZERO, dtype=np.int64))
        else:
            zero = np.array(p.ca_zero, dtype=np.int64).reshape(-1, 2)
            k = (pv.OTTER, pv.pack_otter(p), zero)
        p.__dict__["_kernel_params"] = k  # frozen dataclass: cache beside the fields
    return k


def step_guarded(
    p: Remus100Params | OtterParams,
    x: F64,
    cmd: F64,
    h: float,
    alive: NDArray[np.bool_],
    t: float,
    *,
    backend: str | None = None,
    max_speed: float = 50.0,
    max_rate: float = 50.0,
) -> tuple[F64, NDArray[np.bool_], list[str]]:
    """One guarded loop step of N vehicles on packed rows (N = 1 included).

    Parameters
    ----------
    p : Remus100Params or OtterParams
    x : ndarray, shape (N, 12 + m)
        [η (6) [m, rad], ν (6) [m/s, rad/s], actuators (m)] per vehicle; m = 3 for the
        REMUS 100 (δ_r, δ_s [rad], n [rpm]), 2 for the Otter (n1, n2 [rad/s]).
    cmd : ndarray, shape (N, m) or (1, m)
        Commanded actuator values.
    h : float
        Sample time [s].
    alive : ndarray of bool, shape (N,)
        Vehicles still running (not modified).
    t : float
        Time of the new state [s] (for the event texts).
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda`` (:mod:`marinesim.models.sixdof.backends`).
    max_speed, max_rate : float
        Divergence bounds on |ν₁| [m/s] and |ω| [rad/s].

    Returns
    -------
    x_next : ndarray, shape (N, 12 + m)
        Vehicles stopped now or before keep their last state.
    alive : ndarray of bool, shape (N,)
    events : list of str
        A NumericalError text per vehicle stopped in this step (index and time).
    """
    kind, par, zero = _kernel_params(p)
    return pv.step_guarded(
        pv.STEP, kind, par, zero, x, cmd, h, alive, t, backend=backend, max_speed=max_speed,
        max_rate=max_rate,
    )  # fmt: skip


def step_array(
    p: Remus100Params | OtterParams, x: F64, cmd: F64, h: float, *, backend: str | None = None
) -> F64:
    """One loop step of N vehicles on packed rows, unguarded (shapes as :func:`step_guarded`)."""
    y, _, _ = step_guarded(
        p, x, cmd, h, np.ones(np.shape(x)[0], dtype=bool), 0.0, backend=backend,
        max_speed=math.inf, max_rate=math.inf,
    )  # fmt: skip
    return y


def _pack(parts: tuple, n: int) -> F64:
    return np.stack([np.broadcast_to(np.asarray(c, dtype=float), (n,)) for c in parts], axis=1)


def step_batch(
    p: Remus100Params | OtterParams,
    state: tuple[tuple, tuple, tuple],
    cmd: tuple,
    h: float,
    alive: NDArray[np.bool_] | bool,
    t: float,
    *,
    backend: str | None = None,
    max_speed: float = 50.0,
    max_rate: float = 50.0,
) -> tuple[tuple[tuple, tuple, tuple], NDArray[np.bool_], list[str]]:
    """:func:`step_guarded` on component tuples (each component an (N,) array or a float).

    Parameters
    ----------
    p : Remus100Params or OtterParams
    state : (eta, nu, act)
        Tuples of 6, 6 and m components.
    cmd : tuple of m components
    h : float
        Sample time [s].
    alive : ndarray of bool, shape (N,), or bool
    t : float
        Time of the new state [s].
    backend : str, optional
    max_speed, max_rate : float

    Returns
    -------
    state : (eta, nu, act)
        Tuples of (N,) arrays.
    alive : ndarray of bool, shape (N,)
    events : list of str
    """
    n = max(np.size(alive), *(np.size(c) for part in state for c in part))
    x = np.concatenate([_pack(part, n) for part in state], axis=1)
    y, al, ev = step_guarded(
        p, x, _pack(cmd, np.size(cmd[0])), h, np.broadcast_to(np.asarray(alive, bool), (n,)), t,
        backend=backend, max_speed=max_speed, max_rate=max_rate,
    )  # fmt: skip
    k = [6, 6, y.shape[1] - 12]
    out = (
        tuple(y[:, i] for i in range(0, 6)),
        tuple(y[:, i] for i in range(6, 12)),
        tuple(y[:, i] for i in range(12, 12 + k[2])),
    )
    return out, al, ev


def dynamics(
    p: Remus100Params | OtterParams, eta: F64, nu: F64, u_actual: F64, u_control: F64, h: float
) -> tuple[F64, F64]:
    """``vehicle.dynamics(eta, nu, u_actual, u_control, sampleTime)`` for either vehicle.

    One forward-Euler step of ν and the actuator lags (upstream semantics, nothing mutated).

    Parameters
    ----------
    p : Remus100Params or OtterParams
    eta, nu : ndarray, shape (N, 6)
        [x, y, z, φ, θ, ψ] [m, rad]; [u, v, w, p, q, r] [m/s, rad/s].
    u_actual, u_control : ndarray, shape (N, m)
        Actual and commanded actuators: REMUS 100 (m = 3) rudder δ_r, stern plane δ_s [rad],
        propeller n [rpm]; Otter (m = 2) shaft speeds n1, n2 [rad/s].
    h : float
        Sample time [s].

    Returns
    -------
    nu_next : ndarray, shape (N, 6)
    u_actual_next : ndarray, shape (N, m)
    """
    y = step_array(p, np.concatenate((eta, nu, u_actual), axis=1), u_control, h)
    return y[:, 6:12], y[:, 12:]


remus100_dynamics = dynamics
otter_dynamics = dynamics


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
    return eta + h * arrays.euler_kinematics(eta, nu)
