"""Harness rangefinder injection (SURFTRAK spec §11.1) and noise helpers."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.core.params import validate
from marinesim.sensors.noise import bias_random_walk, corrupt, limit_with_substitutes, quantise
from marinesim.sensors.rangefinder import RangefinderParams, inject


def test_encodings_and_substitutes():
    p = RangefinderParams()
    rows = np.array([-20.0, 1.0, 2.0, -11.3, -20.0, -99.0])
    z_d = np.array([-11.1111, -11.0, -11.0, -11.0, -11.0, -11.0])
    normal = np.array([0.0, 0.3, 0.3, 0.0, 0.0, 0.0])
    r = inject(p, rows, z_d, normal)
    np.testing.assert_array_equal(r.sent, [True, False, True, True, True, True])
    # 8.8889 m → int(888.89) = 888 cm (truncation); dropout −1/−1; low SQ 555/10;
    # 0.30 m < 0.35 → 8.888 m at 50 → 888; 88 m > 50 → 5000 at 60
    np.testing.assert_array_equal(r.distance_cm, [888, -1, 555, 888, 900, 5000])
    np.testing.assert_array_equal(r.quality, [100, -1, 10, 50, 100, 60])


def test_noise_is_applied_with_sigma():
    p = RangefinderParams(noise_std=0.05)
    r = inject(p, np.full(3, -20.0), np.full(3, -10.0), np.array([1.0, -1.0, 0.0]))
    # truncation of the float product, as the harness's int(rf * 100)
    np.testing.assert_array_equal(r.distance_cm, [int(10.05 * 100), int((10.0 - 0.05) * 100), 1000])


def test_noise_helpers():
    np.testing.assert_allclose(corrupt(np.array([1.0]), np.array([2.0]), 0.5, 0.1, 2.0), [3.1])
    np.testing.assert_allclose(bias_random_walk(np.zeros(1), np.ones(1), 0.2, 4.0), [0.4])
    np.testing.assert_allclose(quantise(np.array([1.239, -1.239]), 0.01), [1.23, -1.23])
    out, lo, hi = limit_with_substitutes(np.array([0.1, 5.0, 99.0]), 0.5, 50.0, 8.888)
    np.testing.assert_allclose(out, [8.888, 5.0, 50.0])
    assert lo.tolist() == [True, False, False] and hi.tolist() == [False, False, True]
    with pytest.raises(ConfigError, match="delay"):
        validate(RangefinderParams, {"delay": -1.0})


def test_down_rangefinder_on_the_sensor_chain_over_bathymetry():
    from marinesim.core.rng import BlockRNG
    from marinesim.environment.terrain import Bathymetry, builtin_profile
    from marinesim.sensors.rangefinder import DownRangefinder, DownRangefinderParams

    bathy = Bathymetry.from_profile(builtin_profile("sawtooth"), spacing=1.0)
    p = validate(DownRangefinderParams, {"noise_std": 0.0, "delay": 0.2, "rate_hz": 10.0})
    rng = BlockRNG.for_entities(1, 0, "auv", [0, 1], "rf")
    rf = DownRangefinder(p, 2, 0.05, rng)
    depth = np.array([11.0, 19.8])  # the second one 0.2 m off the floor: below-min substitute
    out = []
    for k in range(41):  # 2 s at 20 Hz, moving north at 1 m/s
        north = np.full(2, k * 0.05)
        rf.push(bathy.altitude(north, np.zeros(2), depth))
        if rf.due(k):
            out.append((k, rf.sample(k * 0.05)))
    k, r = out[-1]
    assert k == 40
    # 0.2 s delay: the geometry of t = 1.8 s (north 1.8 m, floor -20 m)
    assert r.distance_cm[0] == int((20.0 - 11.0) * 100)
    assert r.distance_cm[1] == 888 and r.quality[1] == 50 and r.quality[0] == 100
    with pytest.raises(ConfigError, match="noise_std"):
        validate(DownRangefinderParams, {})  # noise has no default
