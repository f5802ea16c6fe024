"""The MOOS face at the boundary: encodings, event-script keys, limits, non-finite runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.core.errors import ConfigError, NumericalError
from marinesim.interop.moos.files import load_usm_config
from marinesim.interop.moos.runner import run_moos_file
from marinesim.interop.moos.script import parse_script, read_script

MISSION = "ProcessConfig = uSimMarine\n{\n  AppTick = 10\n  prefix = NAV\n%s}\n"
HUGE = "1" + "0" * 330  # a digit string beyond the largest double


def _mission(tmp_path: Path, body: str = "") -> Path:
    p = tmp_path / "m.moos"
    p.write_text(MISSION % body)
    return p


def test_latin1_byte_is_named_with_offset(tmp_path):
    p = tmp_path / "m.moos"
    p.write_bytes((MISSION % "  // 20\xb0 turn\n").encode("latin-1"))
    with pytest.raises(ConfigError) as exc:
        load_usm_config(p)
    assert exc.value.file == str(p) and exc.value.line == 5
    assert "byte 0xb0" in str(exc.value)


def test_overflowing_number_is_an_error_or_a_warning(tmp_path):
    p = _mission(tmp_path, f"  start_speed = {HUGE}\n")
    with pytest.raises(ConfigError, match="start_speed"):
        load_usm_config(p, compat="doc")
    loaded = load_usm_config(p, compat="moos")
    assert loaded.config.start_speed == 0.0
    assert any("start_speed" in str(w) for w in loaded.warnings)


def test_negative_max_depth_rate_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="max_depth_rate"):
        load_usm_config(_mission(tmp_path, "  max_depth_rate = -1\n"))


@pytest.mark.parametrize("key", ["evnet", "events", "Event_"])
def test_misspelt_event_key_is_an_error(key):
    with pytest.raises(ConfigError, match="did you mean 'event'") as exc:
        parse_script(f"{key} = var=DESIRED_THRUST, val=50, time=0\n", file="s.txt")
    assert exc.value.line == 1


def test_other_keys_of_a_timer_block_are_still_ignored():
    evs = parse_script("ProcessConfig = uTimerScript\n{\n paused = false\n"
                       " event = var=A, val=1, time=0\n}\n")  # fmt: skip
    assert [e.var for e in evs] == ["A"]


def test_long_numbers_do_not_take_quadratic_time():
    # a failed match on a 30 000-digit value used to backtrack quadratically
    with pytest.raises(ConfigError, match="not a finite number|overflows"):
        parse_script(f"event = var=A, val={'9' * 30000}x, time={'9' * 30000}x\n")


def test_script_path_checks(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        read_script(tmp_path)


def test_tiny_apptick_and_huge_duration_are_limited(tmp_path):
    p = _mission(tmp_path)
    with pytest.raises(ConfigError, match="MAX_SAMPLES"):
        run_moos_file(p, duration=1e9)
    q = tmp_path / "q.moos"
    q.write_text(MISSION.replace("AppTick = 10", "AppTick = 1000000000000") % "")
    with pytest.raises(ConfigError, match="MIN_DT"):
        run_moos_file(q, duration=1.0)


def test_overflowing_run_stops_with_numerical_error_and_keeps_rows(tmp_path):
    big = "9" * 300
    p = _mission(tmp_path, f"  start_speed = {big}\n  max_deceleration = 0\n")
    with pytest.raises(NumericalError) as exc:
        run_moos_file(p, duration=50.0)
    partial = exc.value.result  # type: ignore[attr-defined]
    assert len(partial.rows) >= 1
    flat = [v for row in partial.rows for v in row if isinstance(v, float)]
    assert all(abs(v) != float("inf") for v in flat)


def test_cli_overflow_exits_1_with_finite_partial_log(tmp_path, capsys):
    p = _mission(tmp_path, f"  start_speed = {'9' * 300}\n  max_deceleration = 0\n")
    out = tmp_path / "o.csv"
    rc = main(["usm", "run", str(p), "--duration", "50", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    assert "not finite" in err or "overflowed" in err
    assert out.exists() and "inf" not in out.read_text().lower()
