"""configure(): the uSimMarine block in both modes (spec usimmarine.md §5, §10.1, §10.3, §12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import marinesim.reference
from marinesim.core.errors import ConfigError
from marinesim.models.usm.config import (
    PARAMS,
    UsmConfig,
    config_from_mapping,
    configure,
    drift_from_vector,
    effective_rows,
    example_block,
    parse_start_pos,
    split_config_line,
)

REF = Path(marinesim.reference.__file__).parent / "data" / "usm"


def cfg(lines, compat="doc", variant="usm", **kw):
    return configure(lines, compat=compat, variant=variant, file="m.moos", **kw)


def texts(warns) -> list[str]:
    return [str(w) for w in warns]


# --------------------------------------------------------------------------- MOOS line rules
def test_split_config_line_blank_deletion_and_comments() -> None:
    assert split_config_line("start_pos = x=1, y=2 // c") == ("start_pos", "x=1,y=2")
    assert split_config_line("turn_rate =   ") is None
    assert split_config_line("// only a comment") is None
    assert split_config_line("\tprefix\t=\tNAV\r") == ("prefix", "NAV")


def test_keys_case_insensitive_and_empty_values_dropped() -> None:
    c, w = cfg([("TURN_RATE", "50"), ("Prefix", "NAV"), ("max_deceleration", "  ")])
    assert c.turn_rate == 50.0 and c.prefix == "NAV" and c.max_deceleration == 0.5
    assert w == []


def test_defaults_follow_the_program() -> None:
    c, w = cfg([])
    assert (c.buoyancy_rate, c.max_acceleration, c.max_depth_rate_speed) == (0.025, 0.0, 2.0)
    assert c.thrust_map is not None and c.thrust_map.thrust_factor == 20.0
    assert w == []


# --------------------------------------------------------------------------- row 1: order
def test_row1_duplicate_parameter_reverse_vs_file_order() -> None:
    lines = [("drift_x", "0.1", 3), ("drift_x", "0.2", 4)]
    doc, wd = cfg(lines, "doc")
    moos, wm = cfg(lines, "moos")
    assert doc.drift_x == 0.2 and moos.drift_x == 0.1
    for w in (wd, wm):
        assert len(w) == 1
        assert "drift_x" in str(w[0]) and "0.2" in str(w[0]) and "0.1" in str(w[0])
        assert w[0].param == "drift_x" and w[0].file == "m.moos"


def test_row1_drift_components_vs_drift_vector() -> None:
    lines = [("drift_x", "0.3"), ("drift_y", "-0.1"), ("drift_vector", "135,0.4")]
    doc, wd = cfg(lines, "doc")
    moos, wm = cfg(lines, "moos")
    assert (moos.drift_x, moos.drift_y) == (0.3, -0.1)
    ex, ey = drift_from_vector(135.0, 0.4)
    assert (doc.drift_x, doc.drift_y) == (ex, ey)
    assert ex == pytest.approx(0.4 * 2**-0.5) and ey == pytest.approx(-0.4 * 2**-0.5)
    assert {w.param for w in wd} == {"drift_x", "drift_y"} == {w.param for w in wm}


def test_row1_thrust_map_lines_order_dependent() -> None:
    lines = [("thrust_map", "20:2", 5), ("thrust_map", "40:1", 6)]
    doc, wd = cfg(lines, "doc")
    moos, wm = cfg(lines, "moos")
    assert doc.thrust_map.pos_pairs == ((20.0, 2.0),)
    assert moos.thrust_map.pos_pairs == ((40.0, 1.0),)
    assert any("thrust map differs between modes" in t for t in texts(wd))
    assert any("thrust map differs between modes" in t for t in texts(wm))


def test_row1_no_warning_when_order_does_not_matter() -> None:
    lines = [("drift_x", "0.1"), ("drift_x", "0.1"), ("drift_y", "0.2")]
    for compat in ("doc", "moos"):
        c, w = cfg(lines, compat)
        assert (c.drift_x, c.drift_y) == (0.1, 0.2) and w == []


def test_v22_file_order_in_both_modes() -> None:
    lines = [("drift_x", "0.1"), ("drift_x", "0.2"), ("prefix", "A"), ("prefix", "B")]
    for compat in ("doc", "moos"):
        c, w = cfg(lines, compat, variant="usm_v22")
        assert c.drift_x == 0.2 and c.prefix == "B" and w == []


# --------------------------------------------------------------------------- row 2: thrust map
def test_row2_invalid_pair_followed_by_items() -> None:
    line = [("thrust_map", "20:2.4, 50:4.2, 80:4.8, 90:4, 100:5.0", 14)]
    doc, wd = configure(line, compat="doc", file="mission.moos")
    moos, wm = configure(line, compat="moos", file="mission.moos")
    assert doc.thrust_map.pos_pairs[-1] == (100.0, 5.0)
    assert moos.thrust_map.pos_pairs[-1] == (80.0, 4.8)
    expected = (
        "mission.moos:14: thrust_map: pair '90:4' is not monotonic after '80:4.8'; documented "
        "mode drops this pair only, compat=\"moos\" also drops '100:5.0'"
    )
    assert texts(wd) == [expected] and texts(wm) == [expected]


def test_row2_malformed_item_doc_error_moos_warning() -> None:
    line = [("thrust_map", "20:2, 40:abc, 60:3", 9)]
    with pytest.raises(ConfigError) as exc:
        cfg(line, "doc")
    assert exc.value.line == 9 and exc.value.param == "thrust_map" and "'40:abc'" in str(exc.value)
    moos, wm = cfg(line, "moos")
    assert moos.thrust_map.pos_pairs == ((20.0, 2.0),)
    assert any("'40:abc'" in t and "'60:3'" in t for t in texts(wm))


def test_thrust_factor_and_reflect_into_map() -> None:
    c, w = cfg([("thrust_factor", "5"), ("thrust_reflect", "TRUE")])
    assert c.thrust_map.thrust_factor == 5.0 and c.thrust_map.reflect and w == []
    assert c.thrust_map.speed(-50.0) == -10.0


# --------------------------------------------------------------------------- row 3: turn_loss
def test_row3_turn_loss() -> None:
    doc, wd = cfg([("turn_loss", "0.5")], "doc")
    moos, wm = cfg([("turn_loss", "0.5")], "moos")
    assert doc.turn_loss == 0.5 and moos.turn_loss == 0.85
    assert len(wd) == 1 and len(wm) == 1 and wd[0].param == wm[0].param == "turn_loss"
    for compat in ("doc", "moos"):
        c, w = cfg([("turn_loss", "0.85")], compat)
        assert c.turn_loss == 0.85 and w == []
    with pytest.raises(ConfigError, match="outside"):
        cfg([("turn_loss", "1.5")], "doc")
    c, w = cfg([("turn_loss", "1.5")], "moos")
    assert c.turn_loss == 0.85 and len(w) == 1


# --------------------------------------------------------------------------- row 4: current field
class _Field:
    name = "f"
    radius = 30.0

    def __len__(self) -> int:
        return 2


def test_row4_current_field_doc_loads_moos_ignores(tmp_path: Path) -> None:
    calls = []

    def loader(path, *, file=None, line=None):
        calls.append((Path(path), file, line))
        return _Field(), []

    lines = [("current_field", "sub/f.cfd", 7), ("current_field_active", "false", 8)]
    doc, wd = cfg(lines, "doc", base_dir=tmp_path, load_current_field=loader)
    assert isinstance(doc.current_field, _Field) and doc.current_field_active is False
    assert calls == [(tmp_path / "sub" / "f.cfd", "m.moos", 7)]
    assert {w.param for w in wd} == {"current_field", "current_field_active"}
    moos, wm = cfg(lines, "moos", base_dir=tmp_path, load_current_field=loader)
    assert moos.current_field is None and moos.current_field_active is True
    assert {w.param for w in wm} == {"current_field", "current_field_active"}
    assert len(calls) == 1  # moos mode never reads the file


def test_row4_current_field_needs_a_reader() -> None:
    with pytest.raises(ConfigError, match="file reader") as exc:
        cfg([("current_field", "f.cfd", 3)], "doc")
    assert exc.value.line == 3 and exc.value.param == "current_field"


def test_row4_loader_error_is_reported_with_location() -> None:
    def loader(path, *, file=None, line=None):
        raise ConfigError(
            f"current-field file {str(path)!r} not found",
            file=file,
            line=line,
            param="current_field",
        )

    with pytest.raises(ConfigError, match="not found") as exc:
        cfg([("current_field", "nope.cfd", 4)], "doc", load_current_field=loader)
    assert exc.value.line == 4


# --------------------------------------------------------------------------- row 6: exponents
def test_row6_exponent_numbers() -> None:
    doc, wd = cfg([("max_deceleration", "1e-1")], "doc")
    moos, wm = cfg([("max_deceleration", "1e-1")], "moos")
    assert doc.max_deceleration == 0.1 and moos.max_deceleration == 0.5
    assert len(wd) == 1 and len(wm) == 1 and "exponent" in str(wd[0])
    doc, _ = cfg([("drift_vector", "9e1,1")], "doc")
    moos, wm = cfg([("drift_vector", "9e1,1")], "moos")
    assert doc.drift_x == pytest.approx(1.0) and moos.drift_x == 0.0 and "exponent" in str(wm[0])


# --------------------------------------------------------------------------- row 9: unknown
def test_row9_unknown_parameter() -> None:
    with pytest.raises(ConfigError) as exc:
        cfg([("turn_rat", "50", 12)], "doc")
    assert "did you mean 'turn_rate'" in str(exc.value) and exc.value.line == 12
    c, w = cfg([("turn_rat", "50", 12)], "moos")
    assert c.turn_rate == 70.0 and "did you mean 'turn_rate'" in str(w[0]) and w[0].line == 12


def test_deprecated_alias_maps_with_warning_usm_only() -> None:
    for compat in ("doc", "moos"):
        c, w = cfg([("FORCE_X", "0.4"), ("STARTHEADING", "30")], compat)
        assert c.drift_x == 0.4 and c.start_heading == 30.0
        assert sum("deprecated" in t for t in texts(w)) == 2
    with pytest.raises(ConfigError, match="unknown parameter"):
        cfg([("FORCE_X", "0.4")], "doc", variant="usm_v22")


# --------------------------------------------------------------------------- row 10: invalid
@pytest.mark.parametrize(
    ("key", "value", "field", "moos_value"),
    [
        ("start_depth", "-3", "start_depth", 0.0),
        ("max_acceleration", "-1", "max_acceleration", 0.0),
        ("default_water_depth", "-5", "default_water_depth", 0.0),
        ("turn_rate", "150", "turn_rate", 100.0),
        ("thrust_reflect", "yes", "thrust_reflect", None),
        ("dual_state", "1", "dual_state", False),
        ("start_x", "abc", "start_x", 0.0),
    ],
)
def test_row10_invalid_value(key, value, field, moos_value) -> None:
    with pytest.raises(ConfigError) as exc:
        cfg([(key, value, 5)], "doc")
    assert exc.value.param == key and exc.value.line == 5 and exc.value.file == "m.moos"
    c, w = cfg([(key, value, 5)], "moos")
    assert len(w) == 1 and w[0].param == key
    if moos_value is not None:
        assert getattr(c, field) == moos_value
    else:
        assert c.thrust_map.reflect is False


def test_negative_thrust_factor() -> None:
    with pytest.raises(ConfigError):
        cfg([("thrust_factor", "-2")], "doc")
    c, w = cfg([("thrust_factor", "-2")], "moos")
    assert c.thrust_map.thrust_factor == 20.0 and len(w) == 1


# --------------------------------------------------------------------------- start_pos
def test_start_pos_forms() -> None:
    vals, problem = parse_start_pos("x=10, y=-20, speed=0, heading=30, depth=0")
    assert problem is None
    assert vals == dict(start_x=10, start_y=-20, start_speed=0, start_heading=30, start_depth=0)
    assert parse_start_pos("1,2,3,4,5")[0]["start_depth"] == 5.0
    vals, problem = parse_start_pos("x=5,foo=3,y=7")
    assert vals == {"start_x": 5.0} and "foo" in problem
    assert parse_start_pos("x=12abc")[0] == {"start_x": 12.0}
    assert parse_start_pos("x=12abc", "doc")[1] is not None
    c, w = cfg([("start_pos", "x=5,foo=3,y=7", 2)], "moos")
    assert c.start_x == 5.0 and c.start_y == 0.0 and len(w) == 1
    with pytest.raises(ConfigError, match="foo"):
        cfg([("start_pos", "x=5,foo=3,y=7", 2)], "doc")


# --------------------------------------------------------------------------- V22
def test_v22_keys() -> None:
    lines = [("turn_spd_loss", "0.4"), ("max_speed", "3"), ("turn_spd_map_null_rate", "10")]
    for compat in ("doc", "moos"):
        c, w = cfg(lines, compat, variant="usm_v22")
        assert (c.turn_loss, c.max_speed, c.turn_spd_map_null_rate) == (0.4, 3.0, 10.0)
        assert w == []
    c, _ = cfg([("turn_loss", "0.3")], "doc", variant="usm_v22")
    assert c.turn_loss == 0.3  # documented name accepted as an alias in default mode
    c, w = cfg([("turn_loss", "0.3")], "moos", variant="usm_v22")
    assert c.turn_loss == 0.85 and any("unknown" in t for t in texts(w))
    with pytest.raises(ConfigError, match="turn_spd_loss"):
        cfg([("turn_spd_loss", "0.4")], "doc")  # not a usm key: unknown


@pytest.mark.parametrize("key", ["wormhole", "polar_plot", "yaw_pid_kp"])
def test_v22_unsupported_keys(key) -> None:
    with pytest.raises(ConfigError, match="not supported yet"):
        cfg([(key, "1")], "doc", variant="usm_v22")
    _, w = cfg([(key, "1")], "moos", variant="usm_v22")
    assert "not supported yet" in str(w[0])


# --------------------------------------------------------------------------- app keys, globals
def test_app_keys_and_globals() -> None:
    c, w = cfg(
        [("AppTick", "10"), ("CommsTick", "10"), ("app_logging", "true")],
        globals={"LatOrigin": "42.358456", "LONGORIGIN": "-71.087589", "MOOSTimeWarp": "2"},
    )
    assert c.app_tick == 10.0 and c.extras == {"commstick": "10", "app_logging": "true"}
    assert (c.lat_origin, c.long_origin, c.time_warp) == (42.358456, -71.087589, 2.0)
    assert w == []
    c, w = cfg([], globals={"LatOrigin": "85", "LongOrigin": "0"})
    assert c.lat_origin is None and "outside" in str(w[0])


# --------------------------------------------------------------------------- reference configs
_CASES = sorted(
    p.name for p in REF.glob("*.scenario.json") if "config" in json.loads(p.read_text())
)


@pytest.mark.parametrize("case", _CASES)
def test_reference_configs_agree_between_modes_except_order(case) -> None:
    assert len(_CASES) == 8
    scen = json.loads((REF / case).read_text())
    doc, wd = cfg(scen["config"], "doc")
    moos, wm = cfg(scen["config"], "moos")
    if scen["name"] == "drift_gusts_dual_state":
        assert (moos.drift_x, moos.drift_y) == (0.3, -0.1)
        assert {w.param for w in wm} == {"drift_x", "drift_y"}
    else:
        assert wd == [] and wm == []
        for f in ("start_x", "start_y", "start_heading", "drift_x", "prefix", "turn_rate"):
            assert getattr(doc, f) == getattr(moos, f)
        assert doc.thrust_map == moos.thrust_map


# --------------------------------------------------------------------------- mapping, schema
def test_config_from_mapping() -> None:
    c, w = config_from_mapping(
        {"thrust_map": "20:1, 100:5", "turn_rate": 55, "dual_state": True, "compat": "moos"},
        file="s.yaml",
        marks={"p.turn_rate": (7, 5)},
        prefix="p",
    )
    assert c.compat == "moos" and c.turn_rate == 55.0 and c.dual_state is True
    assert c.thrust_map.pos_pairs == ((20.0, 1.0), (100.0, 5.0)) and w == []
    with pytest.raises(ConfigError) as exc:
        config_from_mapping(
            {"turn_rate": "fast"}, file="s.yaml", marks={"p.turn_rate": (7, 5)}, prefix="p"
        )
    assert exc.value.line == 7
    with pytest.raises(ConfigError, match="compat"):
        config_from_mapping({"compat": "program"})


def test_example_block_parses_back_cleanly_in_both_modes() -> None:
    text = example_block("usm")
    body = text[text.index("{") + 1 : text.index("}")].splitlines()
    for compat in ("doc", "moos"):
        c, w = cfg(body, compat)
        assert w == [] and c.app_tick == 10.0
    for p in PARAMS:
        if "usm" in p.variants and p.kind not in ("unsupported", "app") and p.name != "apptick":
            assert p.name in text
    body22 = example_block("usm_v22")
    assert "turn_spd_loss" in body22 and "turn_loss " not in body22


def test_effective_rows_name_the_source_line() -> None:
    c, _ = cfg([("turn_rate", "50", 9)])
    rows = {r[0]: r for r in effective_rows(c)}
    assert rows["turn_rate"][1:] == ("50", "%", "line 9")
    assert rows["max_deceleration"][3] == "default"


def test_bad_variant_or_compat() -> None:
    with pytest.raises(ConfigError):
        configure([], variant="usm_v23")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        configure([], compat="real")  # type: ignore[arg-type]
    assert UsmConfig().variant == "usm"


def test_v22_example_parses_back_cleanly() -> None:
    text = example_block("usm_v22")
    body = text[text.index("{") + 1 : text.index("}")].splitlines()
    for compat in ("doc", "moos"):
        c, w = cfg(body, compat, variant="usm_v22")
        assert w == [] and c.variant == "usm_v22" and c.max_speed == 5.0


def test_documentation_quoted_thrust_map() -> None:
    line = [("thrust_map", '"-100:-3.5, -75:-3.2, 20:2.4, 100:5"', 4)]
    doc, wd = cfg(line, "doc")
    moos, wm = cfg(line, "moos")
    assert doc.thrust_map.pos_pairs == ((20.0, 2.4), (100.0, 5.0))
    assert moos.thrust_map.pos_pairs == () and moos.thrust_map.neg_pairs == ()
    assert len(wd) == 1 and wd[0].param == "thrust_map" and wd[0].line == 4
    assert len(wm) == 1 and "'\"-100:-3.5'" in str(wm[0])


def test_mapping_small_floats_are_not_written_with_an_exponent() -> None:
    c, w = config_from_mapping({"max_deceleration": 0.00001, "compat": "moos"})
    assert c.max_deceleration == 0.00001 and w == []


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "start_x",
                "start_y",
                "start_heading",
                "rotate_speed",
                "drift_x",
                "buoyancy_rate",
                "max_depth_rate",
                "trim_tolerance",
            ]
        ),
        st.floats(-1000, 1000, allow_nan=False).map(lambda v: round(v, 3)),
    )
)
def test_distinct_plain_numbers_agree_between_modes(values) -> None:
    lowest = {p.name: p.minimum for p in PARAMS}  # out-of-range values are errors in both modes
    values = {k: v for k, v in values.items() if lowest.get(k) is None or v >= lowest[k]}
    lines = [(k, f"{v:.3f}") for k, v in values.items()]
    doc, wd = cfg(lines, "doc")
    moos, wm = cfg(lines, "moos")
    assert wd == [] and wm == []
    for k, v in values.items():
        assert getattr(doc, k) == getattr(moos, k) == pytest.approx(v, abs=5e-4)


def test_v22_boolean_vocabularies() -> None:
    c, w = cfg(
        [("thrust_mode_diff", "differential"), ("thrust_mode_reverse", "normal")],
        "doc",
        variant="usm_v22",
    )
    assert c.thrust_mode_diff is True and c.thrust_mode_reverse is False and w == []
    c, w = cfg([("dual_state", "yes")], "moos", variant="usm_v22")
    assert c.dual_state is True and len(w) == 1  # the documented mode would reject it
    with pytest.raises(ConfigError):
        cfg([("dual_state", "yes")], "doc", variant="usm_v22")
    c, w = cfg([("dual_state", "yes")], "moos")  # uSimMarine: isBoolean only
    assert c.dual_state is False and len(w) == 1


_KEYS = [p.name for p in PARAMS] + ["FORCE_X", "turn_rat", "wormhole", "", "x"]
_VALUES = st.one_of(
    st.sampled_from(
        [
            "1",
            "-2.5",
            "1e-3",
            "true",
            "yes",
            "x=1,foo=2",
            "20:1, 10:2",
            "a:b",
            '"q"',
            "90,0.5",
            "nan",
            "=",
            ",",
            ":",
        ]
    ),
    st.text(alphabet='0123456789.-+e:,= xyTRUEfalse"', max_size=12),
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), max_size=8),
    st.sampled_from(["usm", "usm_v22"]),
)
def test_configure_never_fails_unexpectedly(lines, variant) -> None:
    # compat="moos" runs any block (warnings only); the documented mode raises ConfigError only
    c, w = cfg(lines, "moos", variant=variant)
    assert isinstance(c, UsmConfig) and all(isinstance(x.message, str) for x in w)
    try:
        cfg(lines, "doc", variant=variant)
    except ConfigError as exc:
        assert exc.file == "m.moos"
