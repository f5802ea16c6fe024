"""The one-vehicle shortcuts of the uSimMarine publications give the array rules' bits."""

from __future__ import annotations

import numpy as np

from marinesim.models.usm.moos_math import snap_speed


def test_snap_speed_of_one_value_has_the_array_bits() -> None:
    rng = np.random.default_rng(1)
    v = np.concatenate([
        rng.uniform(-5, 5, 20000), np.arange(-1000, 1000) * 0.005, np.arange(-1000, 1000) * 0.01,
        [0.0, -0.0, 0.004, -0.004, 0.005, -0.005, 1e300, -1e300, 5e-324, np.nan, np.inf,
         -np.inf, 1e15, 4.5e15],
    ])  # fmt: skip
    full = snap_speed(v)
    one = np.array([snap_speed(v[i : i + 1])[0] for i in range(len(v))])
    assert np.array_equal(full.view(np.int64), one.view(np.int64))
    assert np.signbit(snap_speed(np.array([-0.001]))[0])  # -0.1 steps round to -0.0
