"""§6.1 per-thruster rate limit of the ``qp`` allocator and the ``current_limit_exceeded`` status."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear

from marinesim.allocation.solve import Allocator, AllocatorLimits, box_qp
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.errors import ConfigError

GEOM = Geometry(get_layout("bluerov2_heavy"))


def _lsq(a: Allocator, tau: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    w = a.dof_weights
    m = np.vstack([w[:, None] * GEOM.b, np.sqrt(a.limits.eps) * np.eye(GEOM.n)])
    rhs = np.concatenate([w * tau, np.zeros(GEOM.n)])
    return lsq_linear(m, rhs, bounds=(lo, hi), method="bvls", tol=1e-14).x


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(-60, 60), min_size=8, max_size=8),
    st.lists(st.floats(-1.0, 1.0), min_size=8, max_size=8),
)
def test_box_qp_bounds_without_zero_match_bvls(c: list[float], shift: list[float]) -> None:
    # boxes that need not contain 0 (rate windows): the active set must start feasible
    a = Allocator(GEOM)
    wb = a.dof_weights[:, None] * GEOM.b
    h = wb.T @ wb + a.limits.eps * np.eye(GEOM.n)
    centre = 20.0 * np.asarray(shift)
    lo, hi = (centre - 5.0)[None, :], (centre + 5.0)[None, :]
    f = box_qp(h, np.asarray(c)[None, :], lo, hi)[0]
    assert np.all(f >= lo[0] - 1e-12) and np.all(f <= hi[0] + 1e-12)
    # KKT of min ½fᵀHf − cᵀf on the box: gradient zero on free variables, pointing outwards
    # at active bounds (tolerance from the conditioning, H has eigenvalues down to ε = 1e−6)
    g = h @ f - np.asarray(c)
    tol = 1e-8 * (1.0 + np.abs(h).sum(axis=1) * np.abs(f).max() + np.abs(c).max())
    at_lo = f <= lo[0] + 1e-9
    at_hi = f >= hi[0] - 1e-9
    free = ~(at_lo | at_hi)
    assert np.all(np.abs(g[free]) <= tol[free])
    assert np.all(g[at_lo] >= -tol[at_lo]) and np.all(g[at_hi] <= tol[at_hi])


def test_rate_limit_window_respected_and_optimal() -> None:
    lim = AllocatorLimits(max_force_rate=50.0, max_current_total=None)
    a = Allocator(GEOM, lim)
    f_prev = np.array([5.0, -5.0, 5.0, -5.0, 10.0, 10.0, 10.0, 10.0])
    tau = np.array([50.0, 0.0, -40.0, 0.0, 0.0, 5.0])
    res = a.qp(tau, f_prev=f_prev, dt=0.1)  # window ±5 N around f_prev
    f = res.force[0]
    assert np.all(np.abs(f - f_prev) <= 5.0 + 1e-9)
    lo_e, hi_e, _, _ = a.bounds()
    lo = np.maximum(lo_e[0], f_prev - 5.0)
    hi = np.minimum(hi_e[0], f_prev + 5.0)
    np.testing.assert_allclose(f, _lsq(a, tau, lo, hi), atol=1e-6)
    assert res.status[0] == "scaled"  # the demand cannot be met inside the window
    assert np.any(np.abs(res.unmet[0]) > 1.0)
    # without the rate limit the same demand is met exactly
    free = Allocator(GEOM, AllocatorLimits(max_current_total=None)).qp(tau)
    np.testing.assert_allclose(free.achieved[0], tau, atol=1e-6)


def test_previous_force_outside_envelope_envelope_wins() -> None:
    a = Allocator(GEOM, AllocatorLimits(max_force_rate=10.0, max_current_total=None))
    lo_e, hi_e, _, _ = a.bounds(12.0)
    f_prev = hi_e[0] + 8.0  # e.g. after the battery sagged from 16 V to 12 V
    res = a.qp(np.array([300.0, 0, 0, 0, 0, 0]), 12.0, f_prev=f_prev, dt=0.1)
    assert np.all(res.force[0] <= hi_e[0] + 1e-9) and np.all(res.force[0] >= lo_e[0] - 1e-9)


def test_current_limit_exceeded_when_rate_limit_wins() -> None:
    lim = AllocatorLimits(max_force_rate=20.0, max_current_total=50.0)
    a = Allocator(GEOM, lim)
    lo, hi, _, _ = a.bounds()
    f_prev = 0.95 * np.where(np.arange(8) % 2 == 0, hi[0], lo[0])  # all thrusters hard on
    tau = f_prev @ GEOM.b.T
    res = a.qp(tau, f_prev=f_prev, dt=0.01)  # ±0.2 N window: cannot shed the current
    assert res.status[0] == "current_limit_exceeded"
    assert res.current_total[0] > 50.0
    assert np.all(np.abs(res.force[0] - f_prev) <= 0.2 + 1e-9)
    # a wide window lets the uniform current scale act: limit met, status "scaled"
    ok = a.qp(tau, f_prev=f_prev, dt=10.0)
    assert ok.status[0] == "scaled" and ok.current_total[0] <= 50.0 + 1e-6


def test_rate_limit_bad_inputs() -> None:
    a = Allocator(GEOM, AllocatorLimits(max_force_rate=10.0))
    with pytest.raises(ConfigError, match="dt"):
        a.qp(np.ones(6), f_prev=np.zeros(8), dt=0.0)
    with pytest.raises(ConfigError, match="f_prev"):
        a.qp(np.ones(6), f_prev=np.zeros(5), dt=0.1)
    with pytest.raises(ConfigError, match="f_prev"):
        a.qp(np.ones(6), f_prev=np.full(8, np.nan), dt=0.1)
