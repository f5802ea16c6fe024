"""Scenario loading: §12.2 rules with exact messages and file:line, did-you-mean, templating."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, UnknownNameError
from marinesim.scenario import builtin_names, load_scenario, load_simulation
from marinesim.scenario.build import parse_script_item
from marinesim.scenario.load import compose_with_marks, scenario_hash
from marinesim.scenario.templating import apply_sets, substitute

BASE = """\
marinesim: 1
name: t1
seed: 5
time:
  dt: 0.1
  end: 2.0
entities:
  - name: auv
    count: 2
    spawn:
      north: 0.0
      east: 0.0
      heading_deg: 90.0
    motion:
      plugin: usm
      params:
        turn_rate: 70
    controllers:
      - {name: pid, plugin: heading_speed_depth_pid}
    autonomy:
      - name: survey
        plugin: waypoints
        params:
          points_ne: [[0, 50], [50, 50]]
          speed: ${speed=1.5}
script:
  - 'DRIFT_VECTOR_ADD="90,0.5" at 1'
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _error(tmp_path: Path, old: str, new: str, **kw: object) -> str:
    assert old in BASE
    p = _write(tmp_path, BASE.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        load_simulation(p, **kw)  # type: ignore[arg-type]
    return str(info.value).replace(str(p), "s.yaml")


def test_base_scenario_builds_and_runs(tmp_path: Path) -> None:
    sim = load_simulation(_write(tmp_path, BASE))
    res = sim.run()
    assert res.status == "completed"
    assert res["truth.pos"].shape == (2, 21, 3)
    assert res.manifest["scenario_sha256"] == scenario_hash(sim.scenario.data)  # type: ignore[attr-defined]


def test_x_y_keys_rejected_with_explanation(tmp_path: Path) -> None:
    msg = _error(tmp_path, "      north: 0.0", "      y: 0.0")
    assert msg == (
        "s.yaml:11:7: entities.auv.spawn.y: positions are written north/east (m); 'x' and 'y' are "
        "ambiguous (east/north in MOOS, north/east in NED) and are not accepted"
    )


def test_heading_without_unit_rejected_with_hint(tmp_path: Path) -> None:
    msg = _error(tmp_path, "heading_deg: 90.0", "heading: 90.0")
    assert msg == (
        "s.yaml:13:7: entities.auv.spawn.heading: heading needs a unit: write heading_deg "
        "(marine heading: degrees, 0 = north, clockwise)"
    )


def test_unknown_layout_key_did_you_mean(tmp_path: Path) -> None:
    msg = _error(tmp_path, "    count: 2", "    cont: 2")
    assert msg == "s.yaml:9:5: entities.auv.cont: extra field not permitted (did you mean 'count'?)"


def test_unknown_plugin_param_did_you_mean(tmp_path: Path) -> None:
    msg = _error(tmp_path, "          speed: ${speed=1.5}", "          sped: 1.5")
    assert msg == (
        "s.yaml:25:11: entities.auv.autonomy.survey.params.sped: extra field not permitted "
        "(did you mean 'speed'?)"
    )


def test_unknown_usm_param_did_you_mean(tmp_path: Path) -> None:
    msg = _error(tmp_path, "turn_rate: 70", "turn_rat: 70")
    assert msg.startswith(
        "s.yaml:17:9: entities.auv.motion.params.turn_rat: unknown parameter 'turn_rat'"
    )
    assert "did you mean 'turn_rate'?" in msg


def test_unknown_plugin_name(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE.replace("plugin: usm", "plugin: usn"))
    with pytest.raises(UnknownNameError) as info:
        load_simulation(p)
    msg = str(info.value).replace(str(p), "s.yaml")
    assert msg.startswith(
        "s.yaml:15:7: entities.auv.motion.plugin: unknown motion plugin 'usn'; did you mean 'usm'? (known: "
    )
    assert "usm, usm_v22" in msg  # the list grows as other areas register motion plugins


def test_malformed_yaml_line(tmp_path: Path) -> None:
    msg = _error(tmp_path, "  dt: 0.1", "  dt: [0.1")
    assert msg == "s.yaml:6:6: malformed YAML: expected ',' or ']', but got ':'"


def test_spawn_in_motion_params_rejected(tmp_path: Path) -> None:
    msg = _error(tmp_path, "turn_rate: 70", "start_x: 10")
    assert msg == (
        "s.yaml:17:9: entities.auv.motion.params.start_x: start_x is set by the entity's spawn "
        "(north/east/depth/heading_deg/speed), not by the motion params"
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "'DESIRED_SPEED=nan at 1'",
            "script.0: DESIRED_SPEED: non-finite value nan (a command must be a finite number)",
        ),
        (
            "'DESIRED_SPEED=abc at 1'",
            "script.0: DESIRED_SPEED takes a number, got the non-numeric value 'abc'",
        ),
        (
            "'USM_SIM_PAUSED=1 at 1'",
            'script.0: USM_SIM_PAUSED takes a string; quote the value: USM_SIM_PAUSED="1"',
        ),
        (
            "'DESIRED_SPEED 3 at 1'",
            "script.0: malformed script line 'DESIRED_SPEED 3 at 1'; expected 'VAR=value at T' (optionally 'for TARGET')",
        ),
        (
            "'DESIRED_SPEED=3 at soon'",
            "script.0: time 'soon' is not a number (in 'DESIRED_SPEED=3 at soon')",
        ),
    ],
)
def test_bad_script_lines(tmp_path: Path, line: str, expected: str) -> None:
    msg = _error(tmp_path, "'DRIFT_VECTOR_ADD=\"90,0.5\" at 1'", line)
    assert msg == f"s.yaml:27:5: {expected}"


