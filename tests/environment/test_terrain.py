"""Terrain profiles (SURFTRAK spec §12) and gridded bathymetry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.core.errors import DataError, UnknownNameError
from marinesim.environment.terrain import (
    BUILTIN_PROFILES,
    Bathymetry,
    builtin_profile,
    parse_bathymetry,
    parse_profile,
    profile_along_track,
)

TABLE = {  # rows, period (s), (first row, last row)
    "zeros": (100, 10.0),
    "trapezoid": (898, 89.8),
    "sawtooth": (249, 24.9),
    "square": (400, 40.0),
    "stress": (240, 24.0),
    "test_signal_quality": (160, 16.0),
}


@pytest.mark.parametrize("name", BUILTIN_PROFILES)
def test_builtin_profiles_match_the_spec_table(name):
    p = builtin_profile(name)
    rows, period = TABLE[name]
    assert len(p.rows) == rows and p.interval == 0.1
    assert p.period == pytest.approx(period)
    assert np.all(p.heights <= 0)


def test_profile_contents():
    saw = builtin_profile("sawtooth")
    assert np.all(saw.rows[:100] == -20.0) and np.all(saw.rows[100:201] == -19.0)
    np.testing.assert_allclose(np.diff(saw.rows[201:]), -0.02, atol=1e-9)
    stress = builtin_profile("stress")
    assert np.all(stress.rows[80:100] == 1.0)
    assert np.all(stress.heights[80:100] == -20.0)  # dropouts carry the previous height
    sq = builtin_profile("test_signal_quality")
    assert np.all(sq.heights[:40] == -18.0)  # leading sentinels: cyclic carry
    assert saw.height_at(10.05) == -19.0 and saw.height_at(24.9 + 0.05) == -20.0
    assert saw.height_along_track(100.0 * 0.5, 0.5) == -19.0


def test_licence_is_shipped():
    from importlib import resources

    lic = resources.files("marinesim.environment").joinpath(
        "data", "surftrak", "LICENSE-ardusub_surftrak.txt"
    )
    assert "MIT" in lic.read_text() or "Permission is hereby granted" in lic.read_text()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("0.1\n-20\nabc\n", 3),
        ("0\n-20\n", 1),
        ("0.1\n-20\n3.0\n", 3),
        ("0.1\n", 1),
        ("0.1\n1.0\n", 2),
    ],
)
def test_profile_errors_name_the_line(text, line):
    with pytest.raises(DataError) as exc:
        parse_profile(text, file="t.csv")
    assert exc.value.file == "t.csv" and exc.value.line == line


def test_unknown_profile_name_suggests():
    with pytest.raises(UnknownNameError, match="did you mean 'sawtooth'"):
        builtin_profile("sawtoth")


@given(
    a=st.floats(-5, 5), b=st.floats(-5, 5), c=st.floats(0, 50),
    n=st.floats(-20, 120), e=st.floats(-20, 70),
)  # fmt: skip
def test_bilinear_is_exact_on_planes(a, b, c, n, e):
    x = np.linspace(0, 100, 6)
    y = np.linspace(0, 50, 4)
    d = c + a * x[:, None] + b * y[None, :]
    bathy = Bathymetry(x, y, d)
    nc, ec = np.clip(n, 0, 100), np.clip(e, 0, 50)
    assert bathy.depth_at(n, e) == pytest.approx(c + a * nc + b * ec, abs=1e-9)


def test_bathymetry_altitude_and_validation():
    prof = builtin_profile("sawtooth")
    bathy = Bathymetry.from_profile(prof, spacing=1.0)
    alt = bathy.altitude(np.array([0.0, 150.0]), np.zeros(2), np.array([11.0, 11.0]))
    np.testing.assert_allclose(alt, [9.0, 8.0])
    with pytest.raises(Exception, match="strictly increasing"):
        Bathymetry(np.array([0.0, 0.0]), np.array([0.0, 1.0]), np.zeros((2, 2)))
    with pytest.raises(Exception, match="shape"):
        Bathymetry(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.zeros((3, 2)))


def test_shipped_files_are_byte_identical_to_the_source():
    from importlib import resources
    from pathlib import Path

    shared = Path(__file__).resolve().parents[3].joinpath("shared", "data", "surftrak", "terrain")
    if not shared.exists():
        pytest.skip("shared SURFTRAK data not available")
    pkg = resources.files("marinesim.environment").joinpath("data", "surftrak")
    for name in BUILTIN_PROFILES:
        assert pkg.joinpath(f"{name}.csv").read_bytes() == (shared / f"{name}.csv").read_bytes()


GRID = "north\\east,-10,10\n0,20,22\n100,10,12\n"


def test_parse_bathymetry_grid_and_altitude():
    b = parse_bathymetry(GRID, file="g.csv")
    np.testing.assert_array_equal(b.x, [0.0, 100.0])
    np.testing.assert_array_equal(b.y, [-10.0, 10.0])
    assert float(b.depth_at(50.0, 0.0)) == pytest.approx(16.0)  # bilinear centre
    # altitude of a vehicle at 5 m depth over (50, 0): 16 - 5
    assert b.altitude(np.array([50.0]), np.array([0.0]), np.array([5.0]))[0] == pytest.approx(11.0)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("n,0,1\n0,1,2\n1,1\n", "g.csv:3"),  # ragged row
        ("n,0,1\n0,1,2\n1,1,x\n", "g.csv:3:3"),  # not a number
        ("n,0,1\n0,1,2\n1,1,-2\n", "g.csv:3:3"),  # negative depth
        ("n,0,1\n5,1,2\n1,1,2\n", "g.csv:3:1"),  # north not increasing
        ("n,1,0\n0,1,2\n1,1,2\n", "g.csv:1"),  # east not increasing
        ("n,0,1\n0,1,2\n", "g.csv:1"),  # a single row
        ("n,0,1\n0,1,nan\n1,1,2\n", "g.csv:2:3"),
    ],
)
def test_parse_bathymetry_errors_name_file_line(text, where):
    with pytest.raises(DataError) as exc:
        parse_bathymetry(text, file="g.csv")
    assert where in str(exc.value)


def test_profile_along_track_samples_the_grid_under_the_vehicle():
    b = parse_bathymetry(GRID)
    # due north at 2 m/s from (0, 0): depth 21 - 0.1*north; rows every 0.1 s
    prof = profile_along_track(b, north0=0, east0=0, heading_deg=0, speed=2.0, duration=10.0)
    assert prof.interval == 0.1 and len(prof.rows) >= 101
    tau = np.arange(len(prof.rows)) * 0.1
    north = np.minimum(2.0 * tau, 100.0)
    np.testing.assert_allclose(prof.rows, -(21.0 - 0.1 * north), atol=1e-12)
    np.testing.assert_array_equal(prof.rows, prof.heights)  # no sentinels
    # due east: y from 0 to 10 then held at the grid edge
    east = profile_along_track(b, north0=0, east0=0, heading_deg=90, speed=1.0, duration=20.0)
    assert east.rows[0] == pytest.approx(-21.0) and east.rows[-1] == pytest.approx(-22.0)
    with pytest.raises(Exception, match="speed"):
        profile_along_track(b, north0=0, east0=0, heading_deg=0, speed=-1.0, duration=1.0)
    with pytest.raises(Exception, match="heading"):
        profile_along_track(b, north0=0, east0=0, heading_deg=np.nan, speed=1.0, duration=1.0)
