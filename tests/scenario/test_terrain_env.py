"""``environment.terrain`` (flat or gridded bathymetry) → ``env.seafloor_depth`` → DVL altitude."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, DataError
from marinesim.engine.env import Environment
from marinesim.scenario import load_simulation

_SCEN = """\
marinesim: 1
name: terrain_dvl
seed: 3
time: {{dt: 0.5, end: 5.0}}
environment:
  terrain: {terrain}
entities:
  - name: auv
    count: 2
    spawn: {{north: 0.0, east: 0.0, depth: 10.0, heading_deg: 90.0, speed: 1.0}}
    motion: {{plugin: usm}}
    sensors:
      - {{name: dvl, plugin: dvl, rate_hz: 2,
         params: {{noise_std: 0.01, min_altitude: 0.5, max_altitude: 25.0}}}}
"""

_GRID = """\
north\\east,-100,100
-100,20,40
100,20,40
"""


def _write(tmp: Path, terrain: str, grid: str | None = _GRID) -> Path:
    if grid is not None:
        (tmp / "bathy.csv").write_text(grid)
    p = tmp / "s.yaml"
    p.write_text(_SCEN.format(terrain=terrain))
    return p


def test_flat_terrain_gives_dvl_altitude(tmp_path: Path) -> None:
    sim = load_simulation(_write(tmp_path, "{model: flat, depth: 50.0}", None))
    res = sim.run()
    alt = res["dvl.altitude"][:, -1, 0]
    depth = res["truth.pos"][:, -1, 2]
    np.testing.assert_allclose(alt, 50.0 - depth, rtol=1e-12)
    # altitude 40 m > max_altitude 25 m: no bottom lock (water track, mode 2)
    assert np.all(res["dvl.mode"][:, -1, 0] == 2.0)


def test_grid_terrain_is_bilinear_and_locks_where_shallow(tmp_path: Path) -> None:
    sim = load_simulation(_write(tmp_path, "{model: grid, file: bathy.csv}"))
    env = sim.env
    # depth 20 m at east = -100, 40 m at east = +100, linear in between
    np.testing.assert_allclose(
        env.seafloor_depth(np.array([0.0, 50.0]), np.array([0.0, -50.0])), [30.0, 25.0]
    )
    assert env.terrain_source.endswith("bathy.csv")
    res = sim.run()
    east = res["truth.pos"][:, -1, 1]
    np.testing.assert_allclose(
        res["dvl.altitude"][:, -1, 0], 30.0 + 0.1 * east - res["truth.pos"][:, -1, 2], rtol=1e-9
    )
    assert np.all(res["dvl.mode"][:, -1, 0] == 1.0)  # altitude ≈ 20 m ≤ 25 m: bottom lock


def test_terrain_errors_are_located(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_simulation(_write(tmp_path, "{model: grid, file: nowhere.csv}"))
    assert "cannot read bathymetry file" in str(exc.value)
    assert exc.value.line == 6 and exc.value.param == "environment.terrain.file"
    with pytest.raises(ConfigError, match="depht"):
        load_simulation(_write(tmp_path, "{model: flat, depht: 50.0}"))
    with pytest.raises(ConfigError, match="model"):
        load_simulation(_write(tmp_path, "{model: flatt, depth: 50.0}"))
    with pytest.raises(ConfigError, match="greater than 0"):
        load_simulation(_write(tmp_path, "{model: flat, depth: -5.0}"))
    bad = "north\\east,-100,100\n-100,20,40\n100,20,oops\n"
    with pytest.raises(DataError) as derr:
        load_simulation(_write(tmp_path, "{model: grid, file: bathy.csv}", bad))
    assert derr.value.line == 3 and "oops" in str(derr.value)


def test_no_terrain_and_no_param_is_a_clear_error(tmp_path: Path) -> None:
    text = _SCEN.format(terrain="null").replace("environment:\n  terrain: null\n", "")
    p = tmp_path / "s.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match="no terrain"):
        load_simulation(p).run()
    with pytest.raises(ConfigError, match="no terrain"):
        Environment().seafloor_depth(np.zeros(1), np.zeros(1))
