"""Thrust maps of any length: checked pair by pair against the neighbours only."""

from __future__ import annotations

from marinesim.models.usm.thrustmap import ThrustMap, parse_number


def test_long_map_is_read_and_equals_the_pairwise_result():
    pairs = [(i / 1000.0, i / 10000.0) for i in range(1, 20001)]
    text = ", ".join(f"{t}:{s}" for t, s in pairs)
    tm, warns = ThrustMap.parse(text, "doc")
    assert warns == [] and tm.pos_pairs == tuple(pairs)


def test_rejections_match_the_rules_in_both_orders():
    tm = ThrustMap()
    assert tm.add_pair(50, 2.0) and tm.add_pair(20, 1.0) and tm.add_pair(80, 3.0)
    assert tm.reject_reason(30, 2.5) == "not monotonic before '50:2'"
    assert tm.reject_reason(60, 1.5) == "not monotonic after '50:2'"
    assert tm.reject_reason(50, 3.5) == "not monotonic before '80:3'"  # replaces 50:2
    assert tm.reject_reason(50, 1.5) is None
    assert tm.pos_pairs == ((20.0, 1.0), (50.0, 2.0), (80.0, 3.0))


def test_many_bad_pairs_give_short_warnings():
    text = ", ".join(f"{i}:-1" for i in range(1, 3001))
    tm, warns = ThrustMap.parse(text, "doc")
    assert len(warns) == 3000 and tm.pos_pairs == ()
    assert "and 2994 more" in str(warns[0]) and len(str(warns[0])) < 400


def test_overflowing_digits_are_not_numbers():
    assert parse_number("9" * 400, "moos") is None
    assert parse_number("9" * 400, "doc") is None
    assert parse_number("9" * 30000 + "x", "doc") is None
