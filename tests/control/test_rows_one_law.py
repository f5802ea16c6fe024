"""The PID and waypoint laws, compiled and interpreted: the same bits.

:func:`~marinesim.control.pid.pid_update` and
:func:`~marinesim.control.guidance.waypoint_update` walk the one copy of each law, the rows
:func:`~marinesim.control.pid.pid_row` and :func:`~marinesim.control.guidance.waypoint_row`
(also called by the compiled tick): through a compiled kernel when jit is enabled, interpreted
under ``MARINESIM_JIT=0``.  Over random inputs (NaN and infinite errors, inactive loops,
integral and output limits; reached and slipped waypoints, wraps with ``repeat``, finishes,
leads) both walks must give the same bits, and
:func:`~marinesim.core.frames.angle180_c` of the difference (the row form the compiled tick
uses) the bits of :func:`heading_error`.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.control.guidance import waypoint_init, waypoint_update
from marinesim.control.pid import PidGains, heading_error, pid_init, pid_update
from marinesim.core.frames import angle180_c


def _both(monkeypatch: pytest.MonkeyPatch, fn, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
    monkeypatch.delenv("MARINESIM_JIT", raising=False)
    compiled = fn(*args, **kw)
    monkeypatch.setenv("MARINESIM_JIT", "0")
    interp = fn(*args, **kw)
    monkeypatch.delenv("MARINESIM_JIT")
    return compiled, interp


def test_angle180_c_matches_heading_error() -> None:
    rng = np.random.default_rng(5)
    des = np.concatenate([rng.uniform(-1000, 1000, 400), [0.0, 180.0, -180.0, 360.0, np.nan]])
    hdg = np.concatenate([rng.uniform(-400, 800, 400), [180.0, 0.0, 0.0, -1e-300, 0.0]])
    e0 = np.array([angle180_c(d - h) for d, h in zip(des, hdg, strict=True)])
    assert e0.tobytes() == heading_error(des, hdg).tobytes()


@pytest.mark.parametrize("n", [1, 300])
def test_pid_update_compiled_equals_interpreted(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    rng = np.random.default_rng(3)
    g = PidGains(
        np.array([1.2, 0.5, 40.0]), np.array([0.1, 0.3, 0.2]), np.array([0.2, 0.0, 1.0]),
        np.array([10.0, 20.0, 0.5]), np.array([100.0, 30.0, 100.0]),
    )  # fmt: skip
    st = pid_init((n, 3))
    limited = 0
    for _ in range(30):
        err = np.stack([rng.uniform(-180, 180, n), rng.normal(0, 2, n), rng.normal(0, 5, n)], 1)
        err[rng.random((n, 3)) < 0.05] = np.nan
        err[rng.random((n, 3)) < 0.02] = -np.inf
        active = rng.random((n, 1)) < 0.9
        dt = float(rng.uniform(0.05, 0.5))
        (out, st_c), (out_i, st_i) = _both(monkeypatch, pid_update, g, st, err, dt, active=active)
        assert out.tobytes() == out_i.tobytes()
        assert st_c.integral.tobytes() == st_i.integral.tobytes()
        assert st_c.prev_error.tobytes() == st_i.prev_error.tobytes()
        off = ~(np.isfinite(err) & active)
        assert (out[off] == 0.0).all()
        assert (st_c.integral[off] == st.integral[off]).all()
        limited += int((np.abs(out) == g.output_limit).sum())
        st = st_c
    assert limited > 0  # the output clamp was exercised


@pytest.mark.parametrize("repeat", [0, 1, -1])
@pytest.mark.parametrize("lead", [0.0, 6.0])
def test_waypoint_update_compiled_equals_interpreted(
    monkeypatch: pytest.MonkeyPatch, repeat: int, lead: float
) -> None:
    rng = np.random.default_rng(11)
    n = 30
    npts = rng.integers(1, 5, n)
    pts = rng.uniform(-20, 20, (n, 4, 2))
    for i in range(n):
        pts[i, npts[i] :] = pts[i, npts[i] - 1]
    pos = rng.uniform(-20, 20, (n, 2))
    st = waypoint_init(pos)
    reached_any = 0
    kw = {"capture_radius": 2.0, "slip_radius": 5.0, "lead": lead, "repeat": repeat}
    for _ in range(200):
        # steer roughly at the target, with noise: captures, slips and misses
        tgt = pts[np.arange(n), np.minimum(st.index, npts - 1)]
        pos = pos + 0.15 * (tgt - pos) + rng.normal(0, 0.8, (n, 2))
        comp, interp = _both(monkeypatch, waypoint_update, st, pos, pts, npts, **kw)
        for a, b in zip(comp[1:], interp[1:], strict=True):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        for f in ("index", "loops", "min_dist", "done", "prev_point"):
            a, b = getattr(comp[0], f), getattr(interp[0], f)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f
        st = comp[0]
        assert np.isnan(comp[1][st.done]).all()
        reached_any += int(comp[3].sum())
    assert reached_any > 20
    assert bool(st.done.any()) == (repeat >= 0)
