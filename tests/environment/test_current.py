"""CurrentField: the .cfd format and the local force (spec usimmarine.md §8.2, §8.3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import marinesim.reference
from marinesim.core.errors import ConfigError
from marinesim.environment.current import CurrentField, vector_velocity

CFD = Path(marinesim.reference.__file__).parent / "data" / "usm" / "current_field.cfd"


def example() -> tuple[CurrentField, list]:
    return CurrentField.parse(CFD.read_text(), file=CFD)


def test_example_file_seven_vectors_one_bad_line() -> None:
    fld, warns = example()
    assert len(fld) == 7
    assert fld.radius == 30.0 and fld.name == "refcase"
    assert len(warns) == 1
    bad_line = next(
        i for i, t in enumerate(CFD.read_text().splitlines(), 1) if t.startswith("x=200")
    )
    assert warns[0].line == bad_line and str(CFD) in str(warns[0])
    # the xdot/ydot vector
    assert (fld.vx[6], fld.vy[6]) == (0.3, -0.4)
    # ang=90 (east), mag 0.5
    assert fld.vx[0] == pytest.approx(0.5, abs=1e-15) and fld.vy[0] == pytest.approx(0, abs=1e-15)


def test_radius_without_blank_is_a_bad_line() -> None:
    fld, warns = CurrentField.parse("radius:30\nx=0, y=0, mag=1, ang=0\n")
    assert fld.radius == 20.0 and len(fld) == 1
    assert len(warns) == 1 and warns[0].line == 1


def test_bad_radius_value_keeps_default_and_positional_syntax_rejected() -> None:
    fld, warns = CurrentField.parse("radius: 1e2\n0,0,1,90\nxpos=1, ypos=2, mag=1, ang=0\n")
    assert fld.radius == 20.0
    assert [w.line for w in warns] == [1, 2]
    assert (fld.x.tolist(), fld.y.tolist()) == ([1.0], [2.0])


def test_empty_text_fails_to_load() -> None:
    with pytest.raises(ConfigError, match="empty"):
        CurrentField.parse("", file="f.cfd")


def test_viewer_keys_ignored_and_quotes_respected() -> None:
    fld, warns = CurrentField.parse('x=1, y=2, mag=1, ang=180, label="a,b", vertex_size=3\n')
    assert warns == [] and len(fld) == 1
    assert fld.vy[0] == pytest.approx(-1.0) and abs(fld.vx[0]) < 1e-15


def test_force_at_chosen_points() -> None:
    fld, _ = example()
    r = 30.0
    # on top of vector 0 (0,0): vector 1 at (40,0) is 40 m away (out of range)
    fx, fy = fld.force(np.array([0.0]), np.array([0.0]))
    assert fx[0] == pytest.approx(0.5) and fy[0] == pytest.approx(0.0, abs=1e-15)
    # far away: no vector in range
    fx, fy = fld.force([1000.0], [1000.0])
    assert fx[0] == 0.0 and fy[0] == 0.0
    # on vector 1 (40,0): vector 0 at 40 m, vector 2 at hypot(40,10) = 41.2 m, vector 4 at
    # hypot(20,40): only itself
    v1 = vector_velocity(120.0, 0.8)
    fx, fy = fld.force([40.0], [0.0])
    assert fx[0] == pytest.approx(v1[0]) and fy[0] == pytest.approx(v1[1])
    # midpoint (20, 0): vectors 0 and 1, each at 20 m → weight (1 - 20/30)^2, divided by 2
    w = (1 - 20 / r) ** 2
    v0 = vector_velocity(90.0, 0.5)
    fx, fy = fld.force([20.0], [0.0])
    assert fx[0] == pytest.approx(w * (v0[0] + v1[0]) / 2, abs=1e-15)
    assert fy[0] == pytest.approx(w * (v0[1] + v1[1]) / 2, abs=1e-15)


def test_dilution_by_count_and_strict_radius() -> None:
    text = "radius: 10\nx=0, y=0, xdot=1, ydot=0\nx=9.999, y=0, xdot=0, ydot=0\n"
    fld, _ = CurrentField.parse(text)
    fx, _fy = fld.force([0.0], [0.0])
    # the second vector is in range with a tiny weight, yet it halves the first one
    assert fx[0] == pytest.approx(0.5, abs=1e-12)
    text = "radius: 10\nx=0, y=0, xdot=1, ydot=0\nx=10, y=0, xdot=0, ydot=0\n"
    fld, _ = CurrentField.parse(text)
    fx, _ = fld.force([0.0], [0.0])
    assert fx[0] == 1.0  # exactly R away: not in range (strict <)
    fx, _ = fld.force([10.0], [0.0])
    assert fx[0] == 0.0  # the first vector is exactly R away; only the zero vector counts


def test_non_positive_radius_gives_no_force() -> None:
    fld, _ = CurrentField.parse("radius: -5\nx=0, y=0, mag=1, ang=0\n")
    fx, fy = fld.force([0.0, 1.0], [0.0, 0.0])
    assert fx.tolist() == [0.0, 0.0] and fy.tolist() == [0.0, 0.0]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-100, 200, allow_nan=False), min_size=1, max_size=6),
    st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=6),
)
def test_force_batch_equals_single_points(xs, ys) -> None:
    fld, _ = example()
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    fx, fy = fld.force(x, y)
    assert fx.shape == (n,)
    for i in range(n):
        sx, sy = fld.force(x[i : i + 1], y[i : i + 1])
        assert sx[0] == fx[i] and sy[0] == fy[i]
        # the force never exceeds the largest vector speed (weights <= 1, mean of them)
        assert math.hypot(fx[i], fy[i]) <= max(np.hypot(fld.vx, fld.vy)) + 1e-12


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="xyposmagndtXY=,:; 0123456789.-\n/radius", min_size=1, max_size=80))
def test_parse_never_raises_on_non_empty_text(text) -> None:
    fld, warns = CurrentField.parse(text, file="f.cfd")
    assert len(fld) + len(warns) <= text.count("\n") + 1
    fx, fy = fld.force([0.0, 5.0], [0.0, -5.0])
    assert np.all(np.isfinite(fx)) and np.all(np.isfinite(fy))
