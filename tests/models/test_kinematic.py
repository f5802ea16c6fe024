"""uSimMarine model (spec usimmarine.md §2, §3, §6, §7, §14): dynamics and mail."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.models import usm as km
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.thrustmap import ThrustMap


def cfg(**kw: object) -> UsmConfig:
    kw.setdefault("compat", "moos")
    kw.setdefault("prefix", "NAV")
    return UsmConfig(**kw)  # type: ignore[arg-type]


def mail(
    c: UsmConfig, st: km.UsmState, var: str, value: object, t: float = 0.0, **kw: object
) -> km.UsmState:
    st, _posts, _warns = km.apply_mail(c, st, var, value, moos_time=t, **kw)  # type: ignore[arg-type]
    return st


def run(
    c: UsmConfig, st: km.UsmState, k: int, dt: float = 0.1, t0: float | None = None
) -> tuple[km.UsmState, list[dict]]:
    pubs = []
    t = float(st.moos_time[0]) if t0 is None else t0
    for _ in range(k):
        t += dt
        st, p = km.iterate(c, st, t)
        pubs.append(p)
    return st, pubs


# ---------------------------------------------------------------------------- speed (§3.1)


def test_speed_halves_the_error_every_iteration() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
    speeds = []
    for k in range(1, 4):
        st, _ = km.iterate(c, st, 0.1 * k)
        speeds.append(float(st.speed[0]))
    assert speeds == pytest.approx([1.25, 1.875, 2.1875], abs=1e-12)


def test_active_acceleration_limit_gives_half_the_rate() -> None:
    c = cfg(max_acceleration=1.0)
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 100.0)
    st, _ = km.iterate(c, st, 0.1)
    # v* = min(5, 0 + a·dt) = 0.1, averaged with 0: v + a·dt/2
    assert float(st.speed[0]) == pytest.approx(0.05, abs=1e-12)
    st, _ = km.iterate(c, st, 0.2)
    assert float(st.speed[0]) == pytest.approx(0.05 + 0.05, abs=1e-12)


def test_deceleration_limit_uses_signed_speed() -> None:
    c = cfg(max_deceleration=0.5, start_speed=3.0, thrust_map=ThrustMap(20, True))
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", -60.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.speed[0]) == pytest.approx(3.0 - 0.5 * 0.1 / 2, abs=1e-12)


def test_zero_dt_keeps_speed_but_updates_pitch() -> None:
    c = cfg(start_speed=1.5, buoyancy_rate=0.0, max_depth_rate=1.0)
    st = km.init(c, 1, moos_time=5.0)
    st = mail(c, st, "DESIRED_THRUST", 100.0)
    st = mail(c, st, "DESIRED_ELEVATOR", 20.0)
    st, _ = km.iterate(c, st, 5.0)  # dt = 0
    assert float(st.speed[0]) == 1.5
    assert float(st.pitch[0]) != 0.0
    r_act = 0.2 * math.sqrt(1.5 / 2.0) * 1.0
    assert float(st.pitch[0]) == pytest.approx(-math.asin(r_act / 1.5), abs=1e-15)
    assert float(st.x[0]) == 0.0 and float(st.y[0]) == 0.0


def test_thrust_is_not_clipped_for_the_factor_rule() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 120.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.speed[0]) == pytest.approx(3.0)  # (6 + 0) / 2


# -------------------------------------------------------------------------- heading (§3.2)


@pytest.mark.parametrize(("thrust", "dh"), [(100.0, 14.0), (50.0, 7.0), (25.0, 3.5), (-50.0, -7.0)])
def test_heading_factor_is_thrust_over_50(thrust: float, dh: float) -> None:
    c = cfg(thrust_map=ThrustMap(20, True), turn_loss=0.0, start_speed=1.0)
    st = km.init(c, 1)
    st = mail(c, st, "DESIRED_THRUST", thrust)
    st = mail(c, st, "DESIRED_RUDDER", 100.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.heading[0]) == pytest.approx(dh % 360.0, abs=1e-9)


def test_no_turn_at_zero_speed_but_rotate_speed_acts() -> None:
    c = cfg(rotate_speed=10.0)
    st = mail(c, km.init(c, 1), "DESIRED_RUDDER", 100.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.speed[0]) == 0.0
    assert float(st.heading[0]) == pytest.approx(1.0, abs=1e-12)


def test_differential_turns_36_deg_per_s_ignoring_turn_rate() -> None:
    c = cfg(turn_rate=5.0)
    st = km.init(c, 1)
    st = mail(c, st, "THRUST_MODE_DIFFERENTIAL", "true")
    st = mail(c, st, "DESIRED_THRUST_L", 100.0)
    st = mail(c, st, "DESIRED_THRUST_R", -150.0)  # clipped to -100
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.thrust_r[0]) == -100.0
    assert float(st.heading[0]) == pytest.approx(3.6, abs=1e-12)
    # thrust and rudder mail is ignored while the app's differential flag is set
    st = mail(c, st, "DESIRED_RUDDER", 50.0)
    assert float(st.rudder[0]) == 0.0


def test_yaw_follows_heading() -> None:
    c = cfg(start_heading=350.0, rotate_speed=-20.0)
    st, _ = run(c, km.init(c, 1), 1)
    h = float(st.heading[0])
    assert h == pytest.approx(348.0)
    assert float(st.yaw[0]) == pytest.approx(-math.radians(h - 360.0))


# ---------------------------------------------------------------------- depth (§3.4, §3.6)


def test_pitch_sawtooth_resets_every_nine_steps() -> None:
    c = cfg(
        start_speed=1.5,
        buoyancy_rate=0.0,
        max_depth_rate=1.0,
        max_depth_rate_speed=2.0,
        start_depth=50.0,
    )
    st = km.init(c, 1)
    st = mail(c, st, "DESIRED_THRUST", 30.0)  # 1.5 m/s with factor 20
    st = mail(c, st, "DESIRED_ELEVATOR", 20.0)
    pitches = []
    for k in range(1, 20):
        st, _ = km.iterate(c, st, 0.1 * k)
        pitches.append(float(st.pitch[0]))
    zero_at = [i + 1 for i, p in enumerate(pitches) if p == 0.0]
    assert zero_at == [9, 18]
    r_act = 0.2 * math.sqrt(0.75)
    assert -math.sin(pitches[1]) * 1.5 == pytest.approx(2 * r_act, abs=1e-12)


def test_surface_clamp_keeps_pitch() -> None:
    c = cfg(start_speed=1.0, buoyancy_rate=0.0)
    st = km.init(c, 1)
    st = mail(c, st, "DESIRED_THRUST", 20.0)
    st = mail(c, st, "DESIRED_ELEVATOR", -100.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.depth[0]) == 0.0
    assert float(st.pitch[0]) > 0.0


def test_only_buoyancy_acts_at_zero_speed() -> None:
    c = cfg(start_depth=10.0, buoyancy_rate=0.05)
    st = mail(c, km.init(c, 1), "DESIRED_ELEVATOR", 100.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.depth[0]) == pytest.approx(10.0 - 0.005, abs=1e-12)
    assert float(st.pitch[0]) == 0.0


def test_altitude_stays_stale_after_water_depth_zero() -> None:
    c = cfg(default_water_depth=30.0, start_depth=5.0, buoyancy_rate=0.0)
    st, pubs = run(c, km.init(c, 1), 1)
    assert float(st.altitude[0]) == 25.0 and "NAV_ALTITUDE" in pubs[0]
    st = mail(c, st, "WATER_DEPTH", 0.0)
    st = mail(c, st, "BUOYANCY_RATE", -1.0)
    st, pubs = run(c, st, 1)
    assert float(st.depth[0]) > 5.0
    assert float(pubs[0]["NAV_ALTITUDE"][0]) == 25.0


# ------------------------------------------------------------------------- rudder (§3.9)


def test_rudder_jump_is_capped_at_100_per_message() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_RUDDER", -100.0)
    st = mail(c, st, "DESIRED_RUDDER", 150.0)
    assert float(st.rudder[0]) == 0.0
    st = mail(c, st, "DESIRED_RUDDER", 150.0)
    assert float(st.rudder[0]) == 100.0


def test_rudder_rate_limit_per_message_and_no_slewing() -> None:
    c = cfg(max_rudder_degs_per_sec=10.0)
    st = mail(c, km.init(c, 1), "DESIRED_RUDDER", 50.0, t=1.0)
    assert float(st.rudder[0]) == pytest.approx(10.0)
    st, _ = run(c, st, 5, t0=1.0)
    assert float(st.rudder[0]) == pytest.approx(10.0)  # no new mail: no slewing
    st = mail(c, st, "DESIRED_RUDDER", 50.0, t=1.5)
    assert float(st.rudder[0]) == pytest.approx(15.0)
    st = mail(c, st, "DESIRED_RUDDER", 50.0, t=100.0)  # after a long silence: not limited
    assert float(st.rudder[0]) == pytest.approx(50.0)


# -------------------------------------------------------------------------- drift (§3.10)


def test_drift_vector_arithmetic() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DRIFT_VECTOR", "90,1")
    assert (float(st.drift_x[0]), float(st.drift_y[0])) == pytest.approx((1.0, 0.0), abs=1e-15)
    st = mail(c, st, "DRIFT_VECTOR", " 90 , -1 ")
    assert float(st.drift_x[0]) == pytest.approx(-1.0)
    st = mail(c, st, "DRIFT_VECTOR_ADD", "0,0.5")
    assert (float(st.drift_x[0]), float(st.drift_y[0])) == pytest.approx((-1.0, 0.5))
    st = mail(c, st, "DRIFT_VECTOR_MULT", 2.0)
    assert (float(st.drift_x[0]), float(st.drift_y[0])) == pytest.approx((-2.0, 1.0))
    st = mail(c, st, "DRIFT_VECTOR_MULT", -0.5)
    assert (float(st.drift_x[0]), float(st.drift_y[0])) == pytest.approx((1.0, -0.5))
    st2, _p, warns = km.apply_mail(c, st, "DRIFT_VECTOR", "1e-3,1", moos_time=0.0)
    assert warns and float(st2.drift_x[0]) == float(st.drift_x[0])
    st = mail(c, st, "DRIFT_VECTOR", "0,0")
    st = mail(c, st, "DRIFT_VECTOR_MULT", 3.0)
    assert (float(st.drift_x[0]), float(st.drift_y[0])) == (0.0, 0.0)


def test_drift_summary_format_and_freshness() -> None:
    assert km.drift_summary(0.3, -0.1) == "ang=108.43, mag=0.32, xmag=0.3, ymag=-0.1"
    assert km.drift_summary(0.0, 0.0) == "ang=0, mag=0, xmag=0, ymag=0"
    assert km.drift_summary(-0.0001, 0.0) == "ang=270, mag=0, xmag=0, ymag=0"
    c = cfg(drift_x=0.3, drift_y=-0.1)
    st, pubs = run(c, km.init(c, 1), 2)
    assert pubs[0]["USM_DRIFT_SUMMARY"][0] == "ang=108.43, mag=0.32, xmag=0.3, ymag=-0.1"
    assert pubs[0]["USM_FSUMMARY"][0] == pubs[0]["USM_DRIFT_SUMMARY"][0]
    assert "USM_DRIFT_SUMMARY" not in pubs[1]
    st = mail(c, st, "DRIFT_X", 1.0)  # scalar drift: not fresh
    st, pubs = run(c, st, 1)
    assert "USM_DRIFT_SUMMARY" not in pubs[0]
    st = mail(c, st, "DRIFT_VECTOR_ADD", "0,1")
    st, pubs = run(c, st, 1)
    assert pubs[0]["USM_DRIFT_SUMMARY"][0] == "ang=48.01, mag=1.35, xmag=1, ymag=0.9"


def test_drift_moves_position_only() -> None:
    c = cfg(drift_x=1.0)
    st, pubs = run(c, km.init(c, 1), 10)
    assert float(st.x[0]) == pytest.approx(1.0)
    assert float(st.speed[0]) == 0.0 and float(st.heading[0]) == 0.0
    assert float(st.sog[0]) == pytest.approx(1.0) and float(st.hog[0]) == 90.0


# -------------------------------------------------------------------------- pause (§3.11)


def test_pause_truncates_to_whole_seconds() -> None:
    c = cfg(start_speed=1.0, max_deceleration=0.0)
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 20.0)
    t = 0.0
    for k in range(1, 101):
        t = round(k * 0.1, 10)
        st, _ = km.iterate(c, st, t)
    y_before = float(st.y[0])
    st = mail(c, st, "USM_SIM_PAUSED", "true", t=10.1)
    for k in range(101, 153):
        st, pubs = km.iterate(c, st, round(k * 0.1, 10))
        assert float(pubs["NAV_Y"][0]) == y_before  # still published while paused
    st = mail(c, st, "USM_SIM_PAUSED", "false", t=15.4)  # 5.3 s paused → 5 s subtracted
    ts_before = float(st.ts[0])
    st, _ = km.iterate(c, st, 15.4)
    assert float(st.ts[0]) - ts_before == pytest.approx(0.4, abs=1e-9)
    assert int(st.pause_ticks[0]) == 530


def test_pause_truncation_is_cumulative() -> None:
    c = cfg()
    st = km.init(c, 1)
    st = mail(c, st, "USM_SIM_PAUSED", "TRUE", t=1.0)
    st = mail(c, st, "USM_SIM_PAUSED", "false", t=1.6)
    st, _ = km.iterate(c, st, 1.6)
    assert float(st.ts[0]) == pytest.approx(1.6)  # 0.6 s → 0 whole seconds
    st = mail(c, st, "USM_SIM_PAUSED", "true", t=2.0)
    st = mail(c, st, "USM_SIM_PAUSED", "nonsense", t=2.6)  # any other string resumes
    st, _ = km.iterate(c, st, 2.6)
    assert float(st.ts[0]) == pytest.approx(1.6)  # total 1.2 s → 1 s subtracted


# ---------------------------------------------------------------------- USM_RESET (§3.12)


@pytest.mark.parametrize(
    ("text", "expect", "complete"),
    [
        (
            "x=100, y=-50, speed=1.0, heading=270, depth=5",
            {"x": 100.0, "y": -50.0, "speed": 1.0, "heading": 270.0, "depth": 5.0},
            True,
        ),
        ("10,20,45,0,0", {"x": 10.0, "y": 20.0, "heading": 45.0, "speed": 0.0, "depth": 0.0}, True),
        ("x=5,foo=3,y=7", {"x": 5.0, "y": 9.0}, False),
        ("X = 12abc, DEG=400", {"x": 12.0, "heading": 400.0}, True),
        ("1,2,3,4,5,6", {"x": 1.0, "depth": 5.0}, False),
        ("x=1,", {"x": 1.0, "y": 0.0}, True),
        ("", {"x": 0.0, "y": 9.0}, True),
    ],
)
def test_usm_reset_forms(text: str, expect: dict[str, float], complete: bool) -> None:
    c = cfg(dual_state=True, start_y=9.0)
    st = km.init(c, 1)
    st, posts, warns = km.apply_mail(c, st, "USM_RESET", text, moos_time=0.0)
    for k, v in expect.items():
        assert float(getattr(st, k)[0]) == v
        assert float(getattr(st, "gt_" + k)[0]) == v
    assert posts[0][0] == "USM_RESET_COUNT" and float(posts[0][1][0]) == 1.0
    assert any("unknown key" in w for w in warns) != complete
    st, posts, _ = km.apply_mail(c, st, "USM_RESET", "junk", moos_time=0.0)
    assert float(posts[0][1][0]) == 2.0  # failed resets count too


def test_reset_uses_reset_values_as_prior() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "USM_RESET", "speed=2, heading=90")
    st, _ = km.iterate(c, st, 0.1)
    # v* = 0 (no thrust), decel 0.5 → 2 - 0.05, averaged with the reset speed 2
    assert float(st.speed[0]) == pytest.approx((2.0 + 1.95) / 2)
    assert float(st.x[0]) == pytest.approx((2.0 + 1.95) / 2 * 0.1)


# -------------------------------------------------------------------- publications (§7)


def test_publication_order_and_values() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1, datum=(42.358456, -71.087589)), "DESIRED_THRUST", 50.0)
    st, p = km.iterate(c, st, 0.1)
    assert list(p) == [
        "NAV_X",
        "NAV_Y",
        "NAV_LAT",
        "NAV_LONG",
        "NAV_HEADING",
        "NAV_SPEED",
        "NAV_DEPTH",
        "SIMULATION_MODE",
        "NAV_Z",
        "NAV_PITCH",
        "NAV_YAW",
        "TRUE_X",
        "TRUE_Y",
        "NAV_HEADING_OVER_GROUND",
        "NAV_SPEED_OVER_GROUND",
        "USM_FSUMMARY",
        "USM_DRIFT_SUMMARY",
    ]
    assert p["SIMULATION_MODE"][0] == "TRUE"
    assert float(p["NAV_SPEED"][0]) == 1.25
    assert float(p["NAV_LAT"][0]) == pytest.approx(42.358456 + 1.25 * 0.1 / 111_000, abs=1e-6)


def _c_snap(v: float) -> float:
    q = v / 0.01
    n = math.trunc(q - 0.5) if q < 0 else math.trunc(q + 0.5)
    return n * 0.01


@pytest.mark.parametrize("v", [0.005, -0.005, 0.015, -0.015, 0.0049999, 1.23456, -2.345, 0.0])
def test_speed_snapping_formula(v: float) -> None:
    assert float(km.snap_speed(v)) == _c_snap(v)


def test_published_speed_full_precision_in_doc_mode() -> None:
    c = cfg(compat="doc")
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 51.0)
    st, p = km.iterate(c, st, 0.1)
    assert float(p["NAV_SPEED"][0]) == float(st.speed[0]) == pytest.approx(1.275)


def test_reverse_mode_changes_published_copy_only() -> None:
    c = cfg(start_heading=10.0)
    st = mail(c, km.init(c, 1), "THRUST_MODE_REVERSE", "true")
    st, p = km.iterate(c, st, 0.1)
    assert float(st.heading[0]) == 10.0
    assert float(p["NAV_HEADING"][0]) == 190.0
    assert float(p["NAV_YAW"][0]) == pytest.approx(float(st.yaw[0]) + 3.1415926)
    st = mail(c, st, "THRUST_MODE_REVERSE", "yes")  # anything but "true" → normal
    st, p = km.iterate(c, st, 0.2)
    assert float(p["NAV_HEADING"][0]) == 10.0


def test_reverse_mode_negates_thrust() -> None:
    c = cfg(thrust_map=ThrustMap(20, True), max_deceleration=0.0)
    st = mail(c, km.init(c, 1), "THRUST_MODE_REVERSE", "true")
    st = mail(c, st, "DESIRED_THRUST", 50.0)
    st, _ = km.iterate(c, st, 0.1)
    assert float(st.speed[0]) == pytest.approx(-1.25)


def test_dual_state_true_xy_hold_ground_truth() -> None:
    c = cfg(dual_state=True, drift_x=1.0)
    st, pubs = run(c, mail(c, km.init(c, 1), "DESIRED_THRUST", 20.0), 3)
    p = pubs[-1]
    assert float(st.x[0]) == pytest.approx(0.0)  # NAV without drift
    assert float(st.gt_x[0]) == pytest.approx(0.3)
    assert float(p["TRUE_X"][0]) == float(st.gt_x[0]) == float(p["NAV_GT_X"][0])
    assert float(p["NAV_X"][0]) == float(st.x[0])


def test_disabled_propagates_but_publishes_nothing() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
    st = mail(c, st, "USM_ENABLED", "false")
    st, pubs = run(c, st, 3)
    assert pubs == [{}, {}, {}]
    assert float(st.y[0]) > 0.0
    st = mail(c, st, "USM_ENABLED", "TRUE")
    st, pubs = run(c, st, 1)
    assert "NAV_X" in pubs[0] and "USM_DRIFT_SUMMARY" in pubs[0]


@pytest.mark.parametrize(("value", "frozen"), [(1.0, True), ("anything", True), (0.0, False)])
def test_obstacle_hit_freezes_for_good(value: object, frozen: bool) -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
    st, _ = run(c, st, 1)
    y = float(st.y[0])
    st = mail(c, st, "OBSTACLE_HIT", value)
    st = mail(c, st, "OBSTACLE_HIT", 0.0)
    st, pubs = run(c, st, 3)
    if frozen:
        assert float(st.y[0]) == y and pubs == [{}, {}, {}]
    else:
        assert float(st.y[0]) > y and "NAV_Y" in pubs[0]


def test_buoyancy_and_trim_handshake() -> None:
    c = cfg(buoyancy_rate=0.1)
    st = km.init(c, 1)
    st, posts, _ = km.apply_mail(c, st, "BUOYANCY_CONTROL", "TRUE", moos_time=1.0)
    assert posts == [("BUOYANCY_REPORT", "status=1,error=0,progressing,buoyancy=0.0")]
    assert float(st.buoyancy_rate[0]) == 0.0
    st, posts, _ = km.apply_mail(c, st, "TRIM_CONTROL", "true", moos_time=1.0)
    reports = []
    for k in range(2, 13):
        st, p = km.iterate(c, st, float(k))
        reports.append((k, p.get("BUOYANCY_REPORT", [None])[0], p.get("TRIM_REPORT", [None])[0]))
    assert reports[4] == (
        6,
        "status=2,error=0,completed,buoyancy=0.0",
        "status=2,error=0,completed,trim_pitch=0.00000,trim_roll=0.0",
    )
    assert all(b is None and t is None for k, b, t in reports if k != 6)


# --------------------------------------------------------------------------- mail typing


def test_mail_typing_and_rejections() -> None:
    c = cfg()
    st = km.init(c, 1)
    st, _p, w = km.apply_mail(c, st, "DESIRED_THRUST", "50", moos_time=0.0)
    assert float(st.thrust[0]) == -1.0 and "string message" in w[0]
    st, _p, w = km.apply_mail(c, st, "DESIRED_THRUST", float("nan"), moos_time=0.0)
    assert float(st.thrust[0]) == -1.0 and "non-finite" in w[0]
    st, _p, w = km.apply_mail(c, st, "USM_FORCE_X", 1.0, moos_time=0.0)
    assert float(st.drift_x[0]) == 0.0 and "dead alias" in w[0]
    st, _p, w = km.apply_mail(c, st, "USM_BUOYANCY_RATE", 1.0, moos_time=0.0)
    assert float(st.buoyancy_rate[0]) == 0.025 and w
    d = cfg(compat="doc")
    sd, _p, w = km.apply_mail(d, km.init(d, 1), "USM_WATER_DEPTH", 40.0, moos_time=0.0)
    assert float(sd.water_depth[0]) == 40.0 and w
    sd, _p, w = km.apply_mail(d, sd, "USM_WATER_DEPTH", 41.0, moos_time=0.0)
    assert float(sd.water_depth[0]) == 41.0 and not w  # warned once per variable


def test_rows_select_vehicles() -> None:
    c = cfg()
    st = km.init(c, 4)
    st = mail(c, st, "DESIRED_THRUST", 50.0, rows=[1, 3])
    st = mail(c, st, "DESIRED_RUDDER", np.array([10.0, 20.0, 30.0, 40.0]))
    assert st.thrust.tolist() == [0.0, 50.0, 0.0, 50.0]
    assert st.rudder.tolist() == [10.0, 20.0, 30.0, 40.0]


def test_init_rejects_bad_input() -> None:
    with pytest.raises(ConfigError):
        km.init(cfg(), 0)
    with pytest.raises(ConfigError, match="variant"):
        km.init(cfg(variant="usm_v9"), 1)


def test_step_contract_matches_mail_plus_iterate() -> None:
    c = cfg(max_rudder_degs_per_sec=20.0)
    a = km.init(c, 3)
    b = km.init(c, 3)
    thrust = np.array([10.0, 50.0, 90.0])
    rudder = np.array([-30.0, 0.0, 30.0])
    for k in range(1, 6):
        a = km.step(c, a, {"DESIRED_THRUST": thrust, "DESIRED_RUDDER": rudder}, None, 0.1)
        t = 0.1 * k
        b = mail(c, b, "DESIRED_THRUST", thrust, t=t)
        b = mail(c, b, "DESIRED_RUDDER", rudder, t=t)
        b, _ = km.iterate(c, b, np.full(3, float(a.moos_time[0])))
    for f in ("x", "y", "heading", "speed", "rudder"):
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=0, atol=1e-12)
    c2 = dataclasses.replace(c, max_rudder_degs_per_sec=0.0)
    s = km.step(c2, km.init(c2, 2), None, {"drift_x": [1.0, 2.0]}, 0.5)
    assert s.x.tolist() == pytest.approx([0.5, 1.0])


def test_measure_throughput_reports_both_paths() -> None:
    res = km.measure_throughput(3, 3, loop=True, loop_vehicles=2, loop_steps=2, rounds=1)
    assert res["vehicles"] == 3 and res["steps"] == 3
    assert res["vehicle_steps_per_s"] > 0 and res["loop_vehicle_steps_per_s"] > 0
    assert res["ratio"] == pytest.approx(
        res["vehicle_steps_per_s"] / res["loop_vehicle_steps_per_s"]
    )
    with pytest.raises(ConfigError):
        km.measure_throughput(0, 1)
