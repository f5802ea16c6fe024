"""The compiled ``repr`` of the SIM_JSON replies' numbers against Python's own.

:func:`~marinesim.interop.sitl.reprtext.write_repr` must write exactly ``repr(x)`` (JSON's
``NaN`` / ``Infinity`` for the non-finite) for every double it accepts, and accept every
double of a physical state (normal, 1e-10 ≤ |x| < 1e16, zero, non-finite); it may only
decline (−1) outside that range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

from marinesim.interop.sitl.reprtext import write_reply, write_repr  # noqa: E402


def _json_repr(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def _doubles() -> np.ndarray:
    rng = np.random.default_rng(20261128)
    n = 40000
    bits = rng.integers(0, 2**63 - 1, n, dtype=np.int64)  # every exponent, every mantissa
    e = rng.uniform(-10, 16, n)
    pow2 = 2.0 ** np.arange(-34, 54)
    pow10 = 10.0 ** np.arange(-10, 16)
    edges = np.concatenate([pow2, pow10])
    return np.concatenate([
        bits.view(np.float64), rng.uniform(1, 10, n) * 10.0**e, rng.standard_normal(n),
        np.round(rng.standard_normal(n) * 100, 3), rng.integers(1, 10**6, n) / 1200.0,
        edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf), -edges,
        [0.0, -0.0, np.nan, np.inf, -np.inf, 0.1, 0.2, 0.3, 0.1 + 0.2, 2.5, 4.35, 9.80665,
         1e-10, 1e16, np.nextafter(1e16, 0), 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308],
    ])  # fmt: skip


def test_write_repr_is_python_repr() -> None:
    buf = np.zeros(64, dtype=np.uint8)
    declined = done = 0
    for x in _doubles().tolist():
        n = write_repr(x, buf, 0)
        a = abs(x)
        inside = a == 0.0 or not math.isfinite(a) or 1e-10 <= a < 1e16
        if n < 0:
            assert not inside, f"declined {x!r}"
            declined += 1
            continue
        assert buf[:n].tobytes().decode("ascii") == _json_repr(x), repr(x)
        done += 1
    assert done > 150000 and declined > 1000  # both sides exercised


def test_write_reply_joins_texts_and_numbers() -> None:
    pieces = np.frombuffer(b'{"a":[,]}', dtype=np.uint8).copy()
    starts = np.array([0, 6, 7, 9], dtype=np.int64)
    buf = np.zeros(64, dtype=np.uint8)
    n = write_reply(np.array([0.1, -2.0]), 2, pieces, starts, buf)
    assert buf[:n].tobytes() == b'{"a":[0.1,-2.0]}'
    assert write_reply(np.array([0.1, 1e-300]), 2, pieces, starts, buf) == -1  # needs repr
