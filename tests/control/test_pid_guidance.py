"""Pure control laws: PID with anti-windup, heading error wrap, waypoint guidance, lawnmower."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.control.guidance import (
    bearing_deg,
    lawnmower,
    split_lanes,
    waypoint_init,
    waypoint_update,
)
from marinesim.control.pid import PidGains, heading_error, pid_init, pid_update
from marinesim.core.errors import ConfigError

angles = st.floats(-1e4, 1e4, allow_nan=False)


@given(angles, angles)
def test_heading_error_wraps_and_is_consistent(a: float, b: float) -> None:
    e = float(heading_error(np.array([a]), np.array([b]))[0])
    assert -180.0 < e <= 180.0
    assert np.isclose(np.cos(np.radians(e)), np.cos(np.radians(a - b)), atol=1e-6)
    assert np.isclose(np.sin(np.radians(e)), np.sin(np.radians(a - b)), atol=1e-6)


@settings(deadline=None)  # the first example may compile pid_update's kernel (seconds, once)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=50), st.floats(0.0, 5.0))
def test_integral_and_output_stay_bounded(errors: list[float], lim: float) -> None:
    g = PidGains(kp=2.0, ki=0.5, kd=0.1, integral_limit=lim, output_limit=30.0)
    s = pid_init(1)
    for e in errors:
        out, s = pid_update(g, s, np.array([e]), 0.1)
        assert abs(out[0]) <= 30.0
        assert abs(s.integral[0]) <= lim + 1e-12


def test_pid_terms_and_batch_equality() -> None:
    g = PidGains(kp=1.0, ki=1.0, kd=0.5, integral_limit=100.0, output_limit=100.0)
    s = pid_init(3)
    out, s = pid_update(g, s, np.array([1.0, 2.0, np.nan]), 0.1)
    # first update: no derivative; integral ki*e*dt
    assert out == pytest.approx([1.0 + 0.1, 2.0 + 0.2, 0.0])
    out2, s = pid_update(g, s, np.array([2.0, 2.0, 1.0]), 0.1)
    assert out2[0] == pytest.approx(2.0 + 0.1 + 0.2 + 0.5 * (2.0 - 1.0) / 0.1)
    single = pid_init(1)
    o1, single = pid_update(g, single, np.array([1.0]), 0.1)
    o1, single = pid_update(g, single, np.array([2.0]), 0.1)
    assert o1[0] == out2[0]


def test_bearing() -> None:
    assert bearing_deg([0, 0, 0], [0, 0, 0], [1, 0, -1], [0, 1, 0]).tolist() == [0.0, 90.0, 180.0]


def test_lawnmower_geometry_and_split() -> None:
    pts = lawnmower(0, 0, 100, 40, 20, heading_deg=0, first_turn="right")
    assert pts.tolist() == [[0, 0], [100, 0], [100, 20], [0, 20], [0, 40], [100, 40]]
    left = lawnmower(0, 0, 100, 20, 20, heading_deg=90, first_turn="left")
    assert np.allclose(left, [[0, 0], [0, 100], [20, 100], [20, 0]])
    parts = split_lanes(pts, 2)
    assert [len(p) for p in parts] == [4, 2]
    with pytest.raises(ConfigError, match="cannot split 3 lanes among 4"):
        split_lanes(pts, 4)
    with pytest.raises(ConfigError, match="spacing > 0"):
        lawnmower(0, 0, 100, 40, 0)


def test_waypoint_capture_slip_and_done() -> None:
    pts = np.array([[[10.0, 0.0], [10.0, 10.0]]] * 2)
    npts = np.array([2, 1])
    s = waypoint_init(np.zeros((2, 2)))
    s, hdg, tgt, reached = waypoint_update(s, np.zeros((2, 2)), pts, npts, capture_radius=2.0)
    assert hdg.tolist() == [0.0, 0.0] and not reached.any()
    s, hdg, tgt, reached = waypoint_update(
        s, np.array([[9.0, 0.0], [9.0, 0.0]]), pts, npts, capture_radius=2.0
    )
    assert reached.tolist() == [True, True]
    assert s.index.tolist() == [1, 0] and s.done.tolist() == [False, True]
    assert hdg[0] == pytest.approx(bearing_deg(9, 0, 10, 10)) and np.isnan(hdg[1])
    # slip radius: passes by at 4 m without entering the 2 m capture radius
    one = np.array([[[0.0, 10.0]]])
    s = waypoint_init(np.zeros((1, 2)))
    for north in (4.0, 4.0):
        s, *_ = waypoint_update(
            s, np.array([[north, 9.0]]), one, np.array([1]), capture_radius=2.0, slip_radius=5.0
        )
    s, _h, _t, reached = waypoint_update(
        s, np.array([[4.0, 12.0]]), one, np.array([1]), capture_radius=2.0, slip_radius=5.0
    )
    assert reached[0] and s.done[0]


def test_lead_points_along_the_track() -> None:
    pts = np.array([[[100.0, 0.0]]])
    s = waypoint_init(np.zeros((1, 2)))
    # vehicle 10 m east of the track line from (0,0) to (100,0): lead 10 m aims back at 45 deg
    _s, hdg, _t, _r = waypoint_update(
        s, np.array([[0.0, 10.0]]), pts, np.array([1]), capture_radius=1.0, lead=10.0
    )
    assert hdg[0] == pytest.approx(315.0)
