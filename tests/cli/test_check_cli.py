"""``marinesim check`` and ``marinesim plugins show NAME --interface`` (architecture §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.core import registry
from marinesim.engine.describe import PLUGIN_KINDS

SCEN = """\
marinesim: 1
name: check_me
seed: 5
time: {dt: 0.2, end: 6.0}
entities:
  - name: boat
    count: 2
    motion: {plugin: usm, params: {turn_rate: 60}}
    controllers:
      - {name: pid, plugin: heading_speed_depth_pid}
    autonomy:
      - {name: wpt, plugin: waypoints, rate_hz: 1, params: {points_ne: [[20, 0]], speed: 1.0}}
script:
  - 'DRIFT_VECTOR_ADD="90,0.3" at 2'
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_check_scenario_summarises_without_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(SCEN)
    rc, out, err = _run(capsys, "check", str(p))
    assert rc == 0, err
    assert "scenario check_me: ok (sha256 " in out
    assert "seed 5" in out and "dt 0.2 s" in out and "-> 6 s" in out
    assert "block boat: 2 vehicle(s)" in out
    assert "controller  pid (heading_speed_depth_pid)" in out
    assert "autonomy    wpt (waypoints) at 1 Hz" in out
    assert "boat[0], boat[1]" in out  # perfect navigation listed
    assert not list(tmp_path.glob("marinesim-runs*"))  # nothing was run or written
    rc, out, _ = _run(capsys, "check", str(p), "--set", "entities.boat.count=3", "--var", "x=1")
    assert rc == 2  # unknown --var is an error with a suggestion-style message
    rc, out, _ = _run(capsys, "check", str(p), "--set", "entities.boat.count=3")
    assert rc == 0 and "block boat: 3 vehicle(s)" in out
    rc, out, _ = _run(capsys, "check", "demo_survey")
    assert rc == 0 and "block survey: 3 vehicle(s)" in out
    # world plugins (metrics) are listed apart from the blocks
    p.write_text(SCEN + "metrics:\n  - {name: dist, plugin: distance_travelled}\n")
    rc, out, err = _run(capsys, "check", str(p))
    assert rc == 0, err
    assert "  world metric      dist (distance_travelled)" in out


def test_check_reports_located_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(SCEN.replace("turn_rate: 60", "turn_rat: 60"))
    rc, _, err = _run(capsys, "check", str(p))
    assert rc == 2 and "Traceback" not in err
    assert f"{p}:8:" in err and "turn_rat" in err and "did you mean 'turn_rate'" in err
    rc, _, err = _run(capsys, "check", str(tmp_path / "missing.yaml"))
    assert rc == 2 and "not found" in err
    p.write_text(SCEN.replace("at 2'", "at soon'"))
    rc, _, err = _run(capsys, "check", str(p))
    assert rc == 2 and f"{p}:14:5: script.0:" in err and "'soon' is not a number" in err


def test_check_strict_turns_warnings_into_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "w.yaml"
    p.write_text(SCEN.replace('DRIFT_VECTOR_ADD="90,0.3"', "NOBODY_LISTENS=3"))
    rc, out, err = _run(capsys, "check", str(p))
    assert rc == 0 and "ok" in out and "warning:" in err and "NOBODY_LISTENS" in err
    rc, _, err = _run(capsys, "check", str(p), "--strict")
    assert rc == 2 and "strict" in err and "NOBODY_LISTENS" in err


def test_check_moos_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = tmp_path / "m.moos"
    m.write_text("ProcessConfig = uSimMarine\n{\n  AppTick = 10\n  turn_rate = 40\n}\n")
    rc, out, _ = _run(capsys, "check", str(m))
    assert rc == 0 and "turn_rate" in out and "line 4" in out
    m.write_text("ProcessConfig = uSimMarine\n{\n  turn_rat = 40\n}\n")
    rc, _, err = _run(capsys, "check", str(m))
    assert rc == 2 and "m.moos:3: turn_rat:" in err and "did you mean 'turn_rate'" in err


def test_plugins_show_interface(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "plugins", "show", "usm", "--interface")
    assert rc == 0
    subs, pubs = out.split("PUBLICATIONS:")
    assert "SUBSCRIPTIONS:" in subs
    thrust = next(ln for ln in subs.splitlines() if ln.strip().startswith("DESIRED_THRUST "))
    assert thrust.split()[1:3] == ["double", "%"]
    assert "NAV_X" in pubs and "NAV_HEADING" in pubs and "DESIRED_THRUST" not in pubs
    rc, out, _ = _run(capsys, "plugins", "show", "heading_speed_depth_pid", "--interface")
    assert rc == 0 and "hooks: start, control" in out
    subs, pubs = out.split("PUBLICATIONS:")
    assert "DESIRED_HEADING" in subs and "deg" in subs and "DESIRED_RUDDER" in pubs
    rc, _, err = _run(capsys, "plugins", "show", "usm", "--interface", "--example")
    assert rc == 2 and "not both" in err
    rc, _, err = _run(capsys, "plugins", "show", "waypoint", "--interface")
    assert rc == 2 and "did you mean 'waypoints'" in err


@pytest.mark.parametrize("kind", PLUGIN_KINDS)
def test_interface_of_every_registered_plugin(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in registry.names(kind):
        try:
            cls = registry.get(kind, name)
        except ImportError:  # optional dependency missing: listed as unavailable
            continue
        rc, out, err = _run(capsys, "plugins", "show", name, "--kind", kind, "--interface")
        assert rc == 0, (name, err)
        assert f"{name} INTERFACE ({kind} plugin" in out
        for topic in cls.subscribes:
            assert topic in out.split("PUBLICATIONS:")[0], (name, topic)
