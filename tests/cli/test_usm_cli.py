"""``marinesim usm ...`` through the real entry point (return codes and output)."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

import marinesim.reference
from marinesim.cli.main import main
from marinesim.models.usm.config import PARAMS

REF = Path(marinesim.reference.__file__).parent / "data" / "usm"

MISSION = """LatOrigin = 42.358456
LongOrigin = -71.087589

ProcessConfig = uSimMarine
{
  AppTick = 10
  prefix = NAV
  start_heading = 90
  drift_x = 0.1
  drift_x = 0.2
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def mission(tmp_path: Path) -> Path:
    p = tmp_path / "m.moos"
    p.write_text(MISSION)
    return p


def test_example_generated_from_schema(capsys) -> None:
    rc, out, _ = run(capsys, "usm", "--example")
    assert rc == 0 and "ProcessConfig = uSimMarine" in out
    for p in PARAMS:
        if "usm" in p.variants and p.kind in ("number", "bool", "thrust_map", "string"):
            assert f"{p.name} " in out or p.name == "apptick"
    rc, out, _ = run(capsys, "usm", "--alias", "SIM_A", "--example")
    assert rc == 0 and "ProcessConfig = SIM_A" in out
    rc, out, _ = run(capsys, "usm", "--variant", "usm_v22", "-e")
    assert rc == 0 and "ProcessConfig = uSimMarineV22" in out and "turn_spd_loss" in out


def test_interface_help_version(capsys) -> None:
    rc, out, _ = run(capsys, "usm", "--interface")
    assert rc == 0 and "DESIRED_THRUST" in out and "USM_HEADING_OVER_GROUND" in out
    assert "TRIM_REPORT" in out and "CURRENT_FIELD" not in out.replace("USM_CURRENT_FIELD", "")
    rc, out, _ = run(capsys, "usm", "--version")
    assert rc == 0 and "marinesim" in out and "a2a9b716" in out
    rc, out, _ = run(capsys, "usm", "--help")
    assert rc == 0 and "check" in out and "replay" in out and "--example" in out
    rc, out, _ = run(capsys, "usm")
    assert rc == 0 and "run" in out


def test_check_both_modes(capsys, mission: Path) -> None:
    rc, out, _ = run(capsys, "usm", "check", str(mission))
    assert rc == 0
    assert "drift_x                  0.2" in out and "line 10" in out
    assert 'Differences between documented mode and compat="moos": 1' in out
    rc, out, _ = run(capsys, "usm", "check", str(mission), "--compat", "moos")
    assert rc == 0 and "drift_x                  0.1" in out and "line 9" in out


def test_run_writes_csv(capsys, tmp_path: Path, mission: Path) -> None:
    ev = tmp_path / "ev.txt"
    ev.write_text("event = var=DESIRED_THRUST, val=50, time=0\n")
    out_csv = tmp_path / "o.csv"
    rc, out, err = run(
        capsys,
        "usm",
        "run",
        str(mission),
        "--duration",
        "2",
        "--script",
        str(ev),
        "-o",
        str(out_csv),
    )
    assert rc == 0 and "wrote" in out and "drift_x" in err  # the mode-difference warning
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 21
    assert float(rows[1]["speed"]) == 1.25 and rows[1]["NAV_SPEED"] != ""
    assert float(rows[20]["x"]) > 0  # heading 90: moving east


def test_replay_writes_expected_columns(capsys, tmp_path: Path) -> None:
    out_csv = tmp_path / "r.csv"
    case = REF / "pause_resume.scenario.json"
    rc, out, _ = run(capsys, "usm", "replay", str(case), "-o", str(out_csv))
    assert rc == 0
    with gzip.open(REF / "pause_resume.expected.csv.gz", "rt") as fh:
        expected = list(csv.DictReader(fh))
    got = list(csv.DictReader(out_csv.open()))
    assert list(got[0]) == list(expected[0]) and len(got) == len(expected)
    for col in ("x", "y", "heading"):
        assert abs(float(got[-1][col]) - float(expected[-1][col])) <= 1e-6


# --------------------------------------------------------------------------- bad input
def _assert_clean_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2
    assert err.startswith("error: ") and "Traceback" not in err
    for n in needles:
        assert n in err


def test_missing_file(capsys, tmp_path: Path) -> None:
    rc, _, err = run(capsys, "usm", "check", str(tmp_path / "nope.moos"))
    _assert_clean_error(rc, err, "nope.moos", "file not found")
    rc, _, err = run(capsys, "usm", "replay", str(tmp_path / "x.scenario.json"), "-o", "o.csv")
    _assert_clean_error(rc, err, "file not found")


def test_unknown_parameter_with_suggestion(capsys, tmp_path: Path) -> None:
    p = tmp_path / "u.moos"
    p.write_text(MISSION.replace("start_heading", "start_headng"))
    rc, _, err = run(capsys, "usm", "check", str(p))
    _assert_clean_error(rc, err, "u.moos:8: start_headng:", "did you mean 'start_heading'")
    rc, out, _ = run(capsys, "usm", "check", str(p), "--compat", "moos")
    assert rc == 0 and "did you mean 'start_heading'" in out


def test_malformed_thrust_map(capsys, tmp_path: Path) -> None:
    p = tmp_path / "t.moos"
    p.write_text(MISSION.replace("60:3,", "60;3,"))
    rc, _, err = run(capsys, "usm", "check", str(p))
    _assert_clean_error(rc, err, "t.moos:11: thrust_map:", "'60;3'")


def test_malformed_current_field(capsys, tmp_path: Path) -> None:
    (tmp_path / "empty.cfd").write_text("")
    p = tmp_path / "c.moos"
    p.write_text(MISSION.replace("}\n", "  current_field = empty.cfd\n}\n"))
    rc, _, err = run(capsys, "usm", "check", str(p))
    _assert_clean_error(rc, err, "c.moos:12: current_field:", "empty")
    p.write_text(MISSION.replace("}\n", "  current_field = missing.cfd\n}\n"))
    rc, _, err = run(capsys, "usm", "check", str(p))
    _assert_clean_error(rc, err, "c.moos:12: current_field:", "not found")


def test_nan_in_script(capsys, tmp_path: Path, mission: Path) -> None:
    ev = tmp_path / "ev.txt"
    ev.write_text("event = var=DESIRED_THRUST, val=NaN, time=1\n")
    rc, _, err = run(
        capsys,
        "usm",
        "run",
        str(mission),
        "--duration",
        "2",
        "--script",
        str(ev),
        "-o",
        str(tmp_path / "o.csv"),
    )
    _assert_clean_error(rc, err, "ev.txt:1: event.val:", "not a finite number")
    assert not (tmp_path / "o.csv").exists()


def test_bad_options(capsys, mission: Path, tmp_path: Path) -> None:
    rc, _, err = run(capsys, "usm", "check", str(mission), "--compat", "real")
    _assert_clean_error(rc, err, "--compat")
    rc, _, err = run(capsys, "usm", "check", str(mission), "--block", "uSimMarineV22")
    _assert_clean_error(rc, err, "no 'ProcessConfig = uSimMarineV22' block")
    rc, _, err = run(
        capsys, "usm", "run", str(mission), "--duration", "-1", "-o", str(tmp_path / "o.csv")
    )
    _assert_clean_error(rc, err, "duration")


def test_alias_selects_the_block(capsys, tmp_path: Path) -> None:
    p = tmp_path / "a.moos"
    p.write_text(MISSION.replace("ProcessConfig = uSimMarine", "ProcessConfig = SIM_A"))
    rc, out, _ = run(capsys, "usm", "--alias", "SIM_A", "check", str(p))
    assert rc == 0 and "block 'SIM_A'" in out
    rc, _, err = run(capsys, "usm", "check", str(p))
    _assert_clean_error(rc, err, "no 'ProcessConfig = uSimMarine' block", "SIM_A")


def test_run_v22_block(capsys, tmp_path: Path) -> None:
    p = tmp_path / "v.moos"
    p.write_text(MISSION.replace("uSimMarine", "uSimMarineV22"))
    ev = tmp_path / "ev.txt"
    ev.write_text("event = var=DESIRED_THRUST, val=50, time=0\n")
    out_csv = tmp_path / "v.csv"
    rc, out, _ = run(
        capsys, "usm", "run", str(p), "--duration", "1", "--script", str(ev), "-o", str(out_csv)
    )
    assert rc == 0
    rows = list(csv.DictReader(out_csv.open()))
    # V22 publishes the NAV record on even iterations only
    assert rows[1]["NAV_X"] == "" and rows[2]["NAV_X"] != ""


def test_malformed_usm_reset_follows_the_program(capsys, tmp_path: Path, mission: Path) -> None:
    ev = tmp_path / "ev.txt"
    ev.write_text(
        'event = var=USM_RESET, val="x=5,foo=3,y=7", time=1\n'
        "event = var=DESIRED_THRUST, val=abc, time=1\n"
    )
    out_csv = tmp_path / "o.csv"
    rc, _, err = run(
        capsys,
        "usm",
        "run",
        str(mission),
        "--duration",
        "2",
        "--script",
        str(ev),
        "-o",
        str(out_csv),
    )
    # the program applies the items before the unknown key and counts the reset; a string
    # message for a double variable is ignored: both are warnings, not errors
    assert rc == 0 and "unknown key" in err and "string message" in err
    rows = list(csv.DictReader(out_csv.open()))
    # x reset to 5, then one step of the 0.2 m/s drift; y untouched
    assert float(rows[10]["x"]) == pytest.approx(5.0 + 0.2 * 0.1, abs=1e-12)
    assert float(rows[10]["y"]) == 0.0
    assert float(rows[10]["USM_RESET_COUNT"]) == 1.0


def test_failure_mid_run_keeps_the_rows_so_far(
    capsys, tmp_path: Path, mission: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that has started never loses its log (exit 1, partial CSV, no traceback)."""
    from marinesim.models import usm as kinematic

    real_iterate = kinematic.iterate

    def failing_iterate(cfg, state, moos_time):  # noqa: ANN001, ANN202
        if moos_time > 1.05:
            raise FloatingPointError("model bug")
        return real_iterate(cfg, state, moos_time)

    monkeypatch.setattr(kinematic, "iterate", failing_iterate)
    out_csv = tmp_path / "o.csv"
    rc, _, err = run(capsys, "usm", "run", str(mission), "--duration", "5", "-o", str(out_csv))
    assert rc == 1 and "Traceback" not in err
    assert "FloatingPointError: model bug" in err and "partial log written" in err
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 11 and float(rows[-1]["t"]) == 1.0  # start-up row + 10 iterations
    assert rows[-1]["NAV_X"] != ""
