"""Angle wrapping has one source: :func:`marinesim.core.frames.wrap_pi_c`.

PythonVehicleSimulator's ``ssa(angle) = (angle + pi) % (2*pi) - pi`` is the reference: the
interpreted scalar, the array form :func:`wrap_pi` and the numba-compiled function must give
its bits for every finite input, however large (a floor-division form differs above ~100 rad).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.core.frames import heading_to_yaw, wrap_pi, wrap_pi_c


def _pvs_ssa(angle: float) -> float:
    """PythonVehicleSimulator ``lib/gnc.py`` ``ssa`` on a Python float."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


@numba.njit
def _compiled(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i] = wrap_pi_c(x[i])


def _bits(a: object) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).reshape(-1).view(np.int64)


# large magnitudes explicitly: a floor-division form loses bits from ~100 rad on
EDGES = [
    0.0, -0.0, math.pi, -math.pi, 2 * math.pi, -2 * math.pi, 3 * math.pi, -3 * math.pi,
    1e-300, -1e-300, 5e-324, -5e-324, 1e-17, -1e-17, 100.0, -100.0, 123.456, -987.654,
    1e6 + 0.1, -1e6 - 0.1, 1e15, -1e15, 2.0**53, -(2.0**53), 1e300, -1e300,
    1.7976931348623157e308, -1.7976931348623157e308,
    -3.1415926535897936,  # the float below −π: wraps to +π
]  # fmt: skip
finite = st.floats(allow_nan=False, allow_infinity=False)
large = st.floats(min_value=1e2, max_value=1e308).flatmap(lambda a: st.sampled_from([a, -a]))


def _check(values: list[float]) -> None:
    x = np.array(values, dtype=np.float64)
    ref = np.array([_pvs_ssa(float(a)) for a in values])
    out = np.empty_like(x)
    _compiled(x, out)
    np.testing.assert_array_equal(_bits(out), _bits(ref))  # numba CPU
    np.testing.assert_array_equal(_bits(wrap_pi(x)), _bits(ref))  # numpy array
    np.testing.assert_array_equal(_bits([wrap_pi_c(float(a)) for a in values]), _bits(ref))
    assert np.all(np.abs(ref) <= math.pi)


def test_wrap_edges_match_pvs_ssa_bitwise() -> None:
    _check(EDGES)


@given(st.lists(finite, min_size=1, max_size=64))
def test_wrap_matches_pvs_ssa_bitwise_for_every_finite_input(values: list[float]) -> None:
    _check(values)


@given(st.lists(large, min_size=1, max_size=64))
def test_wrap_matches_pvs_ssa_bitwise_for_large_magnitudes(values: list[float]) -> None:
    _check(values)


def test_wrap_keeps_the_angle() -> None:
    """Wrapping changes an angle by whole turns only (within the rounding of a + π)."""
    x = np.linspace(-50.0, 50.0, 2001)
    w = wrap_pi(x)
    turns = (x - w) / (2 * math.pi)
    np.testing.assert_allclose(turns, np.round(turns), atol=1e-12)
    assert np.all((w >= -math.pi) & (w <= math.pi))
    deg = np.rad2deg(x)
    np.testing.assert_array_equal(heading_to_yaw(deg), wrap_pi(np.deg2rad(deg)))


def test_cuda_wrap_matches_pvs_ssa_bitwise() -> None:
    """On a GPU the same function compiles to an exact fmod and the same sign correction."""
    from numba import cuda

    try:
        ok = cuda.is_available()
    except Exception:  # noqa: BLE001 - no driver
        ok = False
    if not ok:
        pytest.skip("no CUDA device")

    @cuda.jit
    def kernel(x, out):  # noqa: ANN001, ANN202
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = wrap_pi_c(x[i])

    rng = np.random.default_rng(7)
    mags = 10.0 ** rng.integers(-5, 300, 4096)
    x = np.concatenate((np.array(EDGES), rng.standard_normal(4096) * mags))
    out = np.empty_like(x)
    kernel[(x.size + 127) // 128, 128](x, out)
    ref = np.array([_pvs_ssa(float(a)) for a in x])
    np.testing.assert_array_equal(_bits(out), _bits(ref))
