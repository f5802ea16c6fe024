"""SURFTRAK in the engine over the scenario's gridded bathymetry (``terrain: environment``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.scenario import load_simulation

_SCEN = """\
marinesim: 1
name: surftrak_grid
seed: 2
time: {{dt: 0.0025, end: {end}, time_warp: 0}}
end_conditions: [time]
{env}
entities:
  - name: vehicle
    spawn: {{depth: 11.15}}
    motion:
      plugin: sitl_vertical
      params: {{terrain: environment, track_heading_deg: 0.0, track_speed: 1.0}}
    sensors:
      - name: rangefinder
        plugin: rangefinder
        params: {{terrain: environment, noise_std: 0.05}}
    controllers:
      - name: surftrak
        plugin: surftrak
        params:
          ardusub: {{RNGFND1_MIN_CM: 50, RNGFND1_MAX_CM: 5000, SURFTRAK_DEPTH: -100,
                    PSC_JERK_Z: 8.0, PILOT_ACCEL_Z: 500}}
"""
# depth 20 m up to 5 m north, rising linearly to 19 m at 15 m north, then flat
_GRID = "north\\east,-50,50\n0,20,20\n5,20,20\n15,19,19\n100,19,19\n"


def _write(tmp: Path, end: float, env: str) -> Path:
    (tmp / "grid.csv").write_text(_GRID)
    p = tmp / "s.yaml"
    p.write_text(_SCEN.format(end=end, env=env))
    return p


def test_surftrak_follows_the_grid_under_a_moving_vehicle(tmp_path: Path) -> None:
    env = "environment:\n  terrain: {model: grid, file: grid.csv}"
    res = load_simulation(_write(tmp_path, 22.0, env)).run()
    north = res["truth.pos"][0, :, 0]
    t = res.t
    terrain = res["rangefinder.terrain"][0, :, 0]
    # the vehicle moves north at 1 m/s; the seafloor under it is the bilinear grid
    np.testing.assert_allclose(north[-1], 22.0, atol=0.01)
    expect = -np.interp(north, [0, 5, 15, 100], [20, 20, 19, 19])
    logged = np.isfinite(terrain)
    assert logged.sum() >= len(terrain) - 1  # every tick after the first
    np.testing.assert_allclose(terrain[logged], expect[logged], atol=1e-9)
    texts = [e.text for e in res.events if e.kind == "statustext"]
    assert len([x for x in texts if x.startswith("rangefinder target is")]) == 1
    ds = res["surftrak.DSAlt"][0, :, 0]
    alt = -res["truth.pos"][0, :, 2] - terrain  # true altitude (m)
    ok = np.isfinite(ds) & logged & (ds > 0) & (t > 4.0)
    # a 0.1 m/s rise of the floor: tracked within the spec's ramp lag (< 0.32 m)
    assert ok.sum() > 100 and np.abs(alt[ok] - ds[ok]).max() <= 0.32
    # the sub really climbed with the floor (≈ 1 m)
    z = -res["truth.pos"][0, :, 2]
    assert z[-1] - z[1] == pytest.approx(1.0, abs=0.3)


def test_environment_terrain_is_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment.terrain"):
        load_simulation(_write(tmp_path, 1.0, "")).run()