def test_script_unknown_target(tmp_path: Path) -> None:
    msg = _error(tmp_path, "at 1'", "at 1 for auv[7]'")
    assert msg.startswith("s.yaml:27:5: script.0: unknown script target 'auv[7]'")


def test_script_to_unsubscribed_variable_warns(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE.replace('DRIFT_VECTOR_ADD="90,0.5"', "DESIRED_SPED=1"))
    with pytest.warns(
        UserWarning,
        match="no plugin of block 'auv' subscribes to 'DESIRED_SPED' \\(did you mean 'DESIRED_SPEED'\\?\\)",
    ):
        load_simulation(p)
    strict = BASE.replace('DRIFT_VECTOR_ADD="90,0.5"', "DESIRED_SPED=1").replace(
        "seed: 5", "seed: 5\nstrict: true"
    )
    with pytest.raises(ConfigError, match="strict: warnings are errors"):
        load_simulation(_write(tmp_path, strict))


def test_script_item_typing() -> None:
    assert parse_script_item('DRIFT_VECTOR_ADD="90,0.5" at 12.5') == (
        12.5,
        "DRIFT_VECTOR_ADD",
        "90,0.5",
        "all",
    )
    assert parse_script_item("DESIRED_SPEED=2 at 3 for auv[1]") == (
        3.0,
        "DESIRED_SPEED",
        2.0,
        "auv[1]",
    )
    assert parse_script_item("USM_SIM_PAUSED=true at 3") == (3.0, "USM_SIM_PAUSED", "true", "all")
    assert parse_script_item({"at": 1, "var": "X", "value": "a"}) == (1.0, "X", "a", "all")
    with pytest.raises(ValueError, match="quote it"):
        parse_script_item({"at": 1, "var": "X", "value": True})


def test_template_variables(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE)
    sim = load_simulation(p, variables=["speed=2.5"])
    wp = [s for s in sim.slots if s.plugin.name == "survey"][0].plugin
    assert wp.params.speed == 2.5  # type: ignore[attr-defined]
    with pytest.raises(
        ConfigError,
        match=r"--var sped: the scenario has no variable 'sped' \(did you mean 'speed'\?\)",
    ):
        load_simulation(p, variables=["sped=2.5"])
    text = BASE.replace("${speed=1.5}", "${speed}")
    with pytest.raises(ConfigError) as info:
        load_simulation(_write(tmp_path, text))
    assert str(info.value).endswith(
        ":25:18: template variable 'speed' has no default and no value; pass --var speed=VALUE"
    )


def test_substitute_and_sets_units() -> None:
    assert substitute("a: ${x=1}\nb: ${y=z}", {"x": 3}) == "a: 3\nb: z"
    data = {"entities": [{"name": "auv", "count": 1}], "time": {"end": 5}}
    changed = apply_sets(data, {"entities.auv.count": 4, "time.end": 9, "time.dt": 0.5})
    assert data["entities"][0]["count"] == 4 and data["time"] == {"end": 9, "dt": 0.5}
    assert changed == ["entities.0.count", "time.end", "time.dt"]
    with pytest.raises(ConfigError, match=r"no list item named 'auw' \(did you mean 'auv'\?\)"):
        apply_sets(data, {"entities.auw.count": 1})


def test_set_and_seed_overrides_change_the_hash(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE)
    a = load_scenario(p)
    b = load_scenario(p, sets=["entities.auv.count=3"], seed=9)
    assert b.model.entities[0].count == 3 and b.model.seed == 9
    assert scenario_hash(a.data) != scenario_hash(b.data)
    assert scenario_hash(a.data) == scenario_hash(load_scenario(p).data)


def test_seed_drawn_when_missing_is_recorded(tmp_path: Path) -> None:
    sim = load_simulation(_write(tmp_path, BASE.replace("seed: 5\n", "")))
    assert sim.seed_drawn
    assert f"seed: {sim.seed}" in (sim.resolved_scenario or "")


def test_unsupported_features_say_so(tmp_path: Path) -> None:
    # replicas > 1 is supported now (stacked rows; tests/batch/test_plan_and_stacking.py)
    msg = _error(tmp_path, "    count: 2", "    count: 2\n    generate: {count: 2}")
    assert "'generate') is not supported yet" in msg


def test_duplicate_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match=r"^f.yaml:2:1: a: duplicate key 'a'$"):
        compose_with_marks("a: 1\na: 2\n", file="f.yaml")


def test_entity_defaults_merge(tmp_path: Path) -> None:
    text = BASE.replace("entities:\n", "entity_defaults:\n  team: 3\nentities:\n")
    sc = load_scenario(_write(tmp_path, text))
    assert sc.model.entities[0].team == 3


def test_builtin_demo_loads() -> None:
    assert "demo_survey" in builtin_names()
    sim = load_simulation("demo_survey", sets={"time.end": 1.0})
    assert [b.n for b in sim.blocks] == [3]
    assert sim.env.current_field is not None and len(sim.env.current_field) == 16
    r = sim.run()
    assert np.isfinite(r["truth.pos"]).all()


def test_errors_in_set_values_say_so(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE)
    with pytest.raises(
        ConfigError, match=r"time.end: Input should be a valid number.*\(value from --set\)$"
    ):
        load_simulation(p, sets=["time.end=abc"])
    with pytest.raises(
        ConfigError, match=r"params.sped: extra field not permitted.*\(value from --set\)$"
    ):
        load_simulation(p, sets=["entities.auv.autonomy.survey.params.sped=3"])
