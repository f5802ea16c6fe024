"""The MOOS face: .moos files, event scripts, configuration loading and the runner."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import marinesim.reference
from marinesim.core.errors import ConfigError
from marinesim.interop.moos.files import load_current_field, load_usm_config
from marinesim.interop.moos.moosfile import MoosFile, read_moos_file
from marinesim.interop.moos.runner import run_moos_file, run_usm
from marinesim.interop.moos.script import parse_script
from marinesim.models.usm.config import configure

REF = Path(marinesim.reference.__file__).parent / "data" / "usm"

MISSION = """// a mission
ServerHost = localhost
LatOrigin  = 42.358456   // MIT
longorigin = -71.087589

ProcessConfig = ANTLER
{
  Run = MOOSDB @ NewConsole = false
}

ProcessConfig = uSimMarine
{
  AppTick   = 10
  CommsTick = 10

  prefix        = NAV     // published prefix
  start_pos     = x=1, y=2, speed=0, heading=45, depth=0
  thrust_map    = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- moosfile
def test_parse_globals_blocks_comments_and_lines() -> None:
    mf = MoosFile.parse(MISSION, path="m.moos")
    assert mf.global_value("LATORIGIN") == "42.358456"
    assert mf.global_value("LongOrigin") == "-71.087589"
    assert mf.block_names() == ["ANTLER", "uSimMarine"]
    blk = mf.block("usimmarine")
    assert blk.line == 11
    assert blk.entries[2] == ("prefix", "NAV", 16)
    assert blk.entries[3] == ("start_pos", "x=1, y=2, speed=0, heading=45, depth=0", 17)


def test_missing_block_lists_the_blocks() -> None:
    mf = MoosFile.parse(MISSION, path="m.moos")
    with pytest.raises(ConfigError, match="blocks: ANTLER, uSimMarine"):
        mf.block("uSimMarineV22")


@pytest.mark.parametrize(
    ("text", "line", "pattern"),
    [
        ("ProcessConfig = uSimMarine\n{\n prefix = NAV\n", 1, "not closed"),
        ("ProcessConfig = uSimMarine\n prefix = NAV\n", 2, "expected '{'"),
        ("}\n", 1, "outside a block"),
        ("#include plug.moos\n", 1, "nsplug"),
        ("ProcessConfig = uSimMarine\n", 1, "has no block"),
    ],
)
def test_malformed_moos_files(text, line, pattern) -> None:
    with pytest.raises(ConfigError, match=pattern) as exc:
        MoosFile.parse(text, path="bad.moos")
    assert exc.value.line == line and exc.value.file == "bad.moos"


def test_brace_on_the_processconfig_line_and_duplicate_globals() -> None:
    mf = MoosFile.parse("A = 1\na = 2\nProcessConfig = x {\n k = v\n}\n")
    assert mf.global_value("a") == "1" and len(mf.warnings) == 1
    assert mf.block("X").entries == [("k", "v", 4)]


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found") as exc:
        read_moos_file(tmp_path / "nope.moos")
    assert "nope.moos" in str(exc.value)


def test_reference_moos_file_texts_configure_like_the_config_lists() -> None:
    for case in sorted(REF.glob("*.scenario.json")):
        scen = json.loads(case.read_text())
        if "moos_file_text" not in scen:
            continue
        mf = MoosFile.parse(scen["moos_file_text"], path=case.name)
        blk = mf.block("uSimMarine")
        for compat in ("doc", "moos"):
            a, _ = configure(blk.entries, compat=compat, globals=mf.globals_dict())
            b, _ = configure(scen["config"], compat=compat)
            assert a.app_tick is not None and a.lat_origin == 42.358456
            for f in ("start_x", "start_heading", "drift_x", "drift_y", "prefix", "thrust_map"):
                assert getattr(a, f) == getattr(b, f), (case.name, f)


# --------------------------------------------------------------------------- scripts
def test_script_typing_and_order() -> None:
    evs = parse_script(
        "// c\n"
        "event = var=DESIRED_RUDDER, val=-20, time=5.5\n"
        'event = var=DRIFT_VECTOR_ADD, val="90,0.5", time=2  // gust\n'
        "event = var=USM_SIM_PAUSED, val=true, time=2, source=op\n"
        'event = var=DESIRED_THRUST, val="50", time=0\n'
    )
    assert [(e.t, e.var, e.value, e.kind) for e in evs] == [
        (0.0, "DESIRED_THRUST", "50", "string"),
        (2.0, "DRIFT_VECTOR_ADD", "90,0.5", "string"),
        (2.0, "USM_SIM_PAUSED", "true", "string"),
        (5.5, "DESIRED_RUDDER", -20.0, "double"),
    ]
    assert evs[2].source == "op" and evs[0].source == "uTimerScript" and evs[3].line == 2


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("event = var=DESIRED_THRUST, val=nan, time=1", "not a finite number"),
        ("event = var=DESIRED_THRUST, val=-inf, time=1", "not a finite number"),
        ("event = var=DESIRED_THRUST, val=1e999, time=1", "infinity"),
        ("event = var=DESIRED_THRUST, val=5", "no time"),
        ("event = var=DESIRED_THRUST, val=5, time=-1", "time"),
        ("event = var=DESIRED_THRUST, val=5, time=1:4", "not supported yet"),
        ("event = var=DESIRED_THRUST, value=5, time=1", "unknown event key"),
        ("DESIRED_THRUST 5", "expected 'event"),
    ],
)
def test_script_errors_name_file_and_line(line, pattern) -> None:
    with pytest.raises(ConfigError, match=pattern) as exc:
        parse_script("// header\n" + line + "\n", file="ev.txt")
    assert exc.value.line == 2 and exc.value.file == "ev.txt"


