"""The numpy face of the PVS autopilots runs the one compiled copy of each law, bit for bit.

:mod:`marinesim.control.autopilots` packs gains and states and runs the per-vehicle numba laws
of :mod:`marinesim.control.pvs_fleet`.  The oracle here is PythonVehicleSimulator's own
vectorised numpy arithmetic (``lib/guidance.refModel3``, ``lib/control.PIDpolePlacement`` /
``integralSMC``, ``remus100.depthHeadingAutopilot``), written in upstream's operation order:
every output must have the same bytes (±0, ±inf and where NaNs fall included; a NaN's sign
bit aside, see :func:`_same`), for N = 1 and for a batch.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.control import autopilots as ap
from marinesim.control import pvs_fleet
from marinesim.core.frames import wrap_pi

H = 0.02
R_MAX = 5 * math.pi / 180


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and bytes (so −0.0 ≠ 0.0), NaN in the same places.

    A NaN's sign bit is not compared: where two NaNs of opposite sign meet in a sum, which one
    the CPU keeps follows the operand order the compiler chose (numpy's loop vs LLVM's), and
    no result tells them apart (both print ``nan``).
    """
    a, b = np.array(a, float), np.array(b, float)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    a[np.isnan(a)] = b[np.isnan(b)] = math.nan
    return a.tobytes() == b.tobytes()


# --------------------------------------------------------------------------- upstream numpy


_quiet = np.errstate(all="ignore")  # upstream's numpy warns on NaN/inf; the laws do not


@_quiet
def _up_ssa(x):
    return np.mod(x + math.pi, 2 * math.pi) - math.pi


@_quiet
def _up_ref(x_d, v_d, a_d, r, wn_d, zeta_d, v_max, h):
    j_d = wn_d**3 * (r - x_d) - (2 * zeta_d + 1) * wn_d**2 * v_d - (2 * zeta_d + 1) * wn_d * a_d
    x_n, v_n, a_n = x_d + h * v_d, v_d + h * a_d, a_d + h * j_d
    return x_n, np.where(v_n > v_max, v_max, np.where(v_n < -v_max, -v_max, v_n)), a_n


@_quiet
def _up_smc(e_int, e_x, e_v, x_d, v_d, a_d, T, K, wn_d, zeta_d, K_d, K_s, lam, phi_b, r, v_max, h):
    se = _up_ssa(e_x)
    sigma = e_v + 2 * lam * se + lam**2 * e_int
    base = T * (a_d - 2 * lam * e_v - lam**2 * se) + (v_d - 2 * lam * se - lam**2 * e_int)
    base = base - K_d * sigma
    sat = np.where(np.abs(sigma / phi_b) > 1.0, np.sign(sigma), sigma / phi_b)
    delta = (base - K_s * sat) / K
    return (delta, e_int + h * se, *_up_ref(x_d, v_d, a_d, r, wn_d, zeta_d, v_max, h))


@_quiet
def _up_remus(g, s, eta, nu, h):
    z, theta, psi, w, q, r = eta[:, 2], eta[:, 4], eta[:, 5], nu[:, 2], nu[:, 4], nu[:, 5]
    z_d = math.exp(-h * g.wn_d_z) * s.z_d + (1 - math.exp(-h * g.wn_d_z)) * g.ref_z
    theta_d = g.Kp_z * ((z - z_d) + (1 / g.T_z) * s.z_int)
    e_th = _up_ssa(theta - theta_d)
    delta_s = -g.Kp_theta * e_th - g.Kd_theta * q - g.Ki_theta * s.theta_int - g.K_w * w
    d_r, e_int, psi_d, r_d, a_d = _up_smc(
        s.e_psi_int, psi - s.psi_d, r - s.r_d, s.psi_d, s.r_d, s.a_d, g.T_nomoto, g.K_nomoto,
        g.wn_d, g.zeta_d, g.K_d, g.K_sigma, g.lam, g.phi_b, g.ref_psi * (math.pi / 180),
        g.r_max, h,
    )  # fmt: skip
    u = np.stack((d_r, -delta_s, g.ref_n + np.zeros_like(z)), axis=1)
    new = (z_d, s.z_int + h * (z - z_d), s.theta_int + h * e_th, e_int, psi_d, r_d, a_d, theta_d)
    return u, new


