"""The ``qp`` row law (:mod:`marinesim.allocation.qp_rows`): one law, compiled or interpreted.

``Allocator.qp`` walks :func:`~marinesim.allocation.qp_rows.qp_one` over the vehicles (the
engine's generated tick calls the same function).  Over random demands, voltages, failure
patterns and force-rate windows the compiled kernel and the function interpreted
(``MARINESIM_JIT=0``) give the same bits, a vehicle alone the same bits as in a batch, and the
solution is the bounded least-squares optimum (checked against SciPy ``bvls``, the
independent reference, in ``test_solve.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.allocation.solve import Allocator, AllocatorLimits
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.errors import NumericalError

pytest.importorskip("numba")

SCALE = np.array([90.0, 90.0, 120.0, 15.0, 8.0, 15.0])
FIELDS = ("force", "u", "pwm", "current", "current_total", "scale", "achieved", "unmet",
          "saturated", "binding_code", "status_code")  # fmt: skip


def _case(seed: int, failed: tuple[int, ...], rate: float | None, n: int = 60):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    a = Allocator(Geometry(get_layout("bluerov2_heavy"), list(failed)),
                  AllocatorLimits(max_force_rate=rate))  # fmt: skip
    tau = rng.normal(0, 1, (n, 6)) * SCALE * rng.choice([0.05, 0.5, 1.5], (n, 1))
    tau[::7] = 0.0
    volts = rng.uniform(10.5, 19.5, n)
    kw = {} if rate is None else {"f_prev": rng.normal(0, 15, (n, 8)), "dt": 0.05}
    return a, tau, volts, kw


@pytest.mark.parametrize(
    ("failed", "rate"), [((), None), ((2,), None), ((0, 5), None), ((), 40.0), ((6,), 40.0)]
)
def test_compiled_equals_interpreted(
    monkeypatch: pytest.MonkeyPatch, failed: tuple[int, ...], rate: float | None
) -> None:
    a, tau, volts, kw = _case(len(failed) + int(rate or 0), failed, rate)
    fast = a.qp(tau, volts, **kw)
    monkeypatch.setenv("MARINESIM_JIT", "0")
    slow = a.qp(tau, volts, **kw)
    for name in FIELDS:
        assert getattr(fast, name).tobytes() == getattr(slow, name).tobytes(), name
    seen = set(fast.status.tolist())  # the cases cover the branches
    assert seen >= {"scaled", "zero"}
    assert rate or "total_current" in fast.binding.tolist()  # (±2 N windows: the envelope)
    assert np.all(fast.force[:, list(failed)] == 0.0)


def test_one_vehicle_alone_equals_batch() -> None:
    a, tau, volts, kw = _case(3, (1,), 40.0)
    batch = a.qp(tau, volts, **kw)
    for j in (0, 5, 17):
        one = a.qp(tau[j], volts[j], f_prev=kw["f_prev"][j], dt=kw["dt"])
        for name in FIELDS:
            assert getattr(batch, name)[j].tobytes() == getattr(one, name)[0].tobytes(), name


def test_rate_window_and_kkt() -> None:
    a, tau, volts, kw = _case(5, (), 40.0)
    res = a.qp(tau, volts, **kw)
    lo, hi, _, _ = a.bounds(volts)
    dr = 40.0 * 0.05
    wlo = np.minimum(np.maximum(lo, kw["f_prev"] - dr), hi)
    whi = np.maximum(np.minimum(hi, kw["f_prev"] + dr), lo)
    ok = res.status_code != 4  # current_limit_exceeded: the rate window won over the scale
    f = res.force[ok]
    assert np.all(f >= wlo[ok] - 1e-9) and np.all(f <= whi[ok] + 1e-9)


def test_not_converged_raises() -> None:
    from marinesim.allocation.qp import box_qp

    a = Allocator(Geometry(get_layout("bluerov2_heavy")))
    wb = a.dof_weights[:, None] * a.geometry.b
    h = wb.T @ wb + 1e-6 * np.eye(8)
    c = np.full((1, 8), 50.0)
    with pytest.raises(NumericalError, match="did not converge in 1 iterations"):
        box_qp(h, c, np.full((1, 8), -1.0), np.full((1, 8), 1.0), max_iter=1)
    f = box_qp(h, c, np.full((1, 8), -1.0), np.full((1, 8), 1.0))
    assert np.all(np.abs(f) <= 1.0)


@pytest.mark.parametrize("failed", [(), (3,), (1, 6)])
def test_redistributed_compiled_equals_interpreted(
    monkeypatch: pytest.MonkeyPatch, failed: tuple[int, ...]
) -> None:
    a, tau, volts, _ = _case(11 + len(failed), failed, None)
    w = np.random.default_rng(4).uniform(0.5, 2.0, 8)
    fast = a.redistributed_pinv(tau, volts, w)
    one = a.redistributed_pinv(tau[5], volts[5], w)
    monkeypatch.setenv("MARINESIM_JIT", "0")
    slow = a.redistributed_pinv(tau, volts, w)
    for name in FIELDS:
        assert getattr(fast, name).tobytes() == getattr(slow, name).tobytes(), name
        assert getattr(fast, name)[5].tobytes() == getattr(one, name)[0].tobytes(), name
    assert np.all(fast.force[:, list(failed)] == 0.0)
    lo, hi, _, _ = a.bounds(volts)
    assert np.all(fast.force >= lo - 1e-9) and np.all(fast.force <= hi + 1e-9)
    # met and no thruster at a bound: one round, the weighted pseudo-inverse itself
    small = (fast.status == "ok") & ~fast.saturated.any(axis=1)
    assert small.any()
    bw = a.geometry.b_active / w[None, :]
    ref = (bw.T @ np.linalg.solve(bw @ a.geometry.b_active.T, tau[small].T)).T
    np.testing.assert_allclose(fast.force[small], ref, atol=1e-9)
