"""numpy's elementary functions against libm, and the route comparisons built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import marinesim.testing as testing
from marinesim.core.libm import _args, numpy_matches_libm
from marinesim.testing import ROUTES_RTOL, assert_values_identical


def test_the_answer_is_what_numpy_gives_on_this_machine() -> None:
    x, y, _pos = _args()
    same = np.arctan2(x, y).tobytes() == np.array(
        [math.atan2(u, v) for u, v in zip(x.tolist(), y.tolist(), strict=True)]
    ).tobytes() and np.exp(x).tobytes() == np.array([math.exp(v) for v in x.tolist()]).tobytes()
    # the two functions that decide on every AVX-512 machine seen so far
    if not same:
        assert numpy_matches_libm() is False
    else:
        assert isinstance(numpy_matches_libm(), bool)


@pytest.fixture(params=[True, False], ids=["numpy-is-libm", "numpy-is-not-libm"])
def libm(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(testing, "numpy_matches_libm", lambda: request.param)
    return bool(request.param)


def test_one_ulp_across_routes_is_rounding_only_where_numpy_is_not_libm(libm: bool) -> None:
    a = np.array([[1.5, -200.0, np.nan], [0.25, 3e-16, 7.0]])
    b = a.copy()
    b[0, 1] = np.nextafter(b[0, 1], 0.0)  # one ulp of 200
    b[1, 1] = 0.0  # a residual of rounding (below 1e-12 in absolute terms)
    if libm:
        with pytest.raises(AssertionError, match="differs"):
            assert_values_identical(a, b, routes=True)
    else:
        assert_values_identical(a, b, routes=True)
    with pytest.raises(AssertionError, match="differs"):  # within one route: always exact
        assert_values_identical(a, b)


def test_beyond_rounding_or_nan_elsewhere_fails_either_way(libm: bool) -> None:
    a = np.array([100.0, 2.0, np.nan])
    off = a.copy()
    off[0] += 100.0 * 10 * ROUTES_RTOL  # ten times the tolerance
    with pytest.raises(AssertionError):
        assert_values_identical(a, off, routes=True)
    nan = a.copy()
    nan[1] = np.nan
    with pytest.raises(AssertionError):
        assert_values_identical(a, nan, routes=True)
    # integers, booleans and non-numbers stay exact
    with pytest.raises(AssertionError):
        assert_values_identical([np.array([1, 2]), "x"], [np.array([1, 3]), "x"], routes=True)
    with pytest.raises(AssertionError):
        assert_values_identical({"k": 1.0}, {"j": 1.0}, routes=True)
