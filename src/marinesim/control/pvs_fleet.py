"""Control systems of the PythonVehicleSimulator fleet: step inputs, autopilots, DP — one copy.

Source: ``cybergalactic/PythonVehicleSimulator`` @ c717e07 — each vehicle's ``stepInput``,
``depthAutopilot`` (DSRV), ``headingAutopilot`` (frigate, ROVzefakkel, shipClarke83, tanker),
``DPcontrol`` with ``controlAllocation`` (semisub, supply), ``depthHeadingAutopilot``
(torpedo); ``lib/control.py`` (``PIDpolePlacement``, ``DPpolePlacement``, ``integralSMC``),
``lib/guidance.py`` (``refModel3``).

Each law is a plain per-vehicle function compiled by numba (``register_jitable``, like the
vehicle terms of :mod:`marinesim.models.sixdof.fleet`): :func:`control_one` computes the command
of vehicle ``i`` from its η, ν and its packed controller state (advanced in place by forward
Euler where upstream advances it).  Two things call it:

* the closed-loop kernel :mod:`marinesim.reference.pvs_fleet_loop` (control → dynamics →
  ``attitudeEuler`` → guard for k steps in one launch), and
* the batched face of this module, :func:`controller` / :func:`onboard` (used by the engine
  between its own kernel calls): ``f(state, eta, nu, h) -> (u_control, state)`` on N vehicles,
  with ``state`` a dict of (N,) arrays under the names the reference logs (``psi_d``,
  ``e_int`` ...), run by a compiled loop over the vehicles.

A law is packed once per vehicle build and sample time by :func:`law` into ``(code, row,
names)``: the law code (:data:`STEP` ... :data:`TABLE`), a parameter row whose gains are
precomputed in Python exactly as the upstream expressions do (so results are bit-identical to
PVS's numpy arithmetic), and the names of the controller states.  The vehicle ``v`` is a
:class:`marinesim.models.sixdof.fleet.FleetVehicle` (read through ``v.vehicle``, ``v.consts``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.core import compile as cc
from marinesim.core.frames import wrap_pi_c

__all__ = [
    "DP",
    "PID",
    "REMUS",
    "STATE_SIZE",
    "STEP",
    "TABLE",
    "control_one",
    "controller",
    "law",
    "onboard",
    "pid_core",
    "ref3_row",
    "remus_row",
    "step_input",
]

F64 = NDArray[np.float64]
_D2R = math.pi / 180
Controller = Callable[[dict[str, F64], F64, F64, float], tuple[F64, dict[str, F64]]]

#: Law codes: built-in step input, SISO PID autopilot, DP, REMUS depth/heading, command table.
STEP, PID, DP, REMUS, TABLE = 0, 1, 2, 3, 4
#: Columns of the packed controller state (the largest law: the REMUS autopilot).
STATE_SIZE = 8

_PID_NAMES = {2: ("z_d", "w_d", "a_d", "e_int"), 5: ("psi_d", "r_d", "a_d", "e_int")}
_DP_NAMES = ("x_d", "y_d", "psi_d", "e_int_x", "e_int_y", "e_int_psi")
_REMUS_NAMES = ("z_d", "z_int", "theta_int", "e_psi_int", "psi_d", "r_d", "a_d", "theta_d")


# --------------------------------------------------------------------------- per-vehicle laws


@register_jitable
def ref_model3(p: Any, o: int, s: Any, r: float, h: float) -> None:
    """Third-order reference model, forward Euler, |v_d| ≤ v_max (upstream ``refModel3``).

    ``s[0:3]`` = x_d, v_d, a_d advanced in place; ``p[o:o+4]`` = ω_d³, (2ζ_d+1)ω_d²,
    (2ζ_d+1)ω_d, v_max.
    """
    x_d, v_d, a_d = s[0], s[1], s[2]
    j_d = p[o] * (r - x_d) - p[o + 1] * v_d - p[o + 2] * a_d
    v_max = p[o + 3]
    v_new = v_d + h * a_d
    if v_new > v_max:
        v_new = v_max
    elif v_new < -v_max:
        v_new = -v_max
    s[0] = x_d + h * v_d
    s[1] = v_new
    s[2] = a_d + h * j_d


@register_jitable
def pid_core(p: Any, s: Any, e_x: float, e_v: float, h: float) -> float:
    """Upstream ``PIDpolePlacement`` on given errors: u = −K_p e − K_d ė − K_i ∫e, one vehicle.

    ``s`` = x_d, v_d, a_d, e_int advanced in place (∫e by forward Euler, then ``refModel3``
    toward ``p[8]``).  Row ``p``: idx, K_p, K_d, K_i, ω_d³, (2ζ_d+1)ω_d², (2ζ_d+1)ω_d, v_max,
    ref (``p[0]`` and ``p[9]`` are read by :func:`pid_law` only).
    """
    e_int = s[3]
    u = -p[1] * e_x - p[2] * e_v - p[3] * e_int
    s[3] = e_int + h * e_x
    ref_model3(p, 4, s, p[8], h)
    return u


@register_jitable
def pid_law(p: Any, s: Any, eta: Any, nu: Any, h: float) -> float:
    """SISO PID by pole placement + ``refModel3`` (upstream ``PIDpolePlacement``), one vehicle.

    u = −K_p e − K_d ė − K_i ∫e on the axis ``p[0]`` (2: heave/depth, 5: yaw), divided by
    ``p[9]`` (1, Clarke's N_δ, or −1 for the tanker).  ``s`` = x_d, v_d, a_d, e_int.
    Row ``p``: idx, K_p, K_d, K_i, ω_d³, (2ζ_d+1)ω_d², (2ζ_d+1)ω_d, v_max, ref, div.
    """
    k = int(p[0])
    return pid_core(p, s, eta[k] - s[0], nu[k] - s[1], h) / p[9]


@register_jitable
def dp_law(p: Any, s: Any, eta: Any, nu: Any, h: float, u: Any, m: int) -> None:
    """DP by pole placement (upstream ``DPpolePlacement``) and B⁺ allocation, one vehicle.

    τ = −Rᵀ K_p e − K_d ν − Rᵀ K_i ∫e, e = [x − x_d, y − y_d, ssa(ψ − ψ_d)]; set-points
    low-pass filtered (time constants T = 5/ω_n); u_j = sign(a_j) √|a_j|, a = B⁺ τ.
    ``s`` = x_d, y_d, ψ_d, ∫e_x, ∫e_y, ∫e_ψ.  Row ``p``: K_p (3), K_d (3), K_i (3), T (3),
    ref (3) [m, m, rad], B⁺ (m × 3, row-major).
    """
    x_d, y_d, psi_d = s[0], s[1], s[2]
    i0, i1, i2 = s[3], s[4], s[5]
    e0 = eta[0] - x_d
    e1 = eta[1] - y_d
    e2 = wrap_pi_c(eta[5] - psi_d)
    c, sn = math.cos(eta[5]), math.sin(eta[5])
    kp0, kp1, kp2 = p[0], p[1], p[2]
    ki0, ki1, ki2 = p[6], p[7], p[8]
    t0 = -(c * kp0 * e0 + sn * kp1 * e1) - p[3] * nu[0] - (c * ki0 * i0 + sn * ki1 * i1)
    t1 = -(-sn * kp0 * e0 + c * kp1 * e1) - p[4] * nu[1] - (-sn * ki0 * i0 + c * ki1 * i1)
    t2 = -(kp2 * e2) - p[5] * nu[5] - ki2 * i2
    s[0] = x_d + h * (p[12] - x_d) / p[9]
    s[1] = y_d + h * (p[13] - y_d) / p[10]
    s[2] = psi_d + h * (p[14] - psi_d) / p[11]
    s[3] = i0 + h * e0
    s[4] = i1 + h * e1
    s[5] = i2 + h * e2
    for j in range(m):
        a = p[15 + 3 * j] * t0 + p[16 + 3 * j] * t1 + p[17 + 3 * j] * t2
        sg = 1.0 if a > 0 else (-1.0 if a < 0 else a)  # np.sign (0 → 0, NaN → NaN)
        u[j] = sg * math.sqrt(abs(a))


@register_jitable
def integral_smc(p: Any, s: Any, e_x: float, e_v: float, h: float) -> float:
    """Integral sliding-mode heading control (Fossen 2021, eq. 16.479; upstream ``integralSMC``).

    ``s`` = ∫ssa(e), ψ_d, r_d, a_d (advanced in place); row ``p``: 2λ, λ², T, K, K_d,
    K_σ, φ_b, ω_d³, (2ζ_d+1)ω_d², (2ζ_d+1)ω_d, r_max, ψ_ref.  Returns δ_r [rad].
    """
    e_int, v_d, a_d = s[0], s[2], s[3]
    se = wrap_pi_c(e_x)
    v_r_dot = a_d - p[0] * e_v - p[1] * se
    v_r = v_d - p[0] * se - p[1] * e_int
    sigma = e_v + p[0] * se + p[1] * e_int
    base = p[2] * v_r_dot + v_r - p[4] * sigma
    if abs(sigma / p[6]) > 1.0:
        sg = 1.0 if sigma > 0 else (-1.0 if sigma < 0 else sigma)
        delta = (base - p[5] * sg) / p[3]
    else:
        delta = (base - p[5] * (sigma / p[6])) / p[3]
    s[0] = e_int + h * se
    return delta


@register_jitable
def remus_law(p: Any, s: Any, eta: Any, nu: Any, h: float, u: Any) -> None:
    """REMUS 100 depth (PI → PID pitch) and heading (integral SMC) autopilot, one vehicle.

    Upstream ``remus100.depthHeadingAutopilot`` (the torpedo's hull); ``u`` = the torpedo's
    five commands [δ_r, −δ_r, δ_s, −δ_s, n] (rad, rpm).  ``s`` = z_d, ∫(z − z_d),
    ∫ssa(θ − θ_d), ∫ssa(ψ − ψ_d), ψ_d, r_d, a_d, θ_d.  Row ``p``: e^{−hω_z}, 1 − e^{−hω_z},
    z_ref, K_p,z, 1/T_z, K_p,θ, K_d,θ, K_i,θ, K_w, n_ref, then the :func:`integral_smc` row.
    """
    z, theta, w, q = eta[2], eta[4], nu[2], nu[4]
    e_psi = eta[5] - s[4]
    e_r = nu[5] - s[5]
    z_d = p[0] * s[0] + p[1] * p[2]
    theta_d = p[3] * ((z - z_d) + p[4] * s[1])
    delta_s = -p[5] * wrap_pi_c(theta - theta_d) - p[6] * q - p[7] * s[2] - p[8] * w
    s[0] = z_d
    s[1] = s[1] + h * (z - z_d)
    s[2] = s[2] + h * wrap_pi_c(theta - theta_d)
    s[7] = theta_d
    smc = s[3:7]
    delta_r = integral_smc(p[10:], smc, e_psi, e_r, h)
    # ψ_d, r_d, a_d after the SMC: refModel3 on s[4:7]
    ref_model3(p, 17, s[4:7], p[21], h)
    u[0] = delta_r
    u[1] = -delta_r
    u[2] = delta_s
    u[3] = -delta_s
    u[4] = p[9] + 0.0


@register_jitable
def step_law(p: Any, t: float, u: Any, m: int) -> None:
    """Built-in ``stepInput(t)``: row ``p`` = t₁, t₂, u₀ (m), u₁ (m), u₂ (m); u₀, then u₁
    once t > t₁, then u₂ once t > t₂."""
    o = 2
    if t > p[0]:
        o = 2 + m
    if t > p[1]:
        o = 2 + 2 * m
    for j in range(m):
        u[j] = p[o + j]


@register_jitable
def control_one(
    code: int, p: Any, s: Any, eta: Any, nu: Any, t: float, h: float, table: Any, k: int,
    u: Any,
) -> None:  # fmt: skip
    """The command ``u`` (m,) of one vehicle at step ``k`` (time ``t`` [s]); state ``s`` in place.

    ``code`` is the law (:data:`STEP` ... :data:`TABLE`), ``p`` its packed row (:func:`law`),
    ``eta``/``nu`` the vehicle's η [m, rad] and ν [m/s, rad/s], ``table`` (rows, m) the
    open-loop commands of :data:`TABLE`.
    """
    m = u.shape[0]
    if code == PID:
        u[0] = pid_law(p, s, eta, nu, h)
    elif code == DP:
        dp_law(p, s, eta, nu, h, u, m)
    elif code == REMUS:
        remus_law(p, s, eta, nu, h, u)
    elif code == TABLE:
        for j in range(m):
            u[j] = table[k, j]
    else:
        step_law(p, t, u, m)


# --------------------------------------------------------------------------- packing


def ref3_row(wn_d: Any, zeta_d: Any, v_max: Any) -> list[float]:
    """``refModel3`` coefficients as upstream evaluates them: ω³, (2ζ+1)ω², (2ζ+1)ω, v_max."""
    return [wn_d**3, (2 * zeta_d + 1) * wn_d**2, (2 * zeta_d + 1) * wn_d, v_max]


def _step_rows(v: Any) -> list[float]:
    """t₁, t₂ and the three command rows of the vehicle's ``stepInput``."""
    name = v.vehicle
    if name in ("DSRV", "frigate", "ROVzefakkel"):
        rows = [[20 * (math.pi / 180)], [10 * (math.pi / 180)], [0.0]]
        t12 = [30.0, 50.0]
    elif name in ("shipClarke83", "tanker"):
        rows = [[10 * (math.pi / 180)], [0.0], [0.0]]
        t12 = [50.0, 50.0]
    elif name == "semisub":  # B⁺ τ fed straight in as rpm (upstream)
        taus = ([10000, 0, 100000], [1000, 1000, 0], [0, 0, 0])
        rows = [list(v.consts["B_pseudoInv"] @ np.array(tau, float)) for tau in taus]
        t12 = [30.0, 70.0]
    elif name == "supply":
        rows = [[0, 0, 0, 0, 100, 100], [50.0] * 6, [0.0] * 6]
        t12 = [30.0, 70.0]
    else:  # torpedo: [δ_r, −δ_r, −δ_s, δ_s, n]
        rows = []
        for dr, ds in ((5 * _D2R, -5 * _D2R), (5 * _D2R, 0.0), (0.0, 0.0)):
            rows.append([dr, -dr, -ds, ds, 1525.0])
        t12 = [50.0, 100.0]
    return t12 + [float(x) for r in rows for x in r]


def law(v: Any, h: float) -> tuple[int, F64, tuple[str, ...]]:
    """The vehicle's own control system packed for :func:`control_one`.

    Parameters
    ----------
    v : FleetVehicle
    h : float
        Sample time [s] (the REMUS depth filter's e^{−hω} is precomputed).

    Returns
    -------
    code : int
        :data:`STEP`, :data:`PID`, :data:`DP` or :data:`REMUS`.
    row : ndarray, shape (1, P)
        Packed parameters.
    names : tuple of str
        Names of the controller-state columns (empty for ``stepInput``).
    """
    mode, c = v.control_mode, v.consts
    if mode == "stepInput":
        return STEP, np.array([_step_rows(v)]), ()
    if mode in ("depthAutopilot", "headingAutopilot"):
        wn, zeta, div = c["wn"], c["zeta"], 1.0
        if v.vehicle == "DSRV":
            idx, m, d, k, ref, v_max = 2, c["m11"], 0, 0, c["ref"], c["w_max"]
        else:
            idx, ref, v_max = 5, c["ref"] * math.pi / 180, c["r_max"]
            if v.vehicle in ("frigate", "ROVzefakkel"):
                m, d, k = c["T"] / c["K"], c["n1"] / c["K"], 0
            elif v.vehicle == "shipClarke83":
                m, d, k, div = c["m_PID"], c["d_PID"], 0, c["Nd"]
            else:  # tanker: the rudder is minus the PID output
                m, d, k, div = 500, 0.0, 0.0, -1.0
        kp = m * wn**2.0 - k
        kd = m * 2.0 * zeta * wn - d
        ki = (wn / 10.0) * kp
        row = [idx, kp, kd, ki, *ref3_row(c["wn_d"], c["zeta_d"], v_max), ref, div]
        return PID, np.array([row], dtype=float), _PID_NAMES[idx]
    if mode == "DPcontrol":
        w, z, mm = np.diag(c["wn"]), np.diag(c["zeta"]), np.diag(c["M3"])
        kp = w * w * mm
        kd = 2.0 * z * w * mm - np.diag(c["D3"])
        ki = (1.0 / 10.0) * w * kp
        t = 5.0 * np.array([1 / w[0], 1 / w[1], 1 / w[2]])
        row = np.concatenate((kp, kd, ki, t, np.asarray(c["ref"], float), c["B_pseudoInv"].ravel()))
        return DP, row[None, :].astype(float), _DP_NAMES
    # torpedo depthHeadingAutopilot: the REMUS 100 autopilot (gains of control.autopilots,
    # imported here because that module runs its laws through this one)
    from marinesim.control.autopilots import RemusDepthHeadingGains

    g = RemusDepthHeadingGains(
        ref_z=c["ref_z"], ref_psi=c["ref_psi"], ref_n=c["ref_n"], K_nomoto=c["K_nomoto"],
        T_nomoto=c["T_nomoto"],
    )  # fmt: skip
    return REMUS, remus_row(g, h), _REMUS_NAMES


def remus_row(g: Any, h: float) -> F64:
    """The :func:`remus_law` rows of REMUS 100 autopilot gains ``g`` at sample time ``h``.

    ``g`` is a :class:`marinesim.control.autopilots.RemusDepthHeadingGains`; the derived gains
    (e^{−hω_z}, 2λ, λ², the ``refModel3`` coefficients ...) are evaluated in Python exactly as
    the upstream expressions do.  Shape (1, 22), or (N, 22) where the set-points ``ref_z``,
    ``ref_psi``, ``ref_n`` are (N,) arrays (one per vehicle).
    """
    row = [
        math.exp(-h * g.wn_d_z), 1 - math.exp(-h * g.wn_d_z), g.ref_z, g.Kp_z, 1 / g.T_z,
        g.Kp_theta, g.Kd_theta, g.Ki_theta, g.K_w, g.ref_n,
        2 * g.lam, g.lam**2, g.T_nomoto, g.K_nomoto, g.K_d, g.K_sigma, g.phi_b,
        *ref3_row(g.wn_d, g.zeta_d, g.r_max), g.ref_psi * _D2R,
    ]  # fmt: skip
    cols = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in row))
    return np.atleast_2d(np.stack(cols, axis=-1))


