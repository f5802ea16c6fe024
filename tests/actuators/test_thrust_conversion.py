"""Thrust conversions (spec actuators_6dof.md §2.4): upstream gtest values and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.actuators import thrust_conversion as tc
from marinesim.core import registry
from marinesim.core.errors import ConfigError
from marinesim.core.params import validate

GTEST_TABLE = tc.LinearInterp(input_values=(-5, 0, 2, 5), output_values=(-100, -10, 20, 120))
DEAD = tc.DeadZone(rotor_constant_l=0.001, rotor_constant_r=0.002, delta_l=-50, delta_r=25)


def test_basic_gtest_values() -> None:
    p = tc.Basic(rotor_constant=0.0049)
    out = tc.convert(p, [0.0, 50.0, -50.0])
    assert out[0] == 0.0
    assert out[1] == 50 * 50 * 0.0049
    assert out[2] == -50 * 50 * 0.0049
    assert out[1] == pytest.approx(12.25, rel=1e-15)


def test_dead_zone_gtest_values_and_boundaries() -> None:
    out = tc.convert(DEAD, [10.0, -10.0, 3.0, 5.0, -math.sqrt(50.0)])
    assert out[0] == pytest.approx(0.15, rel=1e-14)
    assert out[1] == pytest.approx(-0.05, rel=1e-14)
    assert out[2] == 0.0
    assert out[3] == 0.0  # b = 25 = delta_R: the boundary gives 0
    assert abs(out[4]) < 1e-15


def test_linear_interp_gtest_values() -> None:
    out = tc.convert(GTEST_TABLE, [2.0, 1.0, -2.5, 10.0, -10.0, -5.0, 5.0, 0.0])
    assert out[0] == 20.0  # exactly a knot
    assert out[1] == pytest.approx(5.0, rel=1e-15)
    assert out[2] == pytest.approx(-55.0, rel=1e-15)
    assert out[3] == 120.0 and out[4] == -100.0  # held ends
    assert (out[5], out[6], out[7]) == (-100.0, 120.0, -10.0)


def test_linear_interp_duplicate_knot_last_output_wins_with_warning() -> None:
    p = tc.LinearInterp(input_values=(0, 1, 1, 2), output_values=(0, 5, 7, 9))
    assert tc.convert(p, 1.0) == 7.0
    warns = tc.warnings_for(p)
    assert len(warns) == 1 and "given twice" in warns[0][1]


def test_linear_interp_unsorted_knots_are_sorted() -> None:
    p = tc.LinearInterp(input_values=(5, -5, 2, 0), output_values=(120, -100, 20, -10))
    x = np.linspace(-7, 7, 57)
    np.testing.assert_array_equal(tc.convert(p, x), tc.convert(GTEST_TABLE, x))


@pytest.mark.parametrize(
    "data, match",
    [
        ({"input_values": [1.0], "output_values": [2.0]}, "at least 2"),
        ({"input_values": [1.0, 2.0], "output_values": [2.0]}, "same length"),
    ],
)
def test_linear_interp_bad_tables(data: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        validate(tc.LinearInterp, data)


def test_dead_zone_sign_constraints() -> None:
    with pytest.raises(ConfigError, match="delta_l must be <= 0"):
        validate(
            tc.DeadZone, {"rotor_constant_l": 1, "rotor_constant_r": 1, "delta_l": 1, "delta_r": 1}
        )


def test_registry() -> None:
    assert set(registry.names("thrust_conversion")) == {"basic", "dead_zone", "linear_interp"}
    assert registry.get("thrust_conversion", "dead_zone").Params is tc.DeadZone


finite = st.floats(-3000.0, 3000.0, allow_nan=False)


@settings(max_examples=80, deadline=None)
@given(x=finite, y=finite, c=st.floats(1e-6, 1.0))
def test_basic_is_odd_and_monotone(x: float, y: float, c: float) -> None:
    p = tc.Basic(rotor_constant=c)
    fx, fy, fmx = tc.convert(p, [x, y, -x])
    assert fmx == -fx
    if x <= y:
        assert fx <= fy


@settings(max_examples=80, deadline=None)
@given(x=finite, y=finite)
def test_dead_zone_monotone_and_zero_in_band(x: float, y: float) -> None:
    fx, fy = tc.convert(DEAD, [x, y])
    if x <= y:
        assert fx <= fy
    if -50.0 < x * abs(x) < 25.0:
        assert fx == 0.0


@settings(max_examples=80, deadline=None)
@given(
    knots=st.lists(
        st.tuples(st.floats(-100, 100), st.floats(-1e3, 1e3)),
        min_size=2,
        max_size=8,
        unique_by=lambda t: t[0],
    ),
    x=st.floats(-200, 200),
)
def test_linear_interp_bounded_and_exact_at_knots(knots: list, x: float) -> None:
    p = tc.LinearInterp(input_values=[k[0] for k in knots], output_values=[k[1] for k in knots])
    outs = [k[1] for k in knots]
    f = float(tc.convert(p, x))
    assert min(outs) - 1e-9 <= f <= max(outs) + 1e-9
    for i, o in knots:
        assert float(tc.convert(p, i)) == o
