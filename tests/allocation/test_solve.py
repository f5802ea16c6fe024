"""Allocation with T200 limits: exact scaling, constrained modes, spec figures §9.4–9.6."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear

from marinesim.actuators.t200 import ZERO_FORCE, T200Cubic, T200Table, envelope
from marinesim.allocation.solve import (
    Allocator,
    AllocatorLimits,
    allocate_pinv,
    max_axis_wrench,
)
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core import registry
from marinesim.core.errors import ConfigError

CSV = (
    Path(__file__).resolve().parents[3] / "shared" / "data" / "t200" / "t200_performance_10-20V.csv"
)
needs_data = pytest.mark.skipif(not CSV.is_file(), reason="T200 data not available")
NO_CURRENT = {"max_current_per_thruster": None, "max_current_total": None}
F_FWD, F_REV = 51.43622732069733, -39.90792903824067


@pytest.fixture(scope="module")
def table() -> T200Table:
    if not CSV.is_file():
        pytest.skip("T200 data not available")
    a = np.loadtxt(CSV, delimiter=",", skiprows=1)
    return T200Table(a[:, 0], a[:, 1], a[:, 7], a[:, 3])


@pytest.fixture(scope="module")
def heavy() -> Geometry:
    return Geometry(get_layout("bluerov2_heavy"))


@pytest.fixture(scope="module")
def alloc(heavy: Geometry) -> Allocator:
    return Allocator(heavy)


def _maxima(a: Allocator, mode: str) -> list[tuple[float, float]]:
    return [(max_axis_wrench(a, k, 1.0, mode), max_axis_wrench(a, k, -1.0, mode)) for k in range(6)]  # type: ignore[arg-type]


# ---- §9.4 -------------------------------------------------------------------------------------


def test_bounds_are_asymmetric_and_voltage_dependent(heavy: Geometry) -> None:
    a = Allocator(heavy, AllocatorLimits(**NO_CURRENT))
    lo, hi, _, _ = a.bounds(16.0)
    np.testing.assert_allclose(hi, F_FWD, atol=1e-9)
    np.testing.assert_allclose(lo, F_REV, atol=1e-9)
    flipped = Allocator(
        Geometry(get_layout("bluerov2_heavy", "flipped")), AllocatorLimits(**NO_CURRENT)
    )
    lo_f, hi_f, _, _ = flipped.bounds(16.0)
    np.testing.assert_allclose(hi_f, -F_REV, atol=1e-9)
    np.testing.assert_allclose(lo_f, -F_FWD, atol=1e-9)
    lo12, hi12, _, _ = a.bounds(12.0)
    assert np.all(hi12 < hi) and np.all(lo12 > lo)
    sym = Allocator(heavy, AllocatorLimits(symmetric_bounds=True, **NO_CURRENT))
    lo_s, hi_s, _, _ = sym.bounds(16.0)
    np.testing.assert_allclose(hi_s, -F_REV, atol=1e-9)
    np.testing.assert_allclose(lo_s, F_REV, atol=1e-9)


def test_max_wrench_symmetric_bounds(heavy: Geometry) -> None:
    a = Allocator(heavy, AllocatorLimits(symmetric_bounds=True, **NO_CURRENT))
    expect = [112.9, 110.5, 159.6, 34.3, 18.8, 26.75]
    for mode in ("pinv", "lp"):
        for (p, n), e in zip(_maxima(a, mode), expect, strict=True):
            assert p == pytest.approx(e, abs=0.06) and n == pytest.approx(e, abs=0.06)


def test_max_wrench_asymmetric_bounds(heavy: Geometry) -> None:
    a = Allocator(heavy, AllocatorLimits(**NO_CURRENT))
    lp = _maxima(a, "lp")
    pv = _maxima(a, "pinv")
    lp_expect = [
        (129.2, 129.2),
        (126.5, 126.5),
        (205.7, 159.6),
        (34.3, 34.3),
        (18.8, 18.8),
        (30.6, 30.6),
    ]
    pv_expect = [
        (112.9, 112.9),
        (110.5, 110.5),
        (205.7, 159.6),
        (34.3, 34.3),
        (18.8, 18.8),
        (26.8, 26.8),
    ]
    np.testing.assert_allclose(lp, lp_expect, atol=0.06)
    np.testing.assert_allclose(pv, pv_expect, atol=0.06)
    flipped = Allocator(
        Geometry(get_layout("bluerov2_heavy", "flipped")), AllocatorLimits(**NO_CURRENT)
    )
    z = (max_axis_wrench(flipped, 2, 1.0, "lp"), max_axis_wrench(flipped, 2, -1.0, "lp"))
    np.testing.assert_allclose(z, (159.6, 205.7), atol=0.06)


# ---- §9.5 (current from the measured 16 V table) ---------------------------------------------


@needs_data
def test_current_limited_pinv_figures(heavy: Geometry, table: T200Table) -> None:
    a = Allocator(heavy, AllocatorLimits(t200_model="table"), table=table)
    expect = [(85.5, 85.5), (84.5, 84.5), (138.8, 109.6), (26.0, 26.0), (14.3, 14.3), (20.3, 20.3)]
    np.testing.assert_allclose(_maxima(a, "pinv"), expect, atol=0.06)


@needs_data
@pytest.mark.parametrize(
    ("axis", "sign", "value"),
    [(0, 1.0, 88.8), (1, -1.0, 88.6), (2, 1.0, 139.1), (2, -1.0, 109.6), (5, 1.0, 21.0)],
)
def test_current_limited_optimised_figures(
    heavy: Geometry, table: T200Table, axis: int, sign: float, value: float
) -> None:
    a = Allocator(heavy, AllocatorLimits(t200_model="table"), table=table)
    w = max_axis_wrench(a, axis, sign, "exact")
    assert w == pytest.approx(value, abs=0.06)
    assert w >= max_axis_wrench(a, axis, sign, "pinv")


def test_exact_maximum_lp_certificate_matches_milp(alloc: Allocator) -> None:
    # "exact" skips the MILP when the convex-hull LP optimum already meets the model's own
    # total current (then it is the global optimum of the relaxation and of the problem);
    # both discretise the cubic current curve, so they agree to the sampling error
    for axis, sign in ((0, 1.0), (1, -1.0), (5, 1.0)):
        lp_path = max_axis_wrench(alloc, axis, sign, "exact")
        milp = alloc.max_wrench_exact(np.eye(6)[axis] * sign)
        assert lp_path == pytest.approx(milp, rel=1e-4)


def test_total_current_binds_first_on_heave(alloc: Allocator) -> None:
    # §9.5: on Z the 50 A total binds first (12.5 A per vertical thruster)
    w = max_axis_wrench(alloc, 2, 1.0, "pinv")
    res = alloc.pinv([0, 0, 1.01 * w, 0, 0, 0])
    assert res.binding[0] == "total_current"
    assert res.current_total[0] == pytest.approx(50.0, abs=1e-3)
    np.testing.assert_allclose(res.current[0, 4:], 12.5, atol=1e-3)


# ---- §9.6 ------------------------------------------------------------------------------------


def test_failure_reallocation_figures(heavy: Geometry) -> None:
    a = Allocator(heavy.with_failed(0), AllocatorLimits(**NO_CURRENT))
    got = [(max_axis_wrench(a, k, 1.0, "lp"), max_axis_wrench(a, k, -1.0, "lp")) for k in (0, 1, 5)]
    np.testing.assert_allclose(got, [(72.7, 56.4), (55.3, 71.2), (13.4, 17.2)], atol=0.06)
    assert max_axis_wrench(a, 2, 1.0, "lp") == pytest.approx(205.7, abs=0.06)
    v = Allocator(heavy.with_failed(6), AllocatorLimits(**NO_CURRENT))
    got = [(max_axis_wrench(v, k, 1.0, "lp"), max_axis_wrench(v, k, -1.0, "lp")) for k in (2, 3, 4)]
    np.testing.assert_allclose(got, [(102.9, 79.8), (17.2, 17.2), (9.4, 9.4)], atol=0.06)


def test_failure_not_told_leaks(heavy: Geometry) -> None:
    f = heavy.b_pinv @ np.array([1.0, 0, 0, 0, 0, 0])
    f[0] = 0.0  # motor 1 dead, allocator not told
    np.testing.assert_allclose(heavy.b @ f, [0.75, 0.25, 0, 0, 0, 0.058], atol=5e-4)


def test_failed_thruster_gets_zero_and_demand_is_still_met(heavy: Geometry) -> None:
    a = Allocator(heavy.with_failed(0))
    tau = np.array([20.0, -10.0, 15.0, 1.0, -1.0, 2.0])
    for res in (a.pinv(tau), a.qp(tau), a.direct(tau)):
        assert res.force[0, 0] == 0.0
        np.testing.assert_allclose(res.achieved[0], tau, atol=1e-6)
        assert res.status[0] == "ok"


# ---- pinv: exact scaling properties ----------------------------------------------------------

TAU = st.tuples(
    *(st.floats(-300, 300) for _ in range(3)), *(st.floats(-60, 60) for _ in range(3))
).map(np.array)


def _oracle_scale(a: Allocator, tau: np.ndarray, v: float) -> float:
    """60-step bisection on the full feasibility test (independent of the closed form)."""
    m = T200Cubic()
    f0 = a.geometry.b_pinv @ tau
    fmax, fmin = envelope(v)
    imax, itot = a.limits.max_current_per_thruster, a.limits.max_current_total

    def ok(s: float) -> bool:
        big = a.geometry.sigma * s * f0
        u = m.force_to_u(big, v)
        cur = m.current(big, v)
        return bool(
            np.all((big <= fmax) & (big >= fmin))
            and np.all(np.abs(u) <= 1.0)
            and np.all(cur <= imax)
            and cur.sum() <= itot
        )

    if ok(1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


_HEAVY_ALLOC = Allocator(Geometry(get_layout("bluerov2_heavy")))


@settings(max_examples=40, deadline=None)
@given(TAU, st.floats(10.0, 20.0))
def test_scale_exact_and_feasible(tau: np.ndarray, v: float) -> None:
    a = _HEAVY_ALLOC
    res = a.pinv(tau, v)
    s = float(res.scale[0])
    s_true = _oracle_scale(a, tau, v)
    assert s_true - 1e-6 <= s <= s_true + 1e-9
    assert np.all(np.abs(res.u) <= 1.0 + 1e-9)
    assert np.all(res.current <= 15.0 + 1e-6)
    assert res.current_total[0] <= 50.0 + 1e-6
    np.testing.assert_allclose(res.achieved[0], s * tau, atol=1e-9 * (1 + np.abs(tau).max()))
    if np.any(tau != 0):
        assert s > 1e-6 and res.status[0] in ("ok", "scaled")  # never silently all-neutral
        # neutral PWM only where every allocated force is inside the T200 dead band
        # (|F| < ZERO_FORCE = 0.01 kgf, the allocator's documented neutral threshold)
        assert np.any(res.pwm != 1500.0) or np.all(np.abs(res.force) < ZERO_FORCE)
    if s_true == 1.0:
        np.testing.assert_allclose(res.achieved[0], tau, atol=1e-9 * (1 + np.abs(tau).max()))
        assert res.status[0] in ("ok", "zero")


@settings(max_examples=25, deadline=None)
@given(TAU, st.floats(1.0, 5.0), st.floats(10.0, 20.0))
def test_scaling_monotone_in_demand(tau: np.ndarray, c: float, v: float) -> None:
    a = _HEAVY_ALLOC
    r1, r2 = a.pinv(tau, v), a.pinv(c * tau, v)
    assert r2.scale[0] <= r1.scale[0] + 1e-9
    # achieved wrench (same direction) never shrinks when the demand grows
    assert np.linalg.norm(r2.achieved[0]) >= np.linalg.norm(r1.achieved[0]) - 2e-6 * np.linalg.norm(
        c * tau
    )


def test_batch_equals_single_calls(alloc: Allocator) -> None:
    rng = np.random.default_rng(3)
    tau = rng.normal(0, 80, (7, 6))
    volts = rng.uniform(10, 20, 7)
    batch = alloc.pinv(tau, volts)
    for j in range(7):
        one = alloc.pinv(tau[j], volts[j])
        # element-wise equal up to BLAS summation order (1 ulp)
        np.testing.assert_allclose(batch.force[j], one.force[0], rtol=1e-14, atol=1e-13)
        np.testing.assert_allclose(batch.pwm[j], one.pwm[0], rtol=1e-14, atol=1e-10)
        assert batch.status[j] == one.status[0]
    q = alloc.qp(tau[:3], volts[:3])
    for j in range(3):
        np.testing.assert_allclose(q.force[j], alloc.qp(tau[j], volts[j]).force[0], atol=1e-12)


def test_zero_demand_and_statuses(alloc: Allocator) -> None:
    res = alloc.pinv(np.zeros((2, 6)))
    assert list(res.status) == ["zero", "zero"]
    assert np.all(res.pwm == 1500.0)
    big = alloc.pinv([1e4, 0, 0, 0, 0, 0])
    assert big.status[0] == "scaled" and big.scale[0] > 0
    assert big.unmet[0, 0] == pytest.approx(1e4 - big.achieved[0, 0])


def test_mrobosub_cliff_cases_give_output() -> None:
    # MRoboSub geometry, 14.8 V, its constants: large negative surge / downward heave demands fell
    # off MRoboSub's 5-step bisection to all-neutral outputs; here they are scaled exactly.
    a = Allocator(
        Geometry(get_layout("mrobosub")), AllocatorLimits(voltage=14.8, t200_profile="mrobosub")
    )
    for tau in (
        [-300 * 9.80665, 0, 0, 0, 0, 0],
        [0, 0, 400 * 9.80665, 0, 0, 0],
        [-100, 0, 0, 0, 0, 0],
    ):
        res = a.pinv(tau)
        assert res.scale[0] > 1e-3
        assert np.any(np.abs(res.pwm[0] - 1500.0) > 30.0)
        assert res.current_total[0] <= 50.0 + 1e-6


def test_bad_inputs(alloc: Allocator, heavy: Geometry) -> None:
    with pytest.raises(ConfigError, match="shape"):
        alloc.pinv(np.zeros(5))
    with pytest.raises(ConfigError, match="voltage"):
        alloc.pinv(np.ones(6), 25.0)
    with pytest.raises(ConfigError, match="one value per vehicle"):
        alloc.pinv(np.ones((3, 6)), [12.0, 14.0])
    with pytest.raises(ConfigError, match="finite"):
        alloc.pinv([np.nan, 0, 0, 0, 0, 0])
    with pytest.raises(ConfigError, match="table"):
        Allocator(heavy, AllocatorLimits(t200_model="table"))
    with pytest.raises(ConfigError, match="extra field"):
        from marinesim.core.params import validate

        validate(AllocatorLimits, {"max_curent_total": 40})


def test_functional_api_and_registry(heavy: Geometry) -> None:
    tau = np.array([10.0, 0, 0, 0, 0, 0])
    res = allocate_pinv(heavy, tau)
    np.testing.assert_allclose(res.achieved[0], tau, atol=1e-12)
    fn = registry.get("allocator", "qp")
    np.testing.assert_allclose(fn(heavy, tau).achieved[0], tau, atol=1e-6)


# ---- constrained modes ----------------------------------------------------------------------


def test_qp_matches_lsq_linear_oracle(heavy: Geometry) -> None:
    a = Allocator(heavy, AllocatorLimits(**NO_CURRENT))
    w = a.dof_weights
    tau = np.array([150.0, 60.0, -120.0, 10.0, -8.0, 25.0])  # infeasible: saturates
    res = a.qp(tau)
    lo, hi, _, _ = a.bounds()
    mat = np.vstack([w[:, None] * heavy.b, np.sqrt(1e-6) * np.eye(8)])
    ref = lsq_linear(
        mat, np.concatenate([w * tau, np.zeros(8)]), bounds=(lo[0], hi[0]), method="trf", tol=1e-14
    )
    np.testing.assert_allclose(res.force[0], ref.x, atol=1e-8)
    assert np.all(res.force[0] <= hi[0] + 1e-12) and np.all(res.force[0] >= lo[0] - 1e-12)
    assert res.status[0] == "scaled" and np.any(res.saturated[0])


def test_qp_priorities_keep_attitude() -> None:
    # Wu geometry: surge couples into pitch, which the verticals must cancel
    g = Geometry(get_layout("bluerov2_heavy_wu2018"))
    a = Allocator(g, AllocatorLimits(**NO_CURRENT))
    tau = np.array([400.0, 0.0, 0.0, 5.0, -5.0, 0.0])
    res = a.qp(tau, dof_weights=[1, 1, 1, 1000, 1000, 1])
    np.testing.assert_allclose(res.achieved[0, 3:5], tau[3:5], atol=1e-2)
    assert res.achieved[0, 0] < 400.0
    flat = a.qp(tau, dof_weights=[1, 1, 1, 1, 1, 1])
    assert np.abs(flat.unmet[0, 3:5]).sum() > np.abs(res.unmet[0, 3:5]).sum()


def test_qp_and_direct_respect_current_limits(alloc: Allocator) -> None:
    tau = np.array([120.0, 0.0, 100.0, 0.0, 0.0, 10.0])
    for res in (alloc.qp(tau), alloc.direct(tau)):
        assert np.all(res.current <= 15.0 + 1e-6)
        assert res.current_total[0] <= 50.0 + 1e-6
        assert np.all(np.abs(res.u) <= 1.0 + 1e-9)
    d = alloc.direct(tau)
    # direct preserves the direction of the demand
    np.testing.assert_allclose(d.achieved[0], d.scale[0] * tau, atol=1e-6)


def test_direct_meets_feasible_demand(alloc: Allocator) -> None:
    tau = np.array([30.0, -20.0, 40.0, 2.0, 1.0, -3.0])
    res = alloc.direct(tau)
    assert res.scale[0] == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(res.achieved[0], tau, atol=1e-6)
    p = alloc.pinv(tau)
    assert p.status[0] == "ok"
    # second stage minimises current: never more than the pseudo-inverse's
    assert res.current_total[0] <= p.current_total[0] + 0.05


def test_wu_geometry_figures(table: T200Table) -> None:
    # §9.5: Wu geometry X ±112.9 N (LP 129.2) and N ±30.1 N·m without current limits, but only
    # X ±71 N under the current limits (pitch must be cancelled with the verticals)
    g = Geometry(get_layout("bluerov2_heavy_wu2018"))
    free = Allocator(g, AllocatorLimits(**NO_CURRENT))
    assert max_axis_wrench(free, 0, 1.0, "pinv") == pytest.approx(112.9, abs=0.06)
    assert max_axis_wrench(free, 0, 1.0, "lp") == pytest.approx(129.2, abs=0.06)
    assert max_axis_wrench(free, 5, -1.0, "pinv") == pytest.approx(30.1, abs=0.06)
    limited = Allocator(g, AllocatorLimits(t200_model="table"), table=table)
    assert max_axis_wrench(limited, 0, 1.0, "pinv") == pytest.approx(71.0, abs=0.3)


def test_many_distinct_voltages(alloc: Allocator) -> None:
    rng = np.random.default_rng(7)
    n = 3000
    tau = rng.normal(0, 60, (n, 6))
    volts = rng.uniform(10.0, 20.0, n)
    batch = alloc.pinv(tau, volts)
    for j in (0, 1234, n - 1):
        one = alloc.pinv(tau[j], volts[j])
        np.testing.assert_allclose(batch.force[j], one.force[0], rtol=1e-12, atol=1e-12)
    assert np.all(batch.current_total <= 50.0 + 1e-6)
    assert np.all(np.abs(batch.u) <= 1.0 + 1e-9)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(), (0,), (6,)]))
def test_batched_qp_equals_scipy_reference(seed: int, failed: tuple[int, ...]) -> None:
    g = Geometry(get_layout("bluerov2_heavy_wu2018")).with_failed(*failed)
    a = Allocator(g)
    rng = np.random.default_rng(seed)
    tau = rng.normal(0, 1, (12, 6)) * np.array([90, 90, 120, 15, 8, 15])
    volts = rng.uniform(10, 20, 12)
    rb, rs = a.qp(tau, volts), a.qp(tau, volts, solver="scipy")
    # the ε-regularised problem is flat along B's null space: compare objective and wrench
    np.testing.assert_allclose(rb.achieved, rs.achieved, atol=1e-6)
    np.testing.assert_allclose(rb.force, rs.force, atol=2e-5)
    assert list(rb.status) == list(rs.status)
    assert np.all(rb.force[:, list(failed)] == 0.0)


def test_box_qp_kkt() -> None:
    from marinesim.allocation.solve import box_qp

    rng = np.random.default_rng(5)
    m = rng.normal(size=(8, 8))
    h = m @ m.T + 0.1 * np.eye(8)
    c = rng.normal(0, 5, (50, 8))
    lo, hi = -np.ones((50, 8)), 2 * np.ones((50, 8))
    f = box_qp(h, c, lo, hi)
    grad = f @ h - c
    at_lo, at_hi = f <= lo + 1e-12, f >= hi - 1e-12
    free = ~at_lo & ~at_hi
    assert np.all(np.abs(grad[free]) < 1e-9)
    assert np.all(grad[at_lo] > -1e-9) and np.all(grad[at_hi] < 1e-9)
    assert np.all((f >= lo) & (f <= hi))


def test_mrobosub_worked_examples() -> None:
    # §5.3: MRoboSub geometry, 14.8 V, its constants, demands in its node's kgf units
    kgf = 9.80665
    a = Allocator(
        Geometry(get_layout("mrobosub")), AllocatorLimits(voltage=14.8, t200_profile="mrobosub")
    )
    feasible = [  # (tau, thrusters, PWM, total current) where MRoboSub outputs scale 1
        ([3 * kgf, 0, 0, 0, 0, 0], slice(0, 4), 1649.0, 7.9),
        ([8 * kgf, 0, 0, 0, 0, 0], slice(0, 4), 1782.0, 38.2),
        ([0, 0, -8 * kgf, 0, 0, 0], slice(4, 8), 1727.0, 22.4),
    ]
    for tau, sl, pwm, amps in feasible:
        r = a.pinv(tau)
        assert r.scale[0] == 1.0
        np.testing.assert_allclose(r.pwm[0, sl], pwm, atol=1.0)
        assert r.current_total[0] == pytest.approx(amps, abs=0.06)
    # MRoboSub's 5-step bisection (and signed pre-scale) reaches 0.461 and 0.375; the exact
    # scale reaches further and sits on the 50 A limit
    for tau, theirs in (([20 * kgf, 0, 0, 0, 0, 0], 0.461), ([-20 * kgf, 0, 0, 0, 0, 0], 0.375)):
        r = a.pinv(tau)
        assert r.scale[0] > theirs
        assert r.current_total[0] == pytest.approx(50.0, abs=1e-3)
        assert r.binding[0] == "total_current"


def test_redistributed_pinv(heavy: Geometry) -> None:
    a = Allocator(heavy, AllocatorLimits(**NO_CURRENT))
    small = np.array([10.0, -5.0, 20.0, 1.0, 0.5, -1.0])
    np.testing.assert_allclose(a.redistributed_pinv(small).force, a.pinv(small).force, atol=1e-9)
    # 120 N surge: beyond uniform scaling (112.9) but attainable (129.2): redistributed meets it
    r = a.redistributed_pinv([120.0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(r.achieved[0], [120.0, 0, 0, 0, 0, 0], atol=1e-9)
    assert r.status[0] == "ok" and a.pinv([120.0, 0, 0, 0, 0, 0]).scale[0] < 1.0
    lo, hi, _, _ = a.bounds()
    assert np.all(r.force <= hi + 1e-12) and np.all(r.force >= lo - 1e-12)
    limited = Allocator(heavy).redistributed_pinv(np.random.default_rng(2).normal(0, 80, (20, 6)))
    assert np.all(limited.current <= 15.0 + 1e-6) and np.all(limited.current_total <= 50.0 + 1e-6)
    assert registry.get("allocator", "redistributed_pinv")(heavy, small).status[0] == "ok"


@needs_data
def test_table_model_takes_the_row_laws_forces(heavy: Geometry, table: T200Table) -> None:
    # the measured-table model: the qp / redistributed row laws give the forces, the table's
    # rays scale and evaluate them in numpy
    a = Allocator(heavy, AllocatorLimits(t200_model="table"), table=table)
    rng = np.random.default_rng(3)
    tau = rng.normal(0, 1, (15, 6)) * np.array([90, 90, 120, 15, 8, 15])
    volts = rng.uniform(11, 19, 15)
    rb, rs = a.qp(tau, volts), a.qp(tau, volts, solver="scipy")
    np.testing.assert_allclose(rb.achieved, rs.achieved, atol=1e-6)
    assert list(rb.status) == list(rs.status) and "scaled" in list(rb.status)
    assert np.all(rb.current_total <= 50.0 + 1e-6)
    rd = a.redistributed_pinv(tau, volts)
    lo, hi, _, _ = a.bounds(volts)
    assert np.all(rd.force >= lo - 1e-9) and np.all(rd.force <= hi + 1e-9)
    assert np.all(rd.current_total <= 50.0 + 1e-6)