def step_input(v: Any, t: float, n: int = 1) -> F64:
    """The vehicle's built-in ``stepInput(t)`` for N vehicles, shape (N, m).

    DSRV, frigate, ROVzefakkel: δ = 20° until t > 30 s, 10° until t > 50 s, then 0;
    shipClarke83, tanker: δ = 10° until t > 50 s; semisub: the pseudo-inverse allocation of
    τ = [1e4 N, 0, 1e5 N·m] (t ≤ 30 s), [1e3, 1e3, 0] (t ≤ 70 s), then 0, used as rpm WITHOUT
    a square root (upstream); supply: [0, 0, 0, 0, 100, 100] rpm, 50 rpm each after 30 s,
    0 after 70 s; torpedo: [δ_r, −δ_r, −δ_s, δ_s, 1525 rpm] with δ_r = 5° (0 after 100 s) and
    δ_s = −5° (0 after 50 s).
    """
    p = np.array(_step_rows(v))
    u = np.empty(v.m)
    step_law(p, float(t), u, v.m)
    return np.tile(u, (n, 1))


# --------------------------------------------------------------------------- batched face


@register_jitable
def control_row(
    i: int, code: int, p: Any, st: Any, eta: Any, nu: Any, t: float, h: float, table: Any,
    k: int, u: Any,
) -> None:  # fmt: skip
    """:func:`control_one` for vehicle ``i`` of a batch (``p`` one shared row or one per vehicle)."""
    pr = p[0] if p.shape[0] == 1 else p[i]
    control_one(code, pr, st[i], eta[i], nu[i], t, h, table, k, u[i])


