"""SURFTRAK mode logic, messages and scripting interface (SURFTRAK spec §4, §6, §7)."""

from __future__ import annotations

import pytest

from marinesim.control.surftrak import ALT_HOLD, SURFTRAK, ArduSubVertical, SurftrakParams
from marinesim.core.errors import ConfigError
from marinesim.core.params import validate


def _sub(z_cm=-1000.0, **kw):
    return ArduSubVertical(
        SurftrakParams(RNGFND1_MAX_CM=5000.0, RNGFND1_MIN_CM=50.0, **kw), z_cm, 0.0, 0.0, 0.48
    )


def _make_healthy(ap, dist=800.0, sq=100.0):
    for k in range(3):
        ap.now_us = k * 50_000.0
        ap.handle_distance_sensor(True, dist, 50.0, 5000.0, sq)
        ap.rangefinder_cycle()


def test_entry_messages():
    ap = _sub()
    assert ap.set_mode(SURFTRAK)
    assert [m.text for m in ap.messages] == ["waiting for a rangefinder reading"]
    ap = _sub(z_cm=-30.0)
    _make_healthy(ap)
    ap.set_mode(SURFTRAK)
    assert ap.messages[-1].text == "descend below -0.500000 meters to hold range"
    assert ap.messages[-1].severity == "WARNING"
    ap = _sub()
    ap.depth_sensor = "missing"
    assert not ap.set_mode(SURFTRAK) and ap.mode == ALT_HOLD
    assert ap.messages[-1].text == "Depth sensor is not connected."
    ap.depth_sensor = "failed"
    ap.set_mode(SURFTRAK)
    assert ap.messages[-1].text == "Depth sensor error."


def test_set_target_checks_in_order_and_terrain_offset():
    ap = _sub()
    assert not ap.set_rangefinder_target_cm(500.0)
    assert ap.messages[-1].text == "wrong mode, rangefinder target not set"
    _make_healthy(ap)
    ap.set_mode(SURFTRAK)
    assert not ap.set_rangefinder_target_cm(30.0)
    assert ap.messages[-1].text == "rangefinder target below minimum, ignored"
    assert not ap.set_rangefinder_target_cm(6000.0)
    assert ap.messages[-1].text == "rangefinder target above maximum, ignored"
    assert ap.get_rangefinder_target_cm() == -1.0
    total = ap.zctl.pos_target
    assert ap.set_rangefinder_target_cm(886.0)
    assert ap.messages[-1].text == "rangefinder target is 8.86 meters"
    assert ap.messages[-1].severity == "INFO"
    assert ap.zctl.off == -1000.0 - 886.0 and ap.zctl.pos_target == total
    ap.z = -50.0  # at the ceiling
    assert not ap.set_rangefinder_target_cm(886.0)
    assert ap.messages[-1].text == "descend below -0.500000 meters to set rangefinder target"
    assert ap.get_rangefinder_target_cm() == -1.0 and ap.zctl.off == 0.0


def test_first_target_is_filtered_reading_and_ceiling_caps_offset():
    ap = _sub(z_cm=-1000.0, SURFTRAK_DEPTH=-100.0)
    _make_healthy(ap, dist=800.0)
    ap.set_mode(SURFTRAK)
    ap.run(500.0, -1000.0, 0.0, 0.0)
    assert ap.get_rangefinder_target_cm() == 800.0
    # the seafloor rises by 8.5 m: desired z = -950 + 800 > -100 → the offset is capped
    ap.health.terrain_offset_cm = -150.0
    ap.run(500.0, -1000.0, 0.0, 0.0)
    assert ap.zctl.off_target == pytest.approx(-100.0 - 800.0)


def test_params_validation_and_kpv():
    p = SurftrakParams(PSC_JERK_Z=8.0, PILOT_ACCEL_Z=500.0)
    assert p.kpv == pytest.approx(0.8)
    with pytest.raises(ConfigError, match="not supported yet"):
        validate(SurftrakParams, {"PSC_VELZ_I": 0.5})
    with pytest.raises(ConfigError, match="did you mean 'SURFTRAK_DEPTH'"):
        validate(SurftrakParams, {"SURFTRAK_DEPHT": -50})


