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

One copy of each law: the arithmetic lives in the per-vehicle numba laws of
:mod:`marinesim.control.pvs_fleet` (``ref_model3``, ``pid_core``, ``integral_smc``,
``remus_law``, ``step_law``); the functions here pack the gains into that module's rows
(evaluated in Python exactly as upstream's expressions), run the law over the N vehicles in a
compiled loop and unpack the states.  Results are bit-identical to upstream's numpy arithmetic
(``tests/control/test_autopilots_one_copy.py``), but for the sign bit of a NaN where two NaNs of
opposite sign meet (operand order; both print ``nan``).  Only the Otter's two-propeller allocation
(a 2 × 2 matrix product and a signed square root) stays in numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Self

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.control import pvs_fleet as fleet
from marinesim.control.pvs_fleet import integral_smc as _smc_law
from marinesim.control.pvs_fleet import pid_core as _pid_law
from marinesim.control.pvs_fleet import ref_model3 as _ref_law
from marinesim.control.pvs_fleet import remus_law as _remus_law
from marinesim.core import compile as cc

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
]

F64 = NDArray[np.float64]
_D2R = math.pi / 180


# --------------------------------------------------------------------------- compiled rows
# One vehicle ``i`` per call; :func:`marinesim.core.compile.kernels` builds the serial and
# ``prange`` loops over the vehicles from it.  error_model="numpy": a zero divisor gives inf/NaN
# as upstream's numpy does (no exception); it also drops numba's per-division zero checks
# (about half the REMUS loop's time, measured).


@register_jitable
def _ref_row(i, p, s, r, h):  # noqa: ANN001, ANN202
    _ref_law(p, 0, s[i], r[i], h)


@register_jitable
def _pid_row(i, p, s, e_x, e_v, h, u):  # noqa: ANN001, ANN202
    u[i] = _pid_law(p, s[i], e_x[i], e_v[i], h)


@register_jitable
def _smc_row(i, p, s, e_x, e_v, h, u):  # noqa: ANN001, ANN202
    # s[i] = ∫ssa(e), x_d, v_d, a_d: the SMC, then refModel3 on x_d, v_d, a_d (as remus_law)
    u[i] = _smc_law(p, s[i], e_x[i], e_v[i], h)
    _ref_law(p, 7, s[i, 1:4], p[11], h)


@register_jitable
def _remus_row(i, p, s, eta, nu, h, u):  # noqa: ANN001, ANN202
    _remus_law(p[0] if p.shape[0] == 1 else p[i], s[i], eta[i], nu[i], h, u[i])


#: Vehicles from which the autopilots run their threaded loop (same bytes as the serial
#: one).  On a loaded 2-core machine the threads lost even at N = 10⁴; raise it there.
PARALLEL_FROM = 4096

_FRAMES = Path(__file__).resolve().parents[1] / "core" / "frames.py"
_STAMP = cc.source_stamp(_remus_row, (_FRAMES,))  # this package and the angle wrapping
_REF, _PID, _SMC, _REMUS = (
    cc.kernels(one, 1, stamp=_STAMP, error_model="numpy")
    for one in (_ref_row, _pid_row, _smc_row, _remus_row)
)


def _launch(k: cc.Kernels, *args: Any) -> None:
    """Run the rows of ``args`` (vehicles on the first axis of ``args[1]``) on the CPU."""
    k.parallel_min = PARALLEL_FROM  # read at each call (tests move it)
    k.launch("cpu", args)


def _pack(*arrays: Any) -> tuple[tuple[int, ...], F64]:
    """Broadcast the per-vehicle inputs; their shape and a (n, len(arrays)) C-ordered block."""
    b = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in arrays))
    shape = b[0].shape
    block = np.empty((b[0].size, len(b)))
    for j, a in enumerate(b):
        block[:, j] = a.reshape(-1)
    return shape, block


def _unpack(shape: tuple[int, ...], block: F64) -> list[F64]:
    """The columns of ``block`` as separate contiguous arrays of ``shape``."""
    return [c.reshape(shape) for c in block.T.copy()]