_FRAMES = Path(__file__).resolve().parents[1] / "core" / "frames.py"
#: Serial / ``prange`` kernels of :func:`control_row` (args[9] is ``u``, (N, m)).
#: (numpy's error model, as the generated tick that calls :func:`control_one` too)
CONTROL = cc.kernels(control_row, 9, stamp=cc.source_stamp(control_row, (_FRAMES,)), error_model="numpy")


def run_control(
    code: int, p: F64, st: F64, eta: F64, nu: F64, h: float, t: float = 0.0, m: int = 1
) -> F64:
    """Commands (N, m) of N vehicles by :func:`control_one`; ``st`` (N, STATE_SIZE) in place."""
    n = eta.shape[0]
    u = np.empty((n, m))
    e = np.ascontiguousarray(eta, dtype=float)
    v = np.ascontiguousarray(nu, dtype=float)
    with np.errstate(all="ignore"):
        CONTROL.launch("cpu", (code, p, st, e, v, float(t), float(h), np.zeros((1, m)), 0, u))
    return u


def controller(v: Any, n: int) -> tuple[Controller | None, dict[str, F64]]:
    """The closed-loop control system of ``v`` for N vehicles and its zero initial state.

    Returns ``(None, {})`` for ``stepInput`` (use :func:`step_input`).  The returned
    ``f(state, eta, nu, h) -> (u (N, m), state)`` runs :func:`control_one` on every vehicle;
    ``state`` maps the controller-state names to (N,) arrays.
    """
    if v.control_mode == "stepInput":
        return None, {}
    _, _, names = law(v, 0.02)
    rows: dict[float, tuple[int, F64]] = {}

    def fn(st: dict[str, F64], eta: F64, nu: F64, h: float) -> tuple[F64, dict[str, F64]]:
        if h not in rows:
            code, p, _ = law(v, h)
            rows[h] = (code, p)
        code, p = rows[h]
        ns = np.zeros((eta.shape[0], STATE_SIZE))
        for j, key in enumerate(names):
            ns[:, j] = st[key]
        u = run_control(code, p, ns, eta, nu, h, 0.0, v.m)
        return u, {key: ns[:, j].copy() for j, key in enumerate(names)}

    return fn, {k: np.zeros(n) for k in names}


Onboard = Callable[[dict[str, Any], float, F64, F64, float], tuple[F64, dict[str, Any]]]


def onboard(v: Any, n: int) -> tuple[Onboard, dict[str, Any]]:
    """The vehicle's own control system as one callable, whatever its mode, for N vehicles.

    Returns ``(f, state0)`` with ``f(state, t, eta, nu, h) -> (u (N, m), state)``: the
    built-in :func:`step_input` schedule at time ``t`` [s] for ``stepInput``, else the
    closed loop of :func:`controller` on η (N, 6) [m, rad] and ν (N, 6) [m/s, rad/s] with
    sample time ``h`` [s].
    """
    fn, st0 = controller(v, n)
    if fn is None:

        def open_loop(st: dict[str, Any], t: float, eta: F64, nu: F64, h: float) -> Any:
            return step_input(v, t, eta.shape[0]), st

        return open_loop, {}
    closed: Controller = fn

    def closed_loop(st: dict[str, Any], t: float, eta: F64, nu: F64, h: float) -> Any:
        return closed(st, eta, nu, h)

    return closed_loop, st0
