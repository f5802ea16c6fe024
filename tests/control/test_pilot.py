"""Pilot stick → climb rate (SURFTRAK spec §5.1) and pilot scripts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.control.pilot import (
    PilotScript,
    PilotStick,
    climb_to_stick,
    parse_pilot_script,
    pilot_climb_rate,
)
from marinesim.core.errors import ConfigError


def test_dead_band_and_scaling():
    p = PilotStick()  # THR_DZ 100 × gain 0.5 → band 450…550
    assert p.band == (450.0, 550.0)
    assert pilot_climb_rate(500.0, p) == 0.0
    assert pilot_climb_rate(550.0, p) == 0.0 and pilot_climb_rate(450.0, p) == 0.0
    assert pilot_climb_rate(1000.0, p) == pytest.approx(500.0)
    assert pilot_climb_rate(0.0, p) == pytest.approx(-500.0)  # PILOT_SPEED_DN 0 → up speed
    q = PilotStick(speed_up=500.0, speed_dn=200.0)
    assert pilot_climb_rate(0.0, q) == pytest.approx(-200.0)
    assert PilotStick(thr_dz=1000.0, gain=1.0).band == (100.0, 900.0)  # clamped to 400


@given(climb=st.integers(-500, 500))
def test_climb_to_stick_roundtrip_within_one_stick_count(climb):
    p = PilotStick()
    s = climb_to_stick(float(climb), p)
    assert s == int(s)
    back = pilot_climb_rate(s, p)
    assert abs(back - climb) <= 500.0 / 450.0 + 1e-9  # one stick count


def test_script_sampling_and_parse_errors(tmp_path):
    text = "# demo\n2.0 climb 200\n10, climb, 0\n12 throttle 300\n"
    s = parse_pilot_script(text)
    np.testing.assert_array_equal(
        s.sample(np.array([0.0, 2.0, 9.99, 10.0, 12.5])), [500, 730, 730, 500, 300]
    )
    for bad, line in [
        ("1 climb x\n", 1),
        ("\n1 jump 3\n", 2),
        ("2 climb 1\n1 climb 0\n", 2),
        ("1 throttle 2000\n", 1),
    ]:
        with pytest.raises(ConfigError) as exc:
            parse_pilot_script(bad, file="p.txt")
        assert exc.value.file == "p.txt" and exc.value.line == line
    assert PilotScript().sample(np.array([1.0]))[0] == 500.0
