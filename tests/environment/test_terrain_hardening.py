"""Terrain profiles and bathymetry at the boundary: intervals, extreme heights, coordinates."""

from __future__ import annotations

import pytest

from marinesim.core.errors import ConfigError, DataError
from marinesim.environment.terrain import (
    parse_bathymetry,
    parse_profile,
    profile_along_track,
    read_bathymetry,
    read_profile,
)


@pytest.mark.parametrize("interval", ["1e-9", "0.0000001", "-1"])
def test_tiny_interval_is_an_error(interval):
    with pytest.raises(DataError) as exc:
        parse_profile(f"{interval}\n-10\n", file="t.csv")
    assert exc.value.line == 1 and exc.value.param == "interval"


@pytest.mark.parametrize("height", ["-1e308", "-20000", "1e308"])
def test_extreme_heights_are_errors(height):
    with pytest.raises(DataError) as exc:
        parse_profile(f"0.1\n-10\n{height}\n", file="t.csv")
    assert exc.value.line == 3


def test_bathymetry_extremes():
    with pytest.raises(DataError, match="outside"):
        parse_bathymetry("n\\e,0,10\n0,5,5\n10,5,1e308\n", file="g.csv")
    with pytest.raises(DataError, match="beyond"):
        parse_bathymetry("n\\e,0,1e300\n0,5,5\n10,5,5\n", file="g.csv")


def test_track_limits():
    b = parse_bathymetry("n\\e,-10,10\n0,20,22\n100,10,12\n")
    with pytest.raises(ConfigError) as exc:
        profile_along_track(b, north0=0, east0=0, heading_deg=0, speed=1e308, duration=5)
    assert exc.value.param == "track.speed"
    with pytest.raises(ConfigError) as exc:
        profile_along_track(b, north0=0, east0=0, heading_deg=0, speed=1, duration=1e12)
    assert exc.value.param == "duration"


def test_readers_check_paths_and_bytes(tmp_path):
    with pytest.raises(DataError, match="is a directory"):
        read_profile(tmp_path)
    p = tmp_path / "g.csv"
    p.write_bytes("n\\e,-10,10\n0,20,22\n".encode("utf-16"))
    with pytest.raises(DataError, match="UTF-16"):
        read_bathymetry(p)
