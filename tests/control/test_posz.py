"""AC_PosControl z building blocks and controller (SURFTRAK spec §8)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from marinesim.control.posz import (
    PosZ,
    PosZGains,
    clamp,
    inv_sqrt_controller,
    shape_accel,
    sqrt_controller,
    update_pos_vel_accel,
    where,
)
from marinesim.core.errors import ConfigError

finite = st.floats(-1e4, 1e4, allow_nan=False)
pos = st.floats(0.05, 50.0)


def test_sqrt_controller_branches():
    # linear inside e_lin = D/p², sqrt outside; C¹ at the joint
    p, d = 2.0, 100.0
    e_lin = d / p**2
    assert sqrt_controller(e_lin * 0.5, p, d, 0.0) == pytest.approx(p * e_lin * 0.5)
    far = 3 * e_lin
    assert sqrt_controller(far, p, d, 0.0) == pytest.approx(math.sqrt(2 * d * (far - e_lin / 2)))
    assert sqrt_controller(-far, p, d, 0.0) == pytest.approx(-math.sqrt(2 * d * (far - e_lin / 2)))
    h = 1e-6
    left = sqrt_controller(e_lin - h, p, d, 0.0)
    right = sqrt_controller(e_lin + h, p, d, 0.0)
    assert (right - left) / (2 * h) == pytest.approx(p, rel=1e-3)
    # clamp to |e|/dt
    assert sqrt_controller(0.001, p, d, 0.0025) == pytest.approx(min(p * 0.001, 0.001 / 0.0025))


@given(out=st.floats(-500, 500), p=pos, d=st.floats(1.0, 1000.0))
@settings(max_examples=60, deadline=None)
def test_inverse_sqrt_controller_roundtrip(out, p, d):
    e = inv_sqrt_controller(out, p, d)
    assert sqrt_controller(e, p, d, 0.0) == pytest.approx(out, rel=1e-9, abs=1e-9)


@given(e=finite, p=pos, d=st.floats(1.0, 1000.0))
# libm's pow(x, 0.5) (the old float path) and numpy's sqrt differed in the last bit here
@example(e=47.520771269686065, p=47.520771269686065, d=553.0521486545487)
@settings(max_examples=60, deadline=None)
def test_sqrt_controller_odd_and_float_equals_array(e, p, d):
    a = sqrt_controller(e, p, d, 0.0025)
    assert sqrt_controller(-e, p, d, 0.0025) == pytest.approx(-a, abs=1e-12)
    arr = sqrt_controller(np.array([e, -e]), p, d, 0.0025)
    assert arr[0] == a and arr[1] == -a or (arr[0] == a and a == 0)


def test_inv_sqrt_rejects_degenerate():
    with pytest.raises(ConfigError):
        inv_sqrt_controller(1.0, 0.0, 1.0)


@given(a_in=finite, a=finite, j=st.floats(1.0, 5000.0))
def test_shape_accel_is_jerk_limited(a_in, a, j):
    new = shape_accel(a_in, a, j, 0.0025)
    assert abs(new - a) <= j * 0.0025 + 1e-9
    assert abs(new - a_in) <= abs(a - a_in) + 1e-9


def test_update_pos_vel_accel_limit_rules():
    # free: p += v dt + a dt²/2, v += a dt
    p, v = update_pos_vel_accel(0.0, 10.0, 100.0, 0.01, 0.0, 0.0, 0.0)
    assert p == pytest.approx(0.1 + 0.5 * 100 * 1e-4) and v == pytest.approx(11.0)
    # saturated up, errors up: neither position nor velocity grows upward
    p, v = update_pos_vel_accel(0.0, 10.0, 100.0, 0.01, 1.0, 5.0, 5.0)
    assert p == 0.0 and v == 10.0
    # saturated up while moving down: the step back towards zero is allowed, limited to |v|
    p, v = update_pos_vel_accel(0.0, -0.5, 100.0, 0.01, 1.0, 5.0, 5.0)
    assert v == pytest.approx(0.0)


def test_where_clamp_floats_and_arrays():
    assert where(True, 1.0, 2.0) == 1.0 and where(False, 1.0, 2.0) == 2.0
    np.testing.assert_array_equal(where(np.array([True, False]), 1.0, 2.0), [1.0, 2.0])
    assert clamp(5.0, -1.0, 1.0) == 1.0 and clamp(-5.0, -1.0, 1.0) == -1.0
    np.testing.assert_array_equal(clamp(np.array([-5.0, 0.5, 5.0]), -1.0, 1.0), [-1, 0.5, 1])


def test_terrain_offset_shaping_gains():
    g = PosZGains(jerk_z=8.0, accel_z=500.0)
    assert g.kpv == pytest.approx(0.8) and g.kpa == pytest.approx(1.6)
    assert PosZGains().kpv == pytest.approx(2.5)  # code defaults 5 / 100
    with pytest.raises(ConfigError):
        PosZGains(accel_z=0.0)


def test_init_terrain_offset_keeps_total_target_and_offset_converges():
    g = PosZGains(jerk_z=8.0, accel_z=500.0)
    c = PosZ(g, -1000.0, 0.0, 0.0, 0.5)
    before = c.pos_target
    c.init_terrain_offset(True, -300.0)
    assert c.pos_target == before and c.off == -300.0
    # a 100 cm step of the offset target is followed with the shaping limits (small overshoot)
    c.off_target = -200.0
    offs = []
    for _ in range(4000):  # 10 s
        c.set_target_from_climb_rate(0.0)
        c.update(c.pos_target, c.vel_desired, c.accel_desired, False)
        offs.append(c.off)
    offs = np.array(offs)
    assert abs(offs[-1] + 200.0) < 0.5
    assert offs.max() <= -200.0 + 10.0
    assert np.all(np.abs(np.diff(offs)) <= 500.0 * 0.0025 + 1e-9)  # |v_off| ≤ v_up


def test_batch_controller_equals_scalar():
    g = PosZGains(jerk_z=8.0, accel_z=500.0)
    s = PosZ(g, -1000.0, 0.0, 0.0, 0.48)
    b = PosZ(g, np.array([-1000.0, -500.0]), np.zeros(2), np.zeros(2), np.full(2, 0.48))
    s.off_target = -50.0
    b.off_target = np.array([-50.0, 20.0])
    for k in range(400):
        climb = 30.0 if 100 <= k < 200 else 0.0
        s.set_target_from_climb_rate(climb)
        b.set_target_from_climb_rate(climb)
        ts = s.update(-1000.0 + 0.01 * k, 4.0, 0.0, False)
        tb = b.update(
            np.array([-1000.0 + 0.01 * k, -500.0]),
            np.array([4.0, 0.0]),
            np.zeros(2),
            np.zeros(2, bool),
        )
        assert tb[0] == ts
    assert b.pos_target[0] == s.pos_target