def test_params_accept_master_names_with_units():
    """Both the Sub 4.5 and the current (master) names are accepted (spec §9), e.g. in a
    scenario's ``ardusub:`` block, with master's units converted to 4.5's."""
    with pytest.warns(FutureWarning, match="PSC_JERK_D is ArduSub's current"):
        p = validate(
            SurftrakParams,
            {"PSC_JERK_D": 8.0, "RNGFND1_MAX": 50.0, "RNGFND1_MIN": 0.5, "PSC_D_ACC_P": 0.05,
             "PSC_D_ACC_IMAX": 0.1, "PILOT_ACCEL_Z": 500.0},
        )  # fmt: skip
    assert p.PSC_JERK_Z == 8.0 and p.RNGFND1_MAX_CM == 5000.0 and p.RNGFND1_MIN_CM == 50.0
    assert p.PSC_ACCZ_P == pytest.approx(0.5) and p.PSC_ACCZ_IMAX == pytest.approx(100.0)
    assert p.kpv == pytest.approx(0.8)
    with pytest.raises(ConfigError, match="same parameter"):
        validate(SurftrakParams, {"PSC_JERK_D": 8.0, "PSC_JERK_Z": 5.0})


def test_reset_and_retarget_keep_the_total_position_target():
    ap = _sub()
    _make_healthy(ap)
    ap.set_mode(SURFTRAK)
    ap.run(500.0, -1000.0, 0.0, 0.0)  # first target from the filtered reading
    for _ in range(200):
        ap.run(500.0, -1000.0, 0.0, 0.0)
    before = ap.zctl.pos_target
    ap._reset(True)
    assert ap.zctl.off == 0.0 and abs(ap.zctl.pos_target - before) < 0.1  # < 1 mm
    assert ap.set_rangefinder_target_cm(700.0)
    assert abs(ap.zctl.pos_target - before) < 0.1 and ap.zctl.off == -1000.0 - 700.0


def test_script_buttons_and_example_behaviours():
    from marinesim.control.pilot import PilotScript
    from marinesim.control.surftrak import ButtonTargets, KeepTarget
    from marinesim.interop.surftrak_runner import run_surftrak, sitl_params

    ap = _sub()
    ap.set_button(2, True)
    ap.set_button(2, True)  # held: one press
    ap.set_button(2, False)
    ap.set_button(2, True)
    assert ap.is_button_pressed(2) and ap.get_and_clear_button_count(2) == 2
    assert ap.get_and_clear_button_count(2) == 0
    with pytest.raises(ValueError):
        ap.set_button(5, True)
    # surftrak_buttons: button 1 sets 600 cm, button 2 adds 50 cm
    buttons = ButtonTargets(set_cm=600.0, step_cm=50.0)
    events = [(3.0, lambda a: a.set_button(1, True)), (3.5, lambda a: a.set_button(1, False)),
              (5.0, lambda a: a.set_button(2, True))]  # fmt: skip
    res = run_surftrak("zeros", duration=6.0, seed=1, events=events, scripts=[buttons])
    texts = res.texts()
    assert (
        "rangefinder target is 6.00 meters" in texts
        and texts[-1] == "rangefinder target is 6.50 meters"
    )
    # surftrak2: a pilot override is undone, the desired target re-applied
    p = sitl_params()
    pilot = PilotScript.from_steps([(3.0, "climb", 50.0), (5.0, "climb", 0.0)], p.stick())
    res = run_surftrak("zeros", duration=8.0, seed=1, pilot=pilot, scripts=[KeepTarget()])
    targets = [t for t in res.texts() if t.startswith("rangefinder target is")]
    assert len(targets) == 3 and targets[0] == targets[2] != targets[1]
