"""Bundled scenarios per vehicle family (issue 11): an AUV on its depth-heading autopilot, a ship
on its heading autopilot, a DP vessel holding station in a current — each runs from
``marinesim run NAME`` and draws the figures of its family."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from marinesim.cli.main import app
from marinesim.core.errors import ConfigError
from marinesim.scenario import builtin_names, load_simulation

FAMILIES = {
    "torpedo_depth_heading": ("track", "autopilot"),
    "tanker_heading_autopilot": ("track", "autopilot"),
    "supply_dp_current": ("track", "autopilot", "dp_error"),
}


def test_bundled() -> None:
    assert set(FAMILIES) <= set(builtin_names())


def test_auv_reaches_depth_and_heading() -> None:
    """torpedo: 30 m and 50° within the scenario's 200 s (the PVS autopilot's own response)."""
    r = load_simulation("torpedo_depth_heading").run()
    assert r.status == "completed"
    depth = r["truth.pos"][0, :, 2]
    yaw = r["fossen6dof.euler"][0, :, 2]
    assert abs(depth[-1] - 30.0) < 1.0 and abs(yaw[-1] - 50.0) < 1.0
    assert np.max(depth) < 32.0  # no deep overshoot


def test_ship_turns_to_the_new_heading() -> None:
    r = load_simulation("tanker_heading_autopilot", sets={"time.end": 400}).run()
    yaw = r["fossen6dof.euler"][0, :, 2]
    assert abs(yaw[-1] - (-20.0)) < 1.0
    # a 300 m tanker: the turn takes minutes, not seconds
    assert yaw[np.searchsorted(r.t, 30.0)] > -5.0


def test_dp_vessel_holds_station_in_the_current() -> None:
    r = load_simulation("supply_dp_current").run()
    pos = r["truth.pos"][0]
    ap = r.signal("fossen6dof.autopilot")
    x_d = ap.values[0, :, ap.labels.index("x_d")]
    y_d = ap.values[0, :, ap.labels.index("y_d")]
    err = np.hypot(pos[:, 0] - x_d, pos[:, 1] - y_d)
    late = r.t > 200.0
    assert np.max(err[late]) < 1.0 and err[-1] < np.max(err)
    assert abs(x_d[-1] - 4.0) < 0.1 and abs(y_d[-1] - 4.0) < 0.1


def test_current_matters_to_the_dp_vessel() -> None:
    calm = load_simulation("supply_dp_current", variables={"current": 0.0}, sets={"time.end": 60})
    strong = load_simulation("supply_dp_current", sets={"time.end": 60})
    a, b = calm.run()["truth.pos"][0, -1], strong.run()["truth.pos"][0, -1]
    assert np.linalg.norm(a - b) > 0.05


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_cli_run_draws_the_family_figures(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    res = CliRunner().invoke(
        app, ["run", name, "--set", "time.end=20", "--no-progress", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    for fig in FAMILIES[name]:
        assert (out / f"{fig}.png").stat().st_size > 5000


def test_bad_vehicle_argument_is_located(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_simulation("tanker_heading_autopilot", variables={"rpm": 200})
    assert "rpm" in str(exc.value) and "90" in str(exc.value)
