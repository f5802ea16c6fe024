"""The pilot's throttle through ArduSub's RC channel (dead zone, mid-stick) into a climb rate."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.control.surftrak import ArduSubVertical, SurftrakParams


def _ap(**kw: float) -> ArduSubVertical:
    p = SurftrakParams(PILOT_SPEED_UP=200.0, THR_DZ=100.0, JS_GAIN_DEFAULT=0.5, **kw)
    return ArduSubVertical(p, 0.0, 0.0, 0.0, 0.5)


def test_control_in_has_the_channel_dead_zone_and_integer_steps():
    ap = _ap()
    # pwm_to_range_dz: trunc(1000·(pwm − 1130)/770) with RC3_DZ 30
    assert ap.control_in_from_pwm(1500) == 480.0
    assert ap.control_in_from_pwm(1400) == 350.0
    assert ap.control_in_from_pwm(1580) == 584.0
    assert ap.control_in_from_pwm(1130) == 0.0 and ap.control_in_from_pwm(1000) == 0.0
    assert ap.control_in_from_pwm(2000) == 1000.0
    v = ap.control_in_from_pwm(np.array([1400.0, 1500.0]))
    assert v.tolist() == [350.0, 480.0]
    assert _ap(RC3_DZ=0).control_in_from_pwm(1500) == 500.0


def test_climb_rate_matches_the_recorded_firmware():
    """Session c of the ArduSub SITL recordings: joystick z = 250 (1400 µs) gave a desired
    climb rate (CTUN.DCRt) of −37…−38 cm/s, not the −33 of a dead band centred on 500; the
    z = 700 climb (1580 µs) gives 23 cm/s; the centred stick (1500 µs) nothing."""
    ap = _ap()
    assert ap.climb_from_pwm(1400) == pytest.approx(200 * (350 - 430) / 430)  # −37.2
    assert -38.5 < ap.climb_from_pwm(1400) < -37.0
    assert ap.climb_from_pwm(1580) == pytest.approx(200 * (584 - 530) / 470)
    assert ap.climb_from_pwm(1500) == 0.0
    # the dead band is THR_DZ × gain = 50 around the mid-stick 480: 430…530
    assert ap.climb_from_pwm(1130 + 0.77 * 431) == 0.0
    assert ap.climb_from_pwm(1130 + 0.77 * 429) < 0.0
    assert ap.climb_from_pwm(1900) == pytest.approx(200.0)  # full stick: PILOT_SPEED_UP


def test_run_pwm_is_run_with_the_firmware_pilot_path():
    a, b = _ap(), _ap()
    for _ in range(40):
        ta = a.run_pwm(1400.0, 0.0, 0.0, 0.0)
        tb = b.run_climb(b.climb_from_pwm(1400.0), 0.0, 0.0, 0.0)
        assert ta == tb
    assert a.zctl.pos_target < 0.0  # it descends


def test_bad_channel_limits_are_rejected():
    with pytest.raises(ValueError, match="RC3_MIN"):
        SurftrakParams(RC3_MIN=1100, RC3_MAX=1120, RC3_DZ=30)
