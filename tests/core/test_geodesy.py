"""MOOS geodesy (spec usimmarine.md §3.8)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.core.geodesy import MoosGeodesy, flat_earth_to_latlon, utm_zone

MIT = (42.358456, -71.087589)


def test_origin_maps_to_datum() -> None:
    g = MoosGeodesy(*MIT)
    lat, lon = g.local_to_latlon([0.0], [0.0])
    assert abs(lat[0] - MIT[0]) < 1e-12 and abs(lon[0] - MIT[1]) < 1e-12
    assert g.zone == 19 and "+south" not in g.proj_string


def test_grid_north_is_not_true_north() -> None:
    g = MoosGeodesy(*MIT)
    lat, lon = g.local_to_latlon([0.0, 0.0], [0.0, 1000.0])
    east_m = (lon[1] - lon[0]) * 111_320.0 * math.cos(math.radians(MIT[0]))
    # central meridian -69: the grid convergence is about 1.4 deg, so ~2.4 % of the run
    assert east_m == pytest.approx(-24.4, rel=0.1)
    assert (lat[1] - lat[0]) * 111_000 == pytest.approx(1000.0, rel=0.01)


def test_round_trip() -> None:
    g = MoosGeodesy(*MIT)
    x = np.array([-500.0, 0.0, 1234.5])
    y = np.array([20.0, -3000.0, 7.25])
    lat, lon = g.local_to_latlon(x, y)
    x2, y2 = g.latlon_to_local(lat, lon)
    np.testing.assert_allclose(x2, x, atol=1e-6)
    np.testing.assert_allclose(y2, y, atol=1e-6)


def test_southern_datum_uses_south() -> None:
    g = MoosGeodesy(-33.86, 151.21)
    assert "+south" in g.proj_string and g.zone == 56
    lat, lon = g.local_to_latlon([0.0], [100.0])
    assert lat[0] == pytest.approx(-33.86 + 100 / 110_900, abs=1e-5)
    assert g.origin_northing > 6e6  # false northing of the southern hemisphere


@pytest.mark.parametrize(
    ("lat", "lon", "zone"),
    [
        (60.0, 5.0, 32),
        (60.0, 2.0, 31),
        (50.0, 5.0, 31),
        (78.0, 5.0, 31),
        (78.0, 10.0, 33),
        (78.0, 25.0, 35),
        (78.0, 35.0, 37),
        (-10.0, -180.0, 1),
        (0.0, 179.9, 60),
    ],
)
def test_zones(lat: float, lon: float, zone: int) -> None:
    assert utm_zone(lat, lon) == zone


@pytest.mark.parametrize(("lat", "lon"), [(85.0, 0.0), (-81.0, 0.0), (0.0, 181.0)])
def test_out_of_range_datum(lat: float, lon: float) -> None:
    with pytest.raises(ConfigError):
        MoosGeodesy(lat, lon)


def test_flat_earth_helper() -> None:
    lat, lon = flat_earth_to_latlon([0.0, 0.0], [0.0, 1000.0], *MIT)
    assert lat[0] == pytest.approx(MIT[0]) and lon[1] == pytest.approx(MIT[1])
    assert (lat[1] - lat[0]) * 111_000 == pytest.approx(1000.0, rel=0.01)