def test_script_from_a_utimerscript_block() -> None:
    text = (
        "ProcessConfig = uTimerScript\n{\n  AppTick = 4\n  reset_max = 0\n"
        "  event = var=DRIFT_X, val=0.5, time=20\n}\n"
    )
    evs = parse_script(text)
    assert [(e.var, e.value) for e in evs] == [("DRIFT_X", 0.5)]


# --------------------------------------------------------------------------- files
def test_load_current_field_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found") as exc:
        load_current_field(tmp_path / "f.cfd", file="m.moos", line=9)
    assert (exc.value.file, exc.value.line, exc.value.param) == ("m.moos", 9, "current_field")
    empty = write(tmp_path, "e.cfd", "\n  \n")
    with pytest.raises(ConfigError, match="empty"):
        load_current_field(empty, file="m.moos", line=9)


def test_load_usm_config_with_current_field(tmp_path: Path) -> None:
    write(tmp_path, "f.cfd", (REF / "current_field.cfd").read_text())
    m = write(tmp_path, "m.moos", MISSION[:-2] + "  current_field = f.cfd\n}\n")
    doc = load_usm_config(m)
    assert doc.block == "uSimMarine" and len(doc.config.current_field) == 7
    assert doc.config.start_x == 1.0 and doc.config.lat_origin == 42.358456
    assert any("problem with line" in str(w) for w in doc.warnings)  # the .cfd's bad line
    moos = load_usm_config(m, compat="moos")
    assert moos.config.current_field is None
    assert any(w.param == "current_field" for w in moos.warnings)


def test_load_usm_config_missing_current_field_file(tmp_path: Path) -> None:
    m = write(tmp_path, "m.moos", MISSION[:-2] + "  current_field = no.cfd\n}\n")
    with pytest.raises(ConfigError, match="not found") as exc:
        load_usm_config(m)
    assert exc.value.line == 19 and exc.value.param == "current_field"


def test_v22_block_is_found_by_name(tmp_path: Path) -> None:
    m = write(tmp_path, "m.moos", MISSION.replace("uSimMarine", "uSimMarineV22"))
    loaded = load_usm_config(m)
    assert loaded.config.variant == "usm_v22" and loaded.block == "uSimMarineV22"


# --------------------------------------------------------------------------- runner
def test_run_moos_file_speed_halving_and_events(tmp_path: Path) -> None:
    m = write(tmp_path, "m.moos", MISSION)
    ev = write(
        tmp_path,
        "ev.txt",
        "event = var=DESIRED_THRUST, val=50, time=0\n"
        "event = var=DESIRED_RUDDER, val=10, time=0.25\n",
    )
    run = run_moos_file(m, duration=1.0, script=ev)
    assert run.columns[:3] == ["t", "x", "y"]
    assert run.column("t") == [round(0.1 * k, 9) for k in range(11)]
    # thrust 50 on the map 40:2, 60:3 → 2.5 m/s; speed halves the error every iteration
    assert run.column("speed")[1:3] == pytest.approx([1.25, 1.875], abs=1e-12)
    # the rudder event at 0.25 s acts over the step ending at 0.3 s (turn loss 0.85·10 %)
    hdg = run.column("heading")
    assert hdg[1] == hdg[2] == 45.0 and hdg[3] > 45.0
    assert run.column("speed")[3] == pytest.approx((1.875 + 2.5 * (1 - 0.085)) / 2, abs=1e-12)
    assert run.column("NAV_X")[0] is None and run.column("NAV_X")[1] == run.column("x")[1]
    assert not math.isnan(run.column("NAV_LAT")[1])
    out = run.to_csv(tmp_path / "out.csv")
    lines = out.read_text().splitlines()
    assert lines[0].startswith("t,x,y,heading,speed") and len(lines) == 12
    header = lines[0].split(",")
    assert lines[1].split(",")[header.index("NAV_X")] == ""  # NAV_X blank at start-up
    assert {"DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR"} <= set(header)


def test_run_default_apptick_warning_and_bad_duration(tmp_path: Path) -> None:
    m = write(tmp_path, "m.moos", "ProcessConfig = uSimMarine\n{\n prefix = NAV\n}\n")
    run = run_moos_file(m, duration=1.0)
    assert len(run.rows) == 6  # 5 Hz default
    assert any("AppTick" in str(w) for w in run.config_warnings)
    cfg, _ = configure([])
    with pytest.raises(ConfigError, match="duration"):
        run_usm(cfg, duration=float("nan"))
    with pytest.raises(ConfigError, match="AppTick"):
        run_usm(configure([("AppTick", "-1")], compat="moos")[0], duration=1.0)


def test_duplicate_block_warns_and_first_is_used() -> None:
    mf = MoosFile.parse("ProcessConfig = A\n{\n k = 1\n}\nProcessConfig = a\n{\n k = 2\n}\n")
    assert mf.block("A").entries == [("k", "1", 3)]
    assert len(mf.warnings) == 1 and mf.warnings[0].line == 5


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ProcessConfig={}#/ \nabc=1", max_size=60))
def test_moos_parse_raises_only_config_errors(text) -> None:
    try:
        mf = MoosFile.parse(text, path="f.moos")
    except ConfigError as exc:
        assert exc.file == "f.moos" and exc.line is not None
    else:
        assert all(b.line >= 1 for b in mf.blocks)
