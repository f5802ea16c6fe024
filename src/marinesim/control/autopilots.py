"""PythonVehicleSimulator's autopilots and step inputs, batched and pure.

Source: ``cybergalactic/PythonVehicleSimulator`` @ c717e07 — ``vehicles/remus100.py``
(``depthHeadingAutopilot``, ``stepInput``), ``vehicles/otter.py`` (``headingAutopilot``,
``controlAllocation``, ``stepInput``), ``lib/control.py`` (``PIDpolePlacement``,
``integralSMC``), ``lib/guidance.py`` (``refModel3``); T. I. Fossen, *Handbook of Marine Craft
Hydrodynamics and Motion Control*, 2nd ed., Wiley 2021 (integral SMC: eq. 16.479).

Every controller is ``f(gains, state, eta, nu, h) -> (u_control, new_state)``: the state is a
frozen dataclass of (N,) arrays, advanced by forward Euler inside the call exactly where
upstream advances it (upstream stores it on the vehicle object).  The gains are frozen
dataclasses with the upstream defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "OtterHeadingGains",
    "OtterHeadingState",
    "RemusDepthHeadingGains",
    "RemusDepthHeadingState",
    "integral_smc",
    "otter_heading_autopilot",
    "otter_step_input",
    "pid_pole_placement",
    "ref_model3",
    "remus_depth_heading_autopilot",
    "remus_step_input",
    "ssa",
]

F64 = NDArray[np.float64]
_D2R = math.pi / 180


def ssa(angle: F64) -> F64:
    """Smallest signed angle, (a + π) mod 2π − π [rad] (Fossen 2021)."""
    return np.mod(angle + math.pi, 2 * math.pi) - math.pi


def ref_model3(
    x_d: F64, v_d: F64, a_d: F64, r: float | F64, wn_d: float, zeta_d: float, v_max: float, h: float
) -> tuple[F64, F64, F64]:
    """Third-order reference model, forward Euler, |v_d| ≤ v_max (upstream ``refModel3``).

    Parameters
    ----------
    x_d, v_d, a_d : ndarray, shape (N,)
        Desired position, velocity, acceleration (e.g. rad, rad/s, rad/s²).
    r : float or ndarray
        Set-point.
    wn_d, zeta_d : float
        Natural frequency [rad/s] and relative damping [-].
    v_max : float
        Velocity saturation.
    h : float
        Sample time [s].

    Returns
    -------
    x_d, v_d, a_d : ndarray, shape (N,)
    """
    j_d = wn_d**3 * (r - x_d) - (2 * zeta_d + 1) * wn_d**2 * v_d - (2 * zeta_d + 1) * wn_d * a_d
    x_new = x_d + h * v_d
    v_new = v_d + h * a_d
    a_new = a_d + h * j_d
    v_new = np.where(v_new > v_max, v_max, np.where(v_new < -v_max, -v_max, v_new))
    return x_new, v_new, a_new


def pid_pole_placement(
    e_int: F64,
    e_x: F64,
    e_v: F64,
    x_d: F64,
    v_d: F64,
    a_d: F64,
    m: float,
    d: float,
    k: float,
    wn_d: float,
    zeta_d: float,
    wn: float,
    zeta: float,
    r: float,
    v_max: float,
    h: float,
) -> tuple[F64, F64, F64, F64, F64]:
    """SISO PID by pole placement with a 3rd-order reference model (upstream ``PIDpolePlacement``).

    K_p = m ω_n² − k, K_d = 2 m ζ ω_n − d, K_i = (ω_n/10) K_p; u = −K_p e − K_d ė − K_i ∫e.

    Parameters
    ----------
    e_int, e_x, e_v : ndarray, shape (N,)
        Integral, position and velocity errors.
    x_d, v_d, a_d : ndarray, shape (N,)
        Reference-model states.
    m, d, k : float
        Design mass, damping, stiffness of the controlled axis.
    wn_d, zeta_d : float
        Reference model natural frequency [rad/s] and damping [-].
    wn, zeta : float
        Closed-loop natural frequency [rad/s] and damping [-].
    r : float
        Set-point.
    v_max : float
        Reference velocity limit.
    h : float
        Sample time [s].

    Returns
    -------
    u, e_int, x_d, v_d, a_d : ndarray, shape (N,)
    """
    kp = m * wn**2.0 - k
    kd = m * 2.0 * zeta * wn - d
    ki = (wn / 10.0) * kp
    u = -kp * e_x - kd * e_v - ki * e_int
    e_int = e_int + h * e_x
    x_d, v_d, a_d = ref_model3(x_d, v_d, a_d, r, wn_d, zeta_d, v_max, h)
    return u, e_int, x_d, v_d, a_d


def integral_smc(
    e_int: F64,
    e_x: F64,
    e_v: F64,
    x_d: F64,
    v_d: F64,
    a_d: F64,
    t_nomoto: float,
    k_nomoto: float,
    wn_d: float,
    zeta_d: float,
    k_d: float,
    k_sigma: float,
    lam: float,
    phi_b: float,
    r: float,
    v_max: float,
    h: float,
) -> tuple[F64, F64, F64, F64, F64]:
    """Integral sliding-mode heading control (Fossen 2021, eq. 16.479; upstream ``integralSMC``).

    Parameters
    ----------
    e_int, e_x, e_v : ndarray, shape (N,)
        Integral of ssa(ψ − ψ_d), yaw error [rad], yaw-rate error [rad/s].
    x_d, v_d, a_d : ndarray, shape (N,)
        Reference-model states [rad, rad/s, rad/s²].
    t_nomoto, k_nomoto : float
        Nomoto time constant [s] and gain [1/s].
    wn_d, zeta_d : float
        Reference model natural frequency [rad/s] and damping [-].
    k_d, k_sigma, lam, phi_b : float
        Damping gain, switching gain, λ and boundary-layer width.
    r : float
        Yaw set-point [rad].
    v_max : float
        Yaw-rate limit of the reference model [rad/s].
    h : float
        Sample time [s].

    Returns
    -------
    delta, e_int, x_d, v_d, a_d : ndarray, shape (N,)
        Rudder command [rad] and the advanced states.
    """
    se = ssa(e_x)
    v_r_dot = a_d - 2 * lam * e_v - lam**2 * se
    v_r = v_d - 2 * lam * se - lam**2 * e_int
    sigma = e_v + 2 * lam * se + lam**2 * e_int
    base = t_nomoto * v_r_dot + v_r - k_d * sigma
    delta = np.where(
        np.abs(sigma / phi_b) > 1.0,
        (base - k_sigma * np.sign(sigma)) / k_nomoto,
        (base - k_sigma * (sigma / phi_b)) / k_nomoto,
    )
    e_int = e_int + h * se
    x_d, v_d, a_d = ref_model3(x_d, v_d, a_d, r, wn_d, zeta_d, v_max, h)
    return delta, e_int, x_d, v_d, a_d


def _zeros_state(cls: type, n: int):  # noqa: ANN202
    return cls(**{f.name: np.zeros(n) for f in fields(cls)})


@dataclass(frozen=True)
class RemusDepthHeadingGains:
    """Gains of the REMUS 100 depth/heading autopilot, upstream defaults (SI, rad)."""

    ref_z: float = 0.0  # desired depth [m]
    ref_psi: float = 0.0  # desired yaw [deg]
    ref_n: float = 0.0  # propeller command [rpm]
    K_nomoto: float = 5.0 / 20.0
    T_nomoto: float = 1.0
    wn_d: float = 0.1
    zeta_d: float = 1.0
    r_max: float = 5.0 * math.pi / 180
    lam: float = 0.1
    phi_b: float = 0.1
    K_d: float = 0.5
    K_sigma: float = 0.05
    wn_d_z: float = 0.02
    Kp_z: float = 0.1
    T_z: float = 100.0
    Kp_theta: float = 5.0
    Kd_theta: float = 2.0
    Ki_theta: float = 0.3
    K_w: float = 5.0


@dataclass(frozen=True)
class RemusDepthHeadingState:
    """Autopilot states, each (N,): upstream attribute names."""

    z_d: F64
    z_int: F64
    theta_int: F64
    e_psi_int: F64
    psi_d: F64
    r_d: F64
    a_d: F64
    theta_d: F64  # last pitch set-point of the outer depth loop [rad] (logged, not integrated)

    @classmethod
    def zeros(cls, n: int) -> RemusDepthHeadingState:
        """Initial state of N autopilots (all zero, as upstream)."""
        return _zeros_state(cls, n)


def remus_depth_heading_autopilot(
    gains: RemusDepthHeadingGains, state: RemusDepthHeadingState, eta: F64, nu: F64, h: float
) -> tuple[F64, RemusDepthHeadingState]:
    """REMUS 100 depth (PI → PID pitch, successive loops) and heading (integral SMC) autopilot.

    Parameters
    ----------
    gains : RemusDepthHeadingGains
    state : RemusDepthHeadingState
    eta, nu : ndarray, shape (N, 6)
    h : float
        Sample time [s].

    Returns
    -------
    u_control : ndarray, shape (N, 3)
        [δ_r, δ_s] [rad], n [rpm].
    state : RemusDepthHeadingState
        Advanced states.
    """
    g = gains
    z, theta, psi = eta[:, 2], eta[:, 4], eta[:, 5]
    w, q, r = nu[:, 2], nu[:, 4], nu[:, 5]
    e_psi = psi - state.psi_d
    e_r = r - state.r_d
    psi_ref = g.ref_psi * _D2R
    n = g.ref_n + np.zeros_like(z)
    z_d = math.exp(-h * g.wn_d_z) * state.z_d + (1 - math.exp(-h * g.wn_d_z)) * g.ref_z
    theta_d = g.Kp_z * ((z - z_d) + (1 / g.T_z) * state.z_int)
    delta_s = (
        -g.Kp_theta * ssa(theta - theta_d)
        - g.Kd_theta * q
        - g.Ki_theta * state.theta_int
        - g.K_w * w
    )
    z_int = state.z_int + h * (z - z_d)
    theta_int = state.theta_int + h * ssa(theta - theta_d)
    delta_r, e_psi_int, psi_d, r_d, a_d = integral_smc(
        state.e_psi_int,
        e_psi,
        e_r,
        state.psi_d,
        state.r_d,
        state.a_d,
        g.T_nomoto,
        g.K_nomoto,
        g.wn_d,
        g.zeta_d,
        g.K_d,
        g.K_sigma,
        g.lam,
        g.phi_b,
        psi_ref,
        g.r_max,
        h,
    )
    u = np.stack((delta_r, -delta_s, n), axis=1)
    return u, RemusDepthHeadingState(z_d, z_int, theta_int, e_psi_int, psi_d, r_d, a_d, theta_d)


def remus_step_input(t: float, n: int = 1) -> F64:
    """REMUS 100 built-in steps: δ_r = 5° until t > 100 s, δ_s = −5° until t > 50 s, 1525 rpm.

    Parameters
    ----------
    t : float
        Time [s].
    n : int
        Number of vehicles N.

    Returns
    -------
    ndarray, shape (N, 3)
    """
    delta_r = 0.0 if t > 100 else 5 * _D2R
    delta_s = 0.0 if t > 50 else -5 * _D2R
    return np.tile(np.array([delta_r, delta_s, 1525.0]), (n, 1))


@dataclass(frozen=True)
class OtterHeadingGains:
    """Gains of the Otter heading autopilot, upstream defaults; ``binv`` from the vehicle."""

    binv: F64
    ref: float = 0.0  # desired yaw [deg]
    tauX: float = 120.0  # surge force [N]
    wn: float = 2.5
    zeta: float = 1.0
    r_max: float = 10 * math.pi / 180
    wn_d: float = 0.5
    zeta_d: float = 1.0
    m: float = 41.4  # yaw inertia incl. added mass used by the design [kg·m²]
    T: float = 1.0


@dataclass(frozen=True)
class OtterHeadingState:
    """Autopilot states, each (N,): upstream attribute names."""

    e_int: F64
    psi_d: F64
    r_d: F64
    a_d: F64
    tau_N: F64  # last yaw-moment command of the PID [N·m] (logged, not integrated)

    @classmethod
    def zeros(cls, n: int) -> OtterHeadingState:
        """Initial state of N autopilots (all zero, as upstream)."""
        return _zeros_state(cls, n)


def otter_heading_autopilot(
    gains: OtterHeadingGains, state: OtterHeadingState, eta: F64, nu: F64, h: float
) -> tuple[F64, OtterHeadingState]:
    """Otter PID heading autopilot with reference model and two-propeller allocation.

    Parameters
    ----------
    gains : OtterHeadingGains
    state : OtterHeadingState
    eta, nu : ndarray, shape (N, 6)
    h : float
        Sample time [s].

    Returns
    -------
    u_control : ndarray, shape (N, 2)
        Shaft speed commands n1, n2 [rad/s].
    state : OtterHeadingState
    """
    g = gains
    psi, r = eta[:, 5], nu[:, 5]
    e_psi = psi - state.psi_d
    e_r = r - state.r_d
    psi_ref = g.ref * math.pi / 180
    k_gain = g.T / g.m
    d = 1 / k_gain
    tau_n, e_int, psi_d, r_d, a_d = pid_pole_placement(
        state.e_int,
        e_psi,
        e_r,
        state.psi_d,
        state.r_d,
        state.a_d,
        g.m,
        d,
        0,
        g.wn_d,
        g.zeta_d,
        g.wn,
        g.zeta,
        psi_ref,
        g.r_max,
        h,
    )
    tau_x = g.tauX + np.zeros_like(psi)
    u_alloc = np.stack((tau_x, tau_n), axis=1) @ g.binv.T
    n12 = np.sign(u_alloc) * np.sqrt(np.abs(u_alloc))
    return n12, OtterHeadingState(e_int, psi_d, r_d, a_d, tau_n)


def otter_step_input(t: float, n: int = 1) -> F64:
    """Otter built-in steps: n1 = 80, n2 = 120 rad/s for 30 < t < 100 s, else 0.

    Parameters
    ----------
    t : float
        Time [s].
    n : int
        Number of vehicles N.

    Returns
    -------
    ndarray, shape (N, 2)
    """
    on = 30 < t < 100
    return np.tile(np.array([80.0, 120.0] if on else [0.0, 0.0]), (n, 1))
