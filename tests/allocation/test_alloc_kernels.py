"""The compiled allocation kernels: N = 1 is the batch path, and the backends agree.

* On one backend, each vehicle of a batch gets bit-identical results to a call with that
  vehicle alone (shared and per-vehicle voltages, failed thrusters, the prange path).
* ``cpu`` (numba) and ``python`` (the same functions interpreted) agree to 1e-12 relative
  (they differ only where LLVM's and the C library's log/pow round differently).
* The kernel agrees with the vectorised numpy path (another summation order) to the
  total-current scale tolerance S_TOL of the spec (|Δs| ≤ 1e-6).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.allocation import kernels
from marinesim.allocation.limits import solve_total, total_scale
from marinesim.allocation.solve import Allocator, AllocatorLimits
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.errors import ConfigError

SCALE = np.array([60.0, 60.0, 80.0, 10.0, 6.0, 10.0])  # N, N·m: most demands need scaling
FIELDS = ("force", "u", "pwm", "current", "current_total", "scale", "achieved", "unmet")
CODES = ("saturated", "binding_code", "status_code")


def _demands(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tau = rng.normal(0.0, 1.0, (n, 6)) * SCALE
    tau[::17] = 0.0  # zero demands
    tau[5::23] *= 1e-4  # inside the dead band
    tau[7::29] *= 50.0  # far beyond the envelope
    tau[11::31, 3:] = 0.0  # pure force demands
    return tau


def _allocator(failed: bool = False, **limits: object) -> Allocator:
    layout = get_layout("bluerov2_heavy")
    geo = Geometry(layout, failed=[2]) if failed else Geometry(layout)
    return Allocator(geo, AllocatorLimits(**limits))


def _assert_rows_identical(batch: object, rows: list[object]) -> None:
    for name in FIELDS + CODES:
        stacked = np.concatenate([np.asarray(getattr(r, name)) for r in rows])
        got = np.asarray(getattr(batch, name))
        assert got.dtype == stacked.dtype, name
        # bit for bit (NaN-free: compare the raw bytes of the float arrays)
        assert got.tobytes() == stacked.tobytes(), name


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("failed", [False, True])
def test_pinv_single_vehicle_is_the_batch_path(mixed: bool, failed: bool) -> None:
    n = max(600, kernels.PARALLEL_MIN + 88)  # above PARALLEL_MIN: the prange kernel runs
    alloc = _allocator(failed=failed)
    tau = _demands(n, 1)
    rng = np.random.default_rng(2)
    volts = rng.uniform(10.0, 20.0, n) if mixed else np.full(n, 16.0)
    batch = alloc.pinv(tau, volts, backend="cpu")
    assert {0, 2, 3} <= set(batch.binding_code.tolist())  # none, motor and total current
    singles = [alloc.pinv(tau[i], volts[i], backend="cpu") for i in range(n)]
    _assert_rows_identical(batch, singles)


def test_pinv_python_backend_single_vehicle_is_the_batch_path() -> None:
    alloc = _allocator()
    tau = _demands(40, 3)
    batch = alloc.pinv(tau, backend="python")
    _assert_rows_identical(batch, [alloc.pinv(t, backend="python") for t in tau])


@pytest.mark.parametrize("mixed", [False, True])
def test_pinv_cpu_and_python_backends_agree(mixed: bool) -> None:
    alloc = _allocator(failed=mixed)
    n = 200
    tau = _demands(n, 4)
    volts = np.random.default_rng(5).uniform(10.0, 20.0, n) if mixed else None
    a = alloc.pinv(tau, volts, backend="cpu")
    b = alloc.pinv(tau, volts, backend="python")
    for name in FIELDS:
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=name)
    for name in CODES:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("mixed", [False, True])
def test_pinv_kernel_agrees_with_numpy_path(mixed: bool) -> None:
    alloc = _allocator()
    n = 1000
    tau = _demands(n, 6)
    volts = np.random.default_rng(7).uniform(10.0, 20.0, n) if mixed else None
    k = alloc.pinv(tau, volts)
    r = alloc.pinv(tau, volts, backend="numpy")
    # both return the feasible end of a bracket no wider than S_TOL around the same root
    np.testing.assert_allclose(k.scale, r.scale, rtol=0, atol=kernels.S_TOL)
    np.testing.assert_array_equal(k.binding_code, r.binding_code)
    np.testing.assert_array_equal(k.status_code, r.status_code)
    np.testing.assert_array_equal(k.saturated, r.saturated)
    f_tol = (
        kernels.S_TOL
        * np.abs(r.force).max(axis=1, keepdims=True)
        / np.maximum(r.scale, 1e-3)[:, None]
    )
    assert np.all(np.abs(k.force - r.force) <= f_tol + 1e-12)
    # where no total-current solve ran, the two are the same arithmetic up to rounding
    direct = r.binding_code != 3
    np.testing.assert_allclose(k.force[direct], r.force[direct], rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(k.current[direct], r.current[direct], rtol=1e-12, atol=1e-12)
    # the kernel's answer is feasible: total current within the limit
    assert np.all(k.current_total <= 50.0 * (1 + 1e-12))


def test_total_scale_kernel_single_is_batch_and_matches_numpy_secant() -> None:
    alloc = _allocator()
    rng = np.random.default_rng(8)
    n = 700
    f = rng.normal(0.0, 25.0, (n, alloc.geometry.n))
    v = rng.uniform(10.0, 20.0, n)
    ones = np.ones(n)
    s, bound = total_scale(alloc, f, v, ones, backend="cpu")
    assert bound.sum() > n // 4
    for i in range(0, n, 7):
        si, bi = total_scale(alloc, f[i : i + 1], v[i : i + 1], ones[:1], backend="cpu")
        assert si.tobytes() == s[i : i + 1].tobytes() and bi[0] == bound[i]
    sp, bp = total_scale(alloc, f[:50], v[:50], ones[:50], backend="python")
    np.testing.assert_allclose(sp, s[:50], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(bp, bound[:50])
    # the numpy secant on the model's rays (the table model's path)
    ray = alloc.model.ray(f * alloc.geometry.sigma[None, :], v)
    tot = ray.total_current(ones)
    idx = np.nonzero(tot > 50.0)[0]
    np.testing.assert_array_equal(idx, np.nonzero(bound)[0])
    ref = solve_total(ray.subset(idx), ones[idx], tot[idx] - 50.0, 50.0)
    np.testing.assert_allclose(s[idx], ref, rtol=0, atol=kernels.S_TOL)
    cur = alloc.currents(s[:, None] * f, v).sum(axis=1)
    assert np.all(cur <= 50.0 * (1 + 1e-12))


@settings(max_examples=60, deadline=None)
@given(
    tau=st.lists(st.floats(-300.0, 300.0), min_size=6, max_size=6),
    volt=st.floats(10.0, 20.0),
    imax=st.one_of(st.none(), st.floats(5.0, 120.0)),
)
def test_pinv_kernel_feasible_and_within_tolerance_of_the_exact_scale(
    tau: list[float], volt: float, imax: float | None
) -> None:
    alloc = _allocator(max_current_total=imax)
    res = alloc.pinv(np.array(tau), volt)
    lo, hi, _, _ = alloc.bounds(volt)
    f = res.force[0]
    assert np.all(f <= hi[0] + 1e-9) and np.all(f >= lo[0] - 1e-9)
    if imax is not None:
        assert res.current_total[0] <= imax * (1 + 1e-12)
    s = res.scale[0]
    if res.binding_code[0] == 3:
        # a scale S_TOL larger breaks the total limit (the kernel's root is tight)
        f_up = (s + 2 * kernels.S_TOL) / s * res.force if s > 0 else res.force
        assert alloc.currents(f_up, np.array([volt])).sum() > imax  # type: ignore[operator]
    ref = alloc.pinv(np.array(tau), volt, backend="numpy")
    assert abs(ref.scale[0] - s) <= kernels.S_TOL


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown allocation backend 'gpu'"):
        _allocator().pinv(np.ones(6), backend="gpu")
