"""Scenario YAML at the boundary: limits, types, names (each error located file:line: param)."""

from __future__ import annotations

import pytest

from marinesim.core.errors import ConfigError
from marinesim.scenario.build import load_simulation
from marinesim.scenario.load import load_text

BASE = """marinesim: 1
name: t
time: {{dt: {dt}, end: {end}, time_warp: {warp}}}
entities:
  - name: {name}
    motion: {{plugin: usm}}
"""


def _text(dt="0.1", end="10", warp="0", name="auv"):
    return BASE.format(dt=dt, end=end, warp=warp, name=name)


def _err(text, file="s.yaml"):
    with pytest.raises(ConfigError) as exc:
        load_text(text, file=file)
    return exc.value


def test_the_base_scenario_loads():
    assert load_text(_text(), file="s.yaml").model.time.dt == 0.1


def test_dt_true_is_not_one_second():
    e = _err(_text(dt="true"))
    assert (e.file, e.line, e.param) == ("s.yaml", 3, "time.dt")
    assert "boolean" in e.message


def test_dt_and_time_warp_lower_bounds():
    e = _err(_text(dt="1e-12"))
    assert e.param == "time.dt" and "MIN_DT" in e.message
    e = _err(_text(warp="1e-6"))
    assert e.param == "time.time_warp" and "MIN_TIME_WARP" in e.message
    assert load_text(_text(warp="0.5"), file="s.yaml").model.time.time_warp == 0.5


def test_too_many_vehicles():
    e = _err(_text().replace("  - name: auv\n", "  - name: auv\n    count: 100000000\n"))
    assert e.param == "entities.auv.count" and "MAX_ENTITIES" in e.message and e.line == 6


def test_too_many_steps():
    e = _err(_text(dt="0.001", end="1e12"))
    assert e.param == "time.end" and "MAX_STEPS" in e.message and e.line == 3


@pytest.mark.parametrize("name", ["''", "'a/b'", "'..'", "'  '"])
def test_bad_entity_names(name):
    e = _err(_text(name=name))
    assert e.param.startswith("entities.") and e.param.endswith(".name") and e.line == 5


def test_alias_bomb_is_refused():
    bomb = "x-lol: &b0 [l, l, l, l, l, l, l, l, l]\n" + "".join(
        f"x-{k}: &b{k} [" + ", ".join([f"*b{k - 1}"] * 9) + "]\n" for k in range(1, 10)
    )
    e = _err(bomb + _text())
    assert e.param == "yaml.max_nodes"


def test_deep_nesting_is_refused():
    e = _err(_text() + "extra: " + "[" * 500 + "]" * 500 + "\n")
    assert e.param == "yaml.max_depth" and e.file == "s.yaml"


def _waypoints(params: str) -> str:
    return (
        _text()
        + "    autonomy:\n      - {plugin: waypoints, params: {"
        + params
        + "}}\n"
    )


def test_negative_waypoint_speed_is_an_error(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text(_waypoints("points_ne: [[0, 10]], speed: -1"))
    with pytest.raises(ConfigError, match="speed") as exc:
        load_simulation(p)
    assert str(p) in str(exc.value)


def test_lawnmower_waypoint_limit(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text(
        _waypoints(
            "lawnmower: {north: 0, east: 0, length: 10, width: 100, spacing: 1.0e-9}, speed: 1"
        )
    )
    with pytest.raises(ConfigError, match="MAX_WAYPOINTS") as exc:
        load_simulation(p)
    assert "spacing" in str(exc.value)


def test_directory_and_undecodable_scenario(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_simulation(tmp_path)
    p = tmp_path / "s.yaml"
    p.write_bytes(_text().encode("utf-16"))
    with pytest.raises(ConfigError, match="UTF-16"):
        load_simulation(p)
