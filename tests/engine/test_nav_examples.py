"""Every navigation plugin's ``marinesim plugins show NAME --example`` entry loads and runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from marinesim.engine.describe import plugin_example
from marinesim.scenario import load_simulation

SENSORS = ("gps", "depth_sensor", "imu", "ahrs", "dvl", "noisy_state", "simple_ins", "contacts")
METRICS = ("distance_travelled", "energy", "min_separation", "time_in_box", "nav_error")

_BASE = """\
marinesim: 1
name: example_check
seed: 1
time: {dt: 0.5, end: 2.0}
entities:
  - name: auv
    count: 2
    spawn: {north: 0.0, east: 0.0, depth: 0.0, heading_deg: 0.0, speed: 1.0,
            spread: {north: 20.0, east: 20.0}}
    motion: {plugin: usm}
"""


def _scenario(tmp: Path, section: str, entries: list[dict]) -> Path:
    data = yaml.safe_load(_BASE)
    if section == "sensors":
        data["entities"][0]["sensors"] = entries
    else:
        data["metrics"] = entries
    p = tmp / "s.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


@pytest.mark.parametrize("name", SENSORS)
def test_sensor_example_is_valid(name: str, tmp_path: Path) -> None:
    entry = yaml.safe_load(plugin_example(name, "sensor"))["sensors"]
    assert entry[0]["plugin"] == name and "<required>" not in str(entry)
    res = load_simulation(_scenario(tmp_path, "sensors", entry)).run()
    assert res.status == "completed"


def test_nav_ekf_example_is_valid(tmp_path: Path) -> None:
    entries = [
        yaml.safe_load(plugin_example(n, "sensor"))["sensors"][0]
        for n in ("imu", "ahrs", "depth_sensor", "gps", "dvl", "nav_ekf")
    ]
    res = load_simulation(_scenario(tmp_path, "sensors", entries)).run()
    assert res.status == "completed" and "belief.pos" in res.signals


@pytest.mark.parametrize("name", METRICS)
def test_metric_example_is_valid(name: str, tmp_path: Path) -> None:
    entry = yaml.safe_load(plugin_example(name, "metric"))["metrics"]
    assert "<required>" not in str(entry)
    res = load_simulation(_scenario(tmp_path, "metrics", entry)).run()
    assert res.status == "completed"
