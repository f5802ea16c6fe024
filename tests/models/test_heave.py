"""``sitl_vertical`` heave model (SURFTRAK spec §10): forces, drag laws, hard floor, surface."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.models.heave import HeaveParams, acceleration, init, step, step_zv

DT = 0.0025


def test_hover_thrust_cancels_buoyancy_and_thrust_scale():
    p = HeaveParams()
    assert p.hover_thrust == pytest.approx(-0.19 / 5.0)
    assert acceleration(p, 0.0, p.hover_thrust, -5.0) == pytest.approx(0.0, abs=1e-15)
    # full thrust: two thrusters x 2.5 m/s^2 + buoyancy
    assert acceleration(p, 0.0, 1.0, -5.0) == pytest.approx(5.19)


@pytest.mark.parametrize(("drag", "v_term"), [("linear", 5.0 / (9.81 / 3.0)),
                                              ("quadratic", (5.0 / 11.5) ** 0.5)])  # fmt: skip
def test_terminal_climb_rate_of_each_drag_law(drag, v_term):
    p = HeaveParams(drag=drag)
    thrust = 1.0 + p.hover_thrust  # net +5 m/s^2 of thrust above hover
    z, v = -30.0, 0.0
    for _ in range(int(20.0 / DT)):
        z, v, _ = step_zv(p, z, v, thrust, -100.0, DT)
        z = min(z, -30.0)  # keep it deep: only drag balances thrust
    assert v == pytest.approx(v_term, rel=1e-3)


def test_hard_floor_stops_descent_but_not_ascent():
    p = HeaveParams()
    z, v, _ = step_zv(p, -19.999, -1.0, -1.0, -20.0, DT)
    assert z == -20.0 and v == 0.0
    z, v, _ = step_zv(p, -20.0, 0.0, 1.0, -20.0, DT)
    assert z > -20.0 and v > 0.0


def test_surface_piercing_limits_the_rise():
    p = HeaveParams()
    z, v = -1.0, 0.0
    for _ in range(int(30.0 / DT)):
        z, v, _ = step_zv(p, z, v, 0.0, -20.0, DT)  # thrusters off: positively buoyant
    # floats with the hull partly out: buoyancy (g + 0.19)·sub = g  ->  sub = g/(g + 0.19)
    sub = 9.81 / (9.81 + 0.19)
    assert z == pytest.approx((0.5 - sub) * p.height, abs=1e-4)
    assert abs(v) < 1e-4


@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3), st.floats(-15, -1))
def test_batch_equals_single(thrusts, z0):
    p = HeaveParams()
    s = init(p, 3, z0)
    th = np.asarray(thrusts)
    nxt = step(p, s, th, np.full(3, -20.0), DT)
    for i in range(3):
        z, v, a = step_zv(p, z0, 0.0, float(th[i]), -20.0, DT)
        assert (nxt.z[i], nxt.v[i], nxt.a[i]) == (z, v, a)
