"""Degree wrapping has one source: :func:`marinesim.core.frames.angle360_c` / ``angle180_c``.

The reference is the numpy rule the array forms have always had (``np.mod`` then 360 → 0,
then − 360 above 180).  The interpreted scalar on Python floats, the numba-compiled scalar and
the array forms :func:`angle360` / :func:`angle180` must give its bits for every input:
−0.0, NaN of either sign, ±inf, the float just below 360, tiny negatives (which round up to
360 and must come out as 0), huge magnitudes.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from marinesim.core.frames import angle180, angle180_c, angle360, angle360_c


def _ref360(x: np.ndarray) -> np.ndarray:
    a = np.mod(x, 360.0)
    return np.where(a >= 360.0, a - 360.0, a)


def _ref180(x: np.ndarray) -> np.ndarray:
    a = _ref360(x)
    return np.where(a > 180.0, a - 360.0, a)


@numba.njit
def _compiled(x: np.ndarray, o360: np.ndarray, o180: np.ndarray) -> None:
    for i in range(x.shape[0]):
        o360[i] = angle360_c(x[i])
        o180[i] = angle180_c(x[i])


def _bits(a: object) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).reshape(-1).view(np.int64)


EDGES = [
    0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 359.99999999999994, 360.0, -360.0,
    720.0, 180.0, -180.0, 180.00000000000003, 179.99999999999997, -179.99999999999997,
    -180.00000000000003, 1e-300, -1e-300, 5e-324, -5e-324, -1e-14, -1e-17, 539.9999999999999,
    1e6, -1e6, 1e16, -1e16, 2.0**53, -(2.0**53), 1e300, -1e300, 1.7976931348623157e308,
    -1.7976931348623157e308,
]  # fmt: skip


def _check(values: list[float]) -> None:
    x = np.array(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # np.mod of ±inf: NaN
        r360, r180 = _ref360(x), _ref180(x)
        a360, a180 = angle360(x), angle180(x)
    o360, o180 = np.empty_like(x), np.empty_like(x)
    _compiled(x, o360, o180)
    for got, ref in ((a360, r360), (a180, r180), (o360, r360), (o180, r180)):
        np.testing.assert_array_equal(_bits(got), _bits(ref))
    np.testing.assert_array_equal(_bits([angle360_c(float(a)) for a in values]), _bits(r360))
    np.testing.assert_array_equal(_bits([angle180_c(float(a)) for a in values]), _bits(r180))
    fin = np.isfinite(x)
    assert np.all((r360[fin] >= 0.0) & (r360[fin] < 360.0))
    assert np.all((r180[fin] > -180.0) & (r180[fin] <= 180.0))


def test_degree_wrap_edges_bitwise() -> None:
    _check(EDGES)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=64))
def test_degree_wrap_bitwise_for_every_input(values: list[float]) -> None:
    _check(values)


def test_degree_wrap_array_forms_keep_shape_and_type() -> None:
    """0-d in, 0-d out (an ndarray, as ``np.where`` gave); lists and ints become float arrays."""
    for fn in (angle360, angle180):
        out = fn(-0.0)
        assert isinstance(out, np.ndarray) and out.shape == () and _bits(out)[0] == 0
        assert fn([-90, 450]).dtype == np.float64
    np.testing.assert_array_equal(angle360([-90, 450, -1e-20]), [270.0, 90.0, 0.0])
    np.testing.assert_array_equal(angle180([270.0, 180.0, -180.0]), [-90.0, 180.0, 180.0])
