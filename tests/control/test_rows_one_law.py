"""The PID and waypoint rows the compiled tick calls against the numpy laws, bit for bit.

:func:`~marinesim.control.pid.pid_row` / :func:`~marinesim.control.pid.heading_error_c`
and :func:`~marinesim.control.guidance.waypoint_row` are the per-row forms of
:func:`pid_update` / :func:`heading_error` and :func:`waypoint_update`; run interpreted
here over random inputs (reached and slipped waypoints, wraps with ``repeat``, finishes,
leads; integral and output limits), they must give the same bits.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.control.guidance import waypoint_init, waypoint_row, waypoint_update
from marinesim.control.pid import (
    PidGains,
    heading_error,
    heading_error_c,
    pid_init,
    pid_row,
    pid_update,
)


def test_pid_row_matches_pid_update() -> None:
    rng = np.random.default_rng(3)
    n = 50
    g = PidGains(
        np.array([1.2, 0.5, 40.0]), np.array([0.1, 0.3, 0.2]), np.array([0.2, 0.0, 1.0]),
        np.array([10.0, 20.0, 0.5]), np.array([100.0, 30.0, 100.0]),
    )  # fmt: skip
    st = pid_init((n, 3))
    mem = np.zeros((n, 2, 3))
    mem[:, 1] = np.nan
    for _ in range(30):
        des = rng.uniform(-400, 400, n)
        hdg = rng.uniform(0, 360, n)
        err = np.stack([heading_error(des, hdg), rng.normal(0, 2, n), rng.normal(0, 5, n)], 1)
        e0 = np.array([heading_error_c(d, h) for d, h in zip(des, hdg, strict=True)])
        assert e0.tobytes() == err[:, 0].tobytes()
        dt = float(rng.uniform(0.05, 0.5))
        out, st = pid_update(g, st, err, dt, active=np.ones((n, 1), dtype=bool))
        rows = np.array([
            [pid_row(g.kp[c], g.ki[c], g.kd[c], g.integral_limit[c], g.output_limit[c], mem[i], c,
                     err[i, c], dt) for c in range(3)] for i in range(n)
        ])  # fmt: skip
        assert rows.tobytes() == out.tobytes()
        assert mem[:, 0].tobytes() == st.integral.tobytes()
        assert mem[:, 1].tobytes() == st.prev_error.tobytes()


@pytest.mark.parametrize("repeat", [0, 1, -1])
@pytest.mark.parametrize("lead", [0.0, 6.0])
def test_waypoint_row_matches_waypoint_update(repeat: int, lead: float) -> None:
    rng = np.random.default_rng(11)
    n = 30
    npts = rng.integers(1, 5, n)
    pts = rng.uniform(-20, 20, (n, 4, 2))
    for i in range(n):
        pts[i, npts[i] :] = pts[i, npts[i] - 1]
    pos = rng.uniform(-20, 20, (n, 2))
    st = waypoint_init(pos)
    idx, loops = st.index.copy(), st.loops.copy()
    mind, done, prev = st.min_dist.copy(), st.done.copy(), st.prev_point.copy()
    out = np.zeros((n, 3))
    reached_any = finished = 0
    for _ in range(200):
        # steer roughly at the target, with noise: captures, slips and misses
        tgt = pts[np.arange(n), np.minimum(st.index, npts - 1)]
        pos = pos + 0.15 * (tgt - pos) + rng.normal(0, 0.8, (n, 2))
        st, heading, target, reached = waypoint_update(
            st, pos, pts, npts, capture_radius=2.0, slip_radius=5.0, lead=lead, repeat=repeat
        )
        codes = [
            waypoint_row(i, pos[i, 0], pos[i, 1], pts, npts, idx, loops, mind, done, prev,
                         2.0, 5.0, lead, repeat, out) for i in range(n)
        ]  # fmt: skip
        assert (np.array(codes) > 0).tolist() == reached.tolist()
        assert out[:, 0].tobytes() == heading.tobytes()
        assert out[:, 1:].tobytes() == target.tobytes()
        for mine, ref in ((idx, st.index), (loops, st.loops), (mind, st.min_dist),
                          (done, st.done), (prev, st.prev_point)):  # fmt: skip
            assert mine.tobytes() == ref.tobytes()
        reached_any += int(reached.sum())
        finished += codes.count(2)
    assert reached_any > 20
    assert (finished > 0) == (repeat >= 0)