def _run_on_errors(
    kern: cc.Kernels, p: F64, states: tuple[F64, ...], e_x: F64, e_v: F64, h: float
) -> tuple[F64, list[F64]]:
    """Rows ``kern(p, block, e_x, e_v, h, u)`` on the packed (N,) states and errors.

    Returns the command u and the advanced states, each of the broadcast input shape.
    """
    shape, block = _pack(*states, e_x, e_v)
    k = len(states)
    u = np.empty(block.shape[0])
    e = np.ascontiguousarray(block[:, k:].T)
    _launch(kern, p, block, e[0], e[1], float(h), u)
    return u.reshape(shape), _unpack(shape, block)[:k]


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
    shape, block = _pack(x_d, v_d, a_d, r)
    p = np.array(fleet.ref3_row(wn_d, zeta_d, v_max), dtype=float)
    _launch(_REF, p, block, np.ascontiguousarray(block[:, 3]), float(h))
    x_new, v_new, a_new, _ = _unpack(shape, block)
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
    p = np.array([0.0, kp, kd, ki, *fleet.ref3_row(wn_d, zeta_d, v_max), r, 1.0], dtype=float)
    u, (x_d, v_d, a_d, e_int) = _run_on_errors(_PID, p, (x_d, v_d, a_d, e_int), e_x, e_v, h)
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
    p = np.array(
        [2 * lam, lam**2, t_nomoto, k_nomoto, k_d, k_sigma, phi_b,
         *fleet.ref3_row(wn_d, zeta_d, v_max), r],
        dtype=float,
    )  # fmt: skip
    delta, (e_int, x_d, v_d, a_d) = _run_on_errors(_SMC, p, (e_int, x_d, v_d, a_d), e_x, e_v, h)
    return delta, e_int, x_d, v_d, a_d


class _PerVehicleState:
    """Base of the autopilot state dataclasses: every field an (N,) array."""

    @classmethod
    def zeros(cls, n: int) -> Self:
        """Initial state of N autopilots (all zero, as upstream)."""
        return cls(**{f.name: np.zeros(n) for f in fields(cls)})  # type: ignore[arg-type]


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
class RemusDepthHeadingState(_PerVehicleState):
    """Autopilot states, each (N,): upstream attribute names."""

    z_d: F64
    z_int: F64
    theta_int: F64
    e_psi_int: F64
    psi_d: F64
    r_d: F64
    a_d: F64
    theta_d: F64  # last pitch set-point of the outer depth loop [rad] (logged, not integrated)


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
    p = fleet.remus_row(gains, h)
    st = np.empty((eta.shape[0], fleet.STATE_SIZE))
    for j, f in enumerate(fields(state)):
        st[:, j] = getattr(state, f.name)
    if p.shape[0] not in (1, st.shape[0]):
        raise ValueError(
            f"{p.shape[0]} set-points (ref_z, ref_psi, ref_n) for {st.shape[0]} vehicles"
        )
    u5 = np.empty((st.shape[0], 5))
    eta_c, nu_c = np.ascontiguousarray(eta, float), np.ascontiguousarray(nu, float)
    _launch(_REMUS, p, st, eta_c, nu_c, float(h), u5)
    # remus_law commands the torpedo's [δ_r, −δ_r, δ_s, −δ_s, n]; REMUS takes [δ_r, −δ_s, n]
    u = u5[:, [0, 3, 4]]
    return u, RemusDepthHeadingState(*st.T.copy())


def _steps(row: F64, t: float, n: int) -> F64:
    """``step_law``'s command (m,) at time ``t`` for the packed ``row``, tiled to (n, m)."""
    m = (row.shape[0] - 2) // 3
    u = np.empty(m)
    fleet.step_law(row, float(t), u, m)
    return np.tile(u, (n, 1))


#: ``step_law`` rows: t₁, t₂, then the commands before t₁, after t₁, after t₂.
_REMUS_STEPS = np.array([50.0, 100.0, 5 * _D2R, -5 * _D2R, 1525.0, 5 * _D2R, 0.0, 1525.0,
                         0.0, 0.0, 1525.0])  # fmt: skip
#: Otter: on for 30 < t < 100; t > nextafter(100, −∞) is t ≥ 100 exactly in float64.
_OTTER_STEPS = np.array([30.0, math.nextafter(100.0, -math.inf), 0.0, 0.0, 80.0, 120.0,
                         0.0, 0.0])  # fmt: skip


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
    return _steps(_REMUS_STEPS, t, n)


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
class OtterHeadingState(_PerVehicleState):
    """Autopilot states, each (N,): upstream attribute names."""

    e_int: F64
    psi_d: F64
    r_d: F64
    a_d: F64
    tau_N: F64  # last yaw-moment command of the PID [N·m] (logged, not integrated)


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
    return _steps(_OTTER_STEPS, t, n)