# --------------------------------------------------------------------------- inputs

_finite = st.floats(-1e3, 1e3, allow_nan=False)
_any = st.one_of(_finite, st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, math.pi]))
_vec = st.lists(_any, min_size=6, max_size=6).map(np.array)


def _rng_block(seed: int, n: int, k: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = [rng.normal(size=n) * s for s in np.geomspace(0.01, 5.0, k)]
    for c in cols[:2]:
        c[: min(n, 4)] = [math.nan, math.inf, -math.inf, 0.0][:n]
    return cols


# --------------------------------------------------------------------------- laws


@settings(max_examples=60, deadline=None)
@given(x=_vec, v=_vec, a=_vec, r=_any, wn=st.floats(0.01, 3.0), ze=st.floats(0.1, 2.0))
def test_ref_model3_bits(x, v, a, r, wn, ze) -> None:
    """refModel3: saturation, NaN, ±inf, scalar set-point — upstream's bytes."""
    got = ap.ref_model3(x, v, a, r, wn, ze, R_MAX, H)
    want = _up_ref(x, v, a, r, wn, ze, R_MAX, H)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_ref_model3_per_vehicle_setpoint_bits() -> None:
    x, v, a, r = _rng_block(1, 500, 4)
    got = ap.ref_model3(x, v, a, r, 0.1, 1.0, R_MAX, H)
    want = _up_ref(x, v, a, r, 0.1, 1.0, R_MAX, H)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("n", [1, 7, 600])
def test_pid_pole_placement_bits(n: int) -> None:
    """PIDpolePlacement (the Otter's yaw design: m = 41.4, d = m/T·T, k = 0)."""
    e_int, e_x, e_v, x_d, v_d, a_d = _rng_block(2, n, 6)
    m, d, k, wn, zeta = 41.4, 41.4, 0, 2.5, 1.0
    got = ap.pid_pole_placement(
        e_int, e_x, e_v, x_d, v_d, a_d, m, d, k, 0.5, 1.0, wn, zeta, 0.7, 0.17, H
    )
    kp = m * wn**2.0 - k
    kd = m * 2.0 * zeta * wn - d
    ki = (wn / 10.0) * kp
    want = (
        -kp * e_x - kd * e_v - ki * e_int,
        e_int + H * e_x,
        *_up_ref(x_d, v_d, a_d, 0.7, 0.5, 1.0, 0.17, H),
    )
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


@settings(max_examples=60, deadline=None)
@given(ei=_vec, ex=_vec, ev=_vec, vd=_vec, lam=st.floats(0.01, 1.0), phi=st.floats(0.01, 1.0))
def test_integral_smc_bits(ei, ex, ev, vd, lam, phi) -> None:
    """integralSMC: both sides of the boundary layer, σ = 0, NaN/inf — upstream's bytes."""
    args = (ei, ex, ev, 0.3 * vd, vd, -vd, 1.0, 0.25, 0.1, 1.0, 0.5, 0.05, lam, phi, 0.8, R_MAX, H)
    got = ap.integral_smc(*args)
    want = _up_smc(*args)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_integral_smc_zero_divisors_follow_numpy() -> None:
    """φ_b = 0 or K = 0: inf/NaN as upstream's numpy gives them, no exception."""
    e = np.array([-1.0, 0.0, 1.0, math.nan])
    for phi_b, k in ((0.0, 0.25), (0.1, 0.0)):
        args = (e, e, e, e, e, e, 1.0, k, 0.1, 1.0, 0.5, 0.05, 0.1, phi_b, 0.8, R_MAX, H)
        got, want = ap.integral_smc(*args), _up_smc(*args)
        assert all(_same(g, w) for g, w in zip(got, want, strict=True))


# --------------------------------------------------------------------------- REMUS autopilot


def _remus_inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    eta = rng.normal(size=(n, 6)) * [10, 10, 5, 0.3, 0.3, 3]
    nu = rng.normal(size=(n, 6)) * [1, 0.3, 0.3, 0.1, 0.1, 0.1]
    if n > 2:  # non-finite vehicles beside finite ones (vehicle 2 on stays finite)
        eta[0, 5], eta[1, 2] = math.nan, math.inf
    return eta, nu


@pytest.mark.parametrize("per_vehicle", [False, True])
@pytest.mark.parametrize("n", [1, 300])
def test_remus_autopilot_bits(n: int, per_vehicle: bool) -> None:
    """Ten closed-loop steps, scalar or per-vehicle (engine plugin) set-points."""
    if per_vehicle:
        rng = np.random.default_rng(5)
        refs = dict(ref_z=rng.uniform(0, 50, n), ref_psi=rng.uniform(-180, 180, n),
                    ref_n=rng.uniform(0, 1525, n))  # fmt: skip
    else:
        refs = dict(ref_z=30.0, ref_psi=50.0, ref_n=1525.0)
    g = ap.RemusDepthHeadingGains(**refs)
    eta, nu = _remus_inputs(n, 3)
    s_got = s_want = ap.RemusDepthHeadingState.zeros(n)
    for _ in range(10):
        u_got, s_got = ap.remus_depth_heading_autopilot(g, s_got, eta, nu, H)
        u_want, new = _up_remus(g, s_want, eta, nu, H)
        s_want = ap.RemusDepthHeadingState(*new)
        assert _same(u_got, u_want)
        for f in dataclasses.fields(s_got):
            assert _same(getattr(s_got, f.name), getattr(s_want, f.name)), f.name
        eta = eta + H * nu


def test_remus_batch_equals_one_at_a_time() -> None:
    """N = 1 is the batch path: each vehicle alone gives the bytes of the (parallel) batch."""
    n = 300
    g = ap.RemusDepthHeadingGains(ref_z=20.0, ref_psi=-120.0, ref_n=1200.0)
    eta, nu = _remus_inputs(n, 9)
    state = ap.RemusDepthHeadingState.zeros(n)
    u, new = ap.remus_depth_heading_autopilot(g, state, eta, nu, H)
    for i in (0, 1, 17, n - 1):
        one = ap.RemusDepthHeadingState(*(getattr(state, f.name)[i : i + 1]
                                          for f in dataclasses.fields(state)))  # fmt: skip
        u1, new1 = ap.remus_depth_heading_autopilot(g, one, eta[i : i + 1], nu[i : i + 1], H)
        assert _same(u1[0], u[i])
        for f in dataclasses.fields(new):
            assert _same(getattr(new1, f.name), getattr(new, f.name)[i : i + 1])


def test_remus_parallel_loop_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The all-cores loop gives the serial loop's bytes."""
    g = ap.RemusDepthHeadingGains(ref_z=20.0, ref_psi=-120.0, ref_n=1200.0)
    eta, nu = _remus_inputs(64, 11)
    s = ap.RemusDepthHeadingState.zeros(64)
    u, new = ap.remus_depth_heading_autopilot(g, s, eta, nu, H)
    monkeypatch.setattr(ap, "PARALLEL_FROM", 1)
    u_p, new_p = ap.remus_depth_heading_autopilot(g, s, eta, nu, H)
    assert _same(u_p, u)
    assert all(_same(getattr(new_p, f.name), getattr(new, f.name)) for f in dataclasses.fields(s))


def test_remus_set_point_count_mismatch() -> None:
    g = ap.RemusDepthHeadingGains(ref_z=np.zeros(3))  # type: ignore[arg-type]
    eta, nu = _remus_inputs(5, 1)
    with pytest.raises(ValueError, match="3 set-points .* for 5 vehicles"):
        ap.remus_depth_heading_autopilot(g, ap.RemusDepthHeadingState.zeros(5), eta, nu, H)


def test_remus_row_is_the_fleet_torpedo_row() -> None:
    """The torpedo of the fleet and the REMUS autopilot pack the same gains (one row)."""
    g = ap.RemusDepthHeadingGains(ref_z=30.0, ref_psi=50.0, ref_n=1525.0)
    row = pvs_fleet.remus_row(g, H)
    assert row.shape == (1, 22)
    assert row[0, 0] == math.exp(-H * g.wn_d_z) and row[0, 21] == 50.0 * (math.pi / 180)
    per = pvs_fleet.remus_row(dataclasses.replace(g, ref_z=np.array([1.0, 2.0, 3.0])), H)
    assert per.shape == (3, 22) and list(per[:, 2]) == [1.0, 2.0, 3.0]
    assert _same(per[:, 3:], np.repeat(row[:, 3:], 3, axis=0))


# --------------------------------------------------------------------------- Otter, steps


def test_otter_heading_autopilot_bits() -> None:
    """The Otter's PID runs the compiled law; allocation n = sign(a)√|a|, a = B⁻¹ τ."""
    n = 50
    binv = np.array([[0.0049, 0.0994], [0.0049, -0.0994]])
    g = ap.OtterHeadingGains(binv=binv, ref=100.0)
    eta, nu = _remus_inputs(n, 4)
    s = ap.OtterHeadingState.zeros(n)
    u, s2 = ap.otter_heading_autopilot(g, s, eta, nu, H)
    m, wn, zeta = g.m, g.wn, g.zeta
    d = 1 / (g.T / g.m)
    kp, kd = m * wn**2.0 - 0, m * 2.0 * zeta * wn - d
    tau_n = -kp * eta[:, 5] - kd * nu[:, 5] - (wn / 10.0) * kp * 0.0
    assert _same(s2.tau_N, tau_n)
    a = np.stack((g.tauX + np.zeros(n), tau_n), axis=1) @ binv.T
    assert _same(u, np.sign(a) * np.sqrt(np.abs(a)))
    want = _up_ref(s.psi_d, s.r_d, s.a_d, 100.0 * math.pi / 180, g.wn_d, g.zeta_d, g.r_max, H)
    assert _same(s2.psi_d, want[0]) and _same(s2.r_d, want[1]) and _same(s2.a_d, want[2])
    assert _same(s2.e_int, 0.0 + H * eta[:, 5])


@pytest.mark.parametrize(
    ("t", "want"),
    [(0.0, (5, -5)), (50.0, (5, -5)), (math.nextafter(50.0, 99), (5, 0)), (100.0, (5, 0)),
     (math.nextafter(100.0, 200), (0, 0)), (math.nan, (5, -5))],
)  # fmt: skip
def test_remus_step_input(t: float, want: tuple[int, int]) -> None:
    u = ap.remus_step_input(t, 3)
    assert _same(u, np.tile([want[0] * (math.pi / 180), want[1] * (math.pi / 180), 1525.0], (3, 1)))


@pytest.mark.parametrize(
    ("t", "on"),
    [(30.0, False), (math.nextafter(30.0, 99), True), (math.nextafter(100.0, 0), True),
     (100.0, False), (250.0, False), (math.nan, False)],
)  # fmt: skip
def test_otter_step_input(t: float, on: bool) -> None:
    """On for 30 < t < 100 exactly (the step row's t₂ is the float just below 100)."""
    assert _same(ap.otter_step_input(t, 2), np.tile([80.0, 120.0] if on else [0.0, 0.0], (2, 1)))


def test_frames_wrap_pi_is_upstream_ssa() -> None:
    """The autopilots' ssa is the one angle wrapping, :func:`frames.wrap_pi` (no alias)."""
    x = np.array([-7.0, -math.pi, -0.0, 0.0, math.pi, 1e6, math.nan])
    with np.errstate(invalid="ignore"):
        assert _same(wrap_pi(x), _up_ssa(x))
    assert not hasattr(ap, "ssa")
