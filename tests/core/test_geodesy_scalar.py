"""One point projected without arrays (:meth:`MoosGeodesy.local_to_latlon_1`, the N = 1 path of
the uSimMarine publications) gives the array projection's bits, point for point."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.geodesy import MoosGeodesy


@pytest.mark.parametrize(
    "datum",
    [
        (42.358456, -71.087589),
        (-33.9, 151.2),
        (0.0, 0.0),
        (83.5, 20.0),
        (-79.9, -179.9),
        (60.5, 5.0),
    ],
)
def test_scalar_projection_has_the_array_bits(datum: tuple[float, float]) -> None:
    g = MoosGeodesy(*datum)
    rng = np.random.default_rng(11)
    n = 4000
    x = np.concatenate([
        rng.uniform(-200.0, 200.0, n // 2), rng.uniform(-2e5, 2e5, n // 2 - 6),
        [0.0, -0.0, 1e-300, 5e5, -5e5, 123.456789],
    ])  # fmt: skip
    y = np.concatenate([
        rng.uniform(-200.0, 200.0, n // 2), rng.uniform(-2e5, 2e5, n // 2 - 6),
        [0.0, -0.0, -1e-300, -5e5, 5e5, -98.7654321],
    ])  # fmt: skip
    lat, lon = g.local_to_latlon(x, y)
    one = np.array([g.local_to_latlon_1(a, b) for a, b in zip(x, y, strict=True)])
    assert one.shape == (n, 2)
    # bit for bit, NaN patterns included (an out-of-zone point may give inf or NaN)
    assert np.array_equal(lat.view(np.int64), one[:, 0].view(np.int64))
    assert np.array_equal(lon.view(np.int64), one[:, 1].view(np.int64))
    # and against the one-element array call the N = 1 publications used before
    for k in range(0, n, 97):
        la, lo = g.local_to_latlon(x[k : k + 1], y[k : k + 1])
        assert (la[0], lo[0]) == g.local_to_latlon_1(float(x[k]), float(y[k]))
