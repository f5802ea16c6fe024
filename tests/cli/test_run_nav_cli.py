"""``marinesim run`` with navigation: nav figures, metric summary, bit-identical logs, order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.main import main

_SENSORS = """\
    sensors:
      - {name: imu, plugin: imu, rate_hz: 5,
         params: {accel_noise_std: 0.02, gyro_noise_std: 0.001, accel_bias_walk: 0.0002, gyro_bias_walk: 0.00001}}
      - {name: ahrs, plugin: ahrs, rate_hz: 5, params: {roll_std_deg: 0.1, pitch_std_deg: 0.1, yaw_std_deg: 0.5}}
      - {name: depth, plugin: depth_sensor, rate_hz: 1, params: {noise_std: 0.05}}
      - {name: dvl, plugin: dvl, rate_hz: 5, params: {noise_std: 0.03, min_altitude: 0.5, max_altitude: 35.0}}
      - {name: gps, plugin: gps, rate_hz: 1, params: {noise_std: 2.0}}
      - name: nav
        plugin: nav_ekf
        params: {accel_noise_std: 0.02, accel_bias_walk: 0.0002, depth_std: 0.05, gps_std: 2.0,
                 dvl_std: 0.2, initial_pos_std: 1.0, initial_vel_std: 0.1, initial_bias_std: 0.005}
      - {name: sonar, plugin: contacts, rate_hz: 1,
         params: {max_range: 150.0, fov_az_deg: 360.0, fov_el_deg: 90.0, range_std: 1.0, az_std_deg: 1.0, el_std_deg: 1.0}}
"""
_BLOCK = """\
  - name: {name}
    count: 2
    spawn: {{north: 0.0, east: {east}, depth: 5.0, heading_deg: 0.0, speed: 1.0,
            spread: {{north: 5.0, east: 5.0}}}}
    motion: {{plugin: usm}}
"""
_HEAD = """\
marinesim: 1
name: nav_cli
seed: 5
time: {dt: 0.2, end: 4.0}
environment:
  terrain: {model: flat, depth: 30.0}
metrics:
  - {name: nav_error, plugin: nav_error}
  - {name: distance, plugin: distance_travelled}
entities:
"""


def _write(tmp: Path, order: tuple[str, str], fname: str = "s.yaml") -> Path:
    east = {"alpha": 0.0, "bravo": 40.0}
    text = _HEAD + "".join(_BLOCK.format(name=n, east=east[n]) + _SENSORS for n in order)
    p = tmp / fname
    p.write_text(text, encoding="utf-8")
    return p


def test_run_writes_nav_figures_and_metric_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(_write(tmp_path, ("alpha", "bravo"))), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("nav_tracks.png", "nav_error.png", "nav_contacts.png", "metrics.csv"):
        assert (out / name).stat().st_size > 0
        assert name in text
    assert "nav_error: alpha[0]: nav_error_rms = " in text
    assert "distance: team 1: distance_travelled_sum = " in text
    # a saved run re-draws the navigation figures too
    assert main(["plot", str(out), "-o", str(tmp_path / "replot")]) == 0
    assert (tmp_path / "replot" / "nav_tracks.png").stat().st_size > 0


def test_same_seed_logs_bit_identical_and_block_order_irrelevant(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    s1 = _write(tmp_path, ("alpha", "bravo"))
    args = ["--no-plot", "--format", "csv"]
    assert main(["run", str(s1), "-o", str(tmp_path / "a"), *args]) == 0
    assert main(["run", str(s1), "-o", str(tmp_path / "b"), *args]) == 0
    a = (tmp_path / "a" / "log.csv").read_bytes()
    assert a == (tmp_path / "b" / "log.csv").read_bytes()
    assert (tmp_path / "a" / "metrics.csv").read_bytes() == (
        tmp_path / "b" / "metrics.csv"
    ).read_bytes()
    s2 = _write(tmp_path, ("bravo", "alpha"), "swapped.yaml")
    assert main(["run", str(s2), "-o", str(tmp_path / "c"), *args]) == 0
    da = pd.read_csv(tmp_path / "a" / "log.csv", comment="#").set_index(["entity", "t"])
    dc = pd.read_csv(tmp_path / "c" / "log.csv", comment="#").set_index(["entity", "t"])
    cols = [c for c in da.columns if c.startswith(("belief.", "nav.", "gps.", "dvl.", "imu."))]
    assert len(cols) > 10
    dc = dc.loc[da.index, cols]
    np.testing.assert_array_equal(da[cols].to_numpy(), dc.to_numpy())
