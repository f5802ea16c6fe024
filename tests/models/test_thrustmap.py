"""ThrustMap (spec usimmarine.md §4, §10.1 rows 2 and 8, §14)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import marinesim.reference
from marinesim.core.errors import ConfigError
from marinesim.models.usm.thrustmap import (
    ThrustMap,
    format_number_x,
    is_moos_number,
    moos_atof,
    parse_number,
)

REF = Path(marinesim.reference.__file__).parent / "data" / "usm"  # shipped reference cases
DOC_BASE = "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5.0"
DOC_PAIRS = ((-100, -3.5), (-75, -3.2), (-10, -2), (20, 2.4), (50, 4.2), (80, 4.8), (100, 5.0))


def pairs(tm: ThrustMap) -> tuple[tuple[float, float], ...]:
    return tm.neg_pairs + tm.pos_pairs


# --------------------------------------------------------------------------- §4.2 pruning
PRUNING = [
    # (value, documented result, program result)
    (
        "-120:-5, -100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5.0, 120:6",
        DOC_PAIRS,
        (),
    ),
    (
        "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 90:4, 100:5.0",
        DOC_PAIRS,
        DOC_PAIRS[:-1],
    ),
    ("-100:-3.5, -75:-3.2, -10:-2, 0:0, 20:2.4, 50:4.2, 80:4.8, 100:5.0", DOC_PAIRS, DOC_PAIRS),
    (
        "-100:-3.5, -75:-3.2, -10:-2, 0:1, 20:2.4, 50:4.2, 80:4.8, 100:5.0",
        DOC_PAIRS,
        DOC_PAIRS[:3],
    ),
]


@pytest.mark.parametrize(("text", "doc", "moos"), PRUNING)
def test_documentation_pruning_examples_both_modes(text, doc, moos) -> None:
    tm_doc, w_doc = ThrustMap.parse(text, "doc", file="m.moos", line=3)
    tm_moos, w_moos = ThrustMap.parse(text, "moos", file="m.moos", line=3)
    assert pairs(tm_doc) == doc
    assert pairs(tm_moos) == moos
    if doc != moos:
        # the invalid pair is named identically in both modes, with what each mode drops
        assert w_doc and w_moos
        assert str(w_doc[0]) == str(w_moos[0])
        assert str(w_doc[0]).startswith("m.moos:3: thrust_map: pair ")
        assert 'compat="moos" also drops' in str(w_doc[0])
    else:
        assert w_doc == [] and w_moos == []  # 0:0 is silently accepted


def test_pruning_warning_text_names_pair_and_dropped_items() -> None:
    _, w = ThrustMap.parse(PRUNING[1][0], "moos", file="mission.moos", line=14)
    assert str(w[0]) == (
        "mission.moos:14: thrust_map: pair '90:4' is not monotonic after '80:4.8'; documented "
        "mode drops this pair only, compat=\"moos\" also drops '100:5.0'"
    )


def test_first_example_empty_map_uses_factor_rule_in_moos() -> None:
    tm, _ = ThrustMap.parse(PRUNING[0][0], "moos")
    assert tm.using_thrust_factor
    assert tm.speed([50.0, 120.0, -40.0]).tolist() == [2.5, 6.0, 0.0]


def test_malformed_item_doc_error_moos_truncates() -> None:
    with pytest.raises(ConfigError) as exc:
        ThrustMap.parse("20:2, 40-3, 60:4", "doc", file="m.moos", line=7)
    msg = str(exc.value)
    assert msg.startswith("m.moos:7: thrust_map:") and "'40-3'" in msg
    tm, w = ThrustMap.parse("20:2, 40-3, 60:4", "moos", file="m.moos", line=7)
    assert pairs(tm) == ((20.0, 2.0),)
    assert "'60:4'" in str(w[0])


def test_exponent_item_doc_accepts_moos_stops() -> None:
    tm, w = ThrustMap.parse("20:2e0, 40:3", "doc")
    assert pairs(tm) == ((20.0, 2.0), (40.0, 3.0)) and w == []
    tm, w = ThrustMap.parse("20:2e0, 40:3", "moos")
    assert pairs(tm) == () and "exponent" in str(w[0])


def test_empty_value_adds_nothing() -> None:
    tm, w = ThrustMap.parse("  ", "moos")
    assert pairs(tm) == () and w == []


# --------------------------------------------------------------------------- §4.1 add_pair
def test_add_pair_rules() -> None:
    tm = ThrustMap()
    assert not tm.add_pair(101, 5)
    assert not tm.add_pair(-101, -5)
    assert not tm.add_pair(20, -1)
    assert not tm.add_pair(-20, 1)
    assert not tm.add_pair(0, 1)
    assert tm.add_pair(0, 0) and pairs(tm) == ()
    assert tm.add_pair(50, 2) and tm.add_pair(60, 2)  # plateau allowed
    assert not tm.add_pair(70, 1.5)  # non-monotonic
    assert tm.add_pair(50, 1.0)  # duplicate thrust overwritten
    assert pairs(tm) == ((50.0, 1.0), (60.0, 2.0))


def test_frozen_map_refuses_changes_copy_does_not() -> None:
    tm = ThrustMap(pairs=[(20, 1)]).freeze()
    with pytest.raises(AttributeError):
        tm.add_pair(40, 2)
    c = tm.copy()
    assert c.add_pair(40, 2) and c != tm


def test_negative_factor_ignored() -> None:
    tm = ThrustMap(thrust_factor=-3)
    assert tm.thrust_factor == 20.0
    tm.set_thrust_factor(5)
    tm.set_thrust_factor(-1)
    assert tm.thrust_factor == 5.0


# --------------------------------------------------------------------------- §4.3 forward
def test_forward_lookup_rules() -> None:
    tm, _ = ThrustMap.parse("20:2.4, 50:4.2, 80:4.8", "doc")
    s = tm.speed([0.0, 10.0, 20.0, 65.0, 90.0, 100.0, 130.0, -50.0])
    np.testing.assert_allclose(s, [0.0, 1.2, 2.4, 4.5, 4.8, 4.8, 4.8, 0.0], rtol=0, atol=1e-12)
    tm.set_reflect(True)
    assert tm.speed(-65.0) == pytest.approx(-4.5, abs=1e-12)
    tm.add_pair(-50, -1)  # reflect only applies without negative pairs
    assert tm.speed(-25.0) == pytest.approx(-0.5, abs=1e-12)
    assert tm.speed(-150.0) == -1.0


def test_forward_lookup_keeps_shape() -> None:
    tm = ThrustMap()
    out = tm.speed(np.full((2, 3), 40.0))
    assert out.shape == (2, 3) and np.all(out == 2.0)


# --------------------------------------------------------------------------- §4.4 inverse
def test_inverse_examples_both_modes() -> None:
    tm, _ = ThrustMap.parse("30:2, 60:2, 90:3", "moos")
    assert tm.thrust(2.0, "moos") == pytest.approx(30.0, abs=1e-9)
    assert tm.thrust(2.0, "doc") == 30.0
    tm, _ = ThrustMap.parse("-80:-3, -50:-2, -20:-2, 30:2", "moos")
    assert tm.thrust(-2.0, "moos") == pytest.approx(-49.999999999999993, abs=1e-12)
    assert tm.thrust(-2.0, "doc") == -20.0
    tm, _ = ThrustMap.parse("-75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8", "moos")
    assert tm.thrust([4.8, 5.0, -3.2, -4.0], "moos").tolist() == [100.0, 100.0, -100.0, -100.0]
    assert tm.thrust([4.8, 5.0, -3.2, -4.0], "doc").tolist() == [80.0, 80.0, -75.0, -75.0]
    # elsewhere the rules agree
    np.testing.assert_allclose(tm.thrust([3.3, -2.6], "doc"), tm.thrust([3.3, -2.6], "moos"))
    assert tm.plateau_differs([4.8, 3.3]).tolist() == [True, False]


def test_inverse_factor_and_reflect() -> None:
    tm = ThrustMap(thrust_factor=20)
    assert tm.thrust([0.5, 7.0, -1.0], "moos").tolist() == [10.0, 140.0, 0.0]
    tm.set_reflect(True)
    assert tm.thrust(-1.0, "moos") == -20.0
    assert ThrustMap(thrust_factor=0).thrust(1.0) == 0.0


def test_bad_compat_is_config_error() -> None:
    with pytest.raises(ConfigError):
        ThrustMap().thrust(1.0, "program")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- reports
def test_report_strings() -> None:
    tm, _ = ThrustMap.parse(DOC_BASE, "doc")
    assert tm.map_pos() == "20,2.4, 50,4.2, 80,4.8, 100,5"
    assert tm.map_neg() == "-100:-3.5, -75:-3.2, -10:-2"
    tm.set_reflect(True)
    assert tm.map_neg() == "Positive thrust-map reflected"


def test_number_helpers() -> None:
    assert is_moos_number("--5") and moos_atof("--5") == 0.0
    assert is_moos_number("+.5") and not is_moos_number("1e-3") and not is_moos_number("5-")
    assert not is_moos_number(".") and not is_moos_number("+")
    assert moos_atof("12abc") == 12.0
    assert parse_number("1e-3", "doc") == 0.001 and parse_number("1e-3", "moos") is None
    assert parse_number("nan", "doc") is None and parse_number("1e999", "doc") is None
    assert format_number_x(5.0) == "5" and format_number_x(-0.00001) == "0"


# --------------------------------------------------------------------------- properties
pair_st = st.tuples(
    st.floats(-150, 150, allow_nan=False).map(lambda v: round(v, 1)),
    st.floats(-8, 8, allow_nan=False).map(lambda v: round(v, 2)),
)


def _random_map(items: list[tuple[float, float]], reflect: bool) -> ThrustMap:
    tm = ThrustMap(thrust_factor=20, reflect=reflect)
    for t, s in items:
        tm.add_pair(t, s)
    return tm


@settings(max_examples=60, deadline=None)
@given(st.lists(pair_st, max_size=12), st.booleans())
def test_add_pair_never_leaves_non_monotone_map(items, reflect) -> None:
    tm = _random_map(items, reflect)
    for side in (tm.pos_pairs, tm.neg_pairs):
        speeds = [s for _, s in side]
        assert speeds == sorted(speeds)
    assert all(t > 0 and s >= 0 for t, s in tm.pos_pairs)
    assert all(t < 0 and s <= 0 for t, s in tm.neg_pairs)


@settings(max_examples=60, deadline=None)
@given(st.lists(pair_st, max_size=12), st.booleans())
def test_forward_monotone_per_side_and_saturates(items, reflect) -> None:
    tm = _random_map(items, reflect)
    pos = np.linspace(0.0, 130.0, 261)
    neg = np.linspace(-130.0, 0.0, 261)
    sp, sn = tm.speed(pos), tm.speed(neg)
    assert np.all(np.diff(sp) >= -1e-12)
    assert np.all(np.diff(sn) >= -1e-12)
    if tm.pos_pairs:
        top = tm.pos_pairs[-1][1]
        assert np.all(tm.speed([100.0, 120.0, 1e6]) == top)
    else:
        np.testing.assert_allclose(sp, pos / 20.0, rtol=0, atol=1e-12)  # unclipped factor rule
    if tm.neg_pairs:
        low = tm.neg_pairs[0][1]
        assert np.all(tm.speed([-100.0, -120.0]) == low)


@settings(max_examples=40, deadline=None)
@given(st.lists(pair_st, max_size=10), st.floats(-6, 6, allow_nan=False))
def test_inverse_roundtrip_within_map(items, speed) -> None:
    tm = _random_map(items, False)
    for compat in ("doc", "moos"):
        t = float(tm.thrust(speed, compat))
        if tm.pos_pairs and 0 < speed < tm.pos_pairs[-1][1] - 1e-9:
            assert tm.speed(t) == pytest.approx(speed, abs=1e-9)
        if tm.neg_pairs and tm.neg_pairs[0][1] + 1e-9 < speed < 0:
            assert tm.speed(t) == pytest.approx(speed, abs=1e-9)


# --------------------------------------------------------------------------- reference table
def test_reference_thrustmap_lookup_table() -> None:
    scen = json.loads((REF / "thrustmap_lookup.scenario.json").read_text())
    maps = {}
    for m in scen["maps"]:
        tm, _ = ThrustMap.parse(
            m["thrust_map"], "moos", thrust_factor=m["thrust_factor"], reflect=m["thrust_reflect"]
        )
        maps[m["map_id"]] = tm
    worst = 0.0
    n = 0
    with gzip.open(REF / "thrustmap_lookup.expected.csv.gz", "rt") as fh:
        for row in csv.DictReader(fh):
            tm = maps[row["map_id"]]
            x = float(row["input"])
            if row["lookup"] == "speed_of_thrust":
                got = float(tm.speed(x))
            else:
                got = float(tm.thrust(x, "moos"))
            worst = max(worst, abs(got - float(row["output"])))
            n += 1
    assert n > 3000
    assert worst <= 1e-9
