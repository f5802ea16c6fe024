"""uSimMarineV22 differences (spec usimmarine.md §12) not pinned down by the reference cases."""

from __future__ import annotations

import pytest

from marinesim.models import usm as km
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.thrustmap import ThrustMap


def cfg(**kw: object) -> UsmConfig:
    kw.setdefault("variant", "usm_v22")
    kw.setdefault("compat", "moos")
    kw.setdefault("prefix", "NAV")
    return UsmConfig(**kw)  # type: ignore[arg-type]


def mail(
    c: UsmConfig, st: km.UsmState, var: str, value: object, t: float = 0.0, source: str = ""
) -> km.UsmState:
    st, _p, _w = km.apply_mail(c, st, var, value, moos_time=t, source=source)  # type: ignore[arg-type]
    return st


def run(c: UsmConfig, st: km.UsmState, k: int, dt: float = 0.1) -> tuple[km.UsmState, list]:
    out = []
    t = float(st.moos_time[0])
    for _ in range(k):
        t += dt
        st, p = km.iterate(c, st, t)
        out.append(p)
    return st, out


def test_turn_rate_zero_keeps_turning_in_v22_only() -> None:
    for variant, turns in (("usm_v22", True), ("usm", False)):
        c = cfg(variant=variant, turn_rate=0.0)
        st = mail(c, km.init(c, 1), "DESIRED_THRUST", 100.0)
        st = mail(c, st, "DESIRED_RUDDER", 50.0)
        st, _ = run(c, st, 1)
        assert (float(st.heading[0]) != 0.0) == turns


def test_turn_rate_scales_with_speed() -> None:
    c = cfg(turn_rate=70.0, turn_loss=0.0)
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)  # v* = 2.5 m/s
    st = mail(c, st, "DESIRED_RUDDER", 100.0)
    st, _ = run(c, st, 1)
    assert float(st.heading[0]) == pytest.approx(100 * (70 * 2.5 / 5 / 100) * 0.1, abs=1e-12)


def test_no_turning_astern() -> None:
    c = cfg(thrust_map=ThrustMap(20, True), max_deceleration=0.0)
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", -50.0)
    st = mail(c, st, "DESIRED_RUDDER", 50.0)
    st, _ = run(c, st, 3)
    assert float(st.speed[0]) < 0.0
    assert float(st.heading[0]) == 0.0


def test_nav_posts_on_even_iterations_only() -> None:
    c = cfg()
    st, pubs = run(c, km.init(c, 1), 4)
    assert ["NAV_X" in p for p in pubs] == [False, True, False, True]
    assert "USM_DRIFT_SUMMARY" in pubs[0] and "USM_FSUMMARY" not in pubs[0]
    # depth control is on by default in V22's embedded PID engine: all 15 NAV posts
    for k in ("SIMULATION_MODE", "NAV_Z", "NAV_PITCH", "NAV_YAW", "TRUE_X", "TRUE_Y"):
        assert k in pubs[1] and k not in pubs[0]
    assert pubs[1]["SIMULATION_MODE"][0] == "TRUE" and pubs[1]["NAV_PITCH"][0] == 0.0


def test_published_speed_clamped_to_max_speed() -> None:
    c = cfg(max_speed=1.0)
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 100.0)
    st, pubs = run(c, st, 4)
    assert float(st.speed[0]) > 1.0
    assert float(pubs[3]["NAV_SPEED"][0]) == 1.0


def test_obstacle_hit_needs_the_string_true() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
    st = mail(c, st, "OBSTACLE_HIT", 1.0)
    st, pubs = run(c, st, 2)
    y = float(st.y[0])
    assert y > 0.0 and not bool(st.obstacle_hit[0])
    st = mail(c, st, "OBSTACLE_HIT", "TRUE")
    st, pubs = run(c, st, 2)
    assert float(st.y[0]) == y
    assert float(pubs[1]["NAV_SPEED"][0]) == 0.0  # frozen record published with speed 0


def test_drift_summary_on_new_source_only() -> None:
    c = cfg()
    st, _ = run(c, km.init(c, 1), 1)
    st = mail(c, st, "DRIFT_X", 0.5, source="a")
    st, pubs = run(c, st, 1)
    assert pubs[0]["USM_DRIFT_SUMMARY"][0] == "ang=90, mag=0.5, xmag=0.5, ymag=0"
    st = mail(c, st, "DRIFT_VECTOR", "0,1", source="a")
    st, pubs = run(c, st, 1)
    assert "USM_DRIFT_SUMMARY" not in pubs[0]
    st = mail(c, st, "DRIFT_VECTOR_MULT", 2.0, source="b")
    st, pubs = run(c, st, 1)
    assert "USM_DRIFT_SUMMARY" in pubs[0]


def test_disabled_freezes_without_catch_up_and_takes_nav_mail() -> None:
    c = cfg()
    st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
    st, _ = run(c, st, 2)
    st = mail(c, st, "USM_ENABLED", "false")
    st, pubs = run(c, st, 10)
    assert all(p == {} for p in pubs)
    y = float(st.y[0])
    st = mail(c, st, "NAV_X", 7.0)
    st = mail(c, st, "USM_ENABLED", "true")
    st, _ = run(c, st, 1)
    assert float(st.x[0]) == pytest.approx(7.0)
    assert float(st.y[0]) - y < 0.5  # one 0.1 s step, not 1.1 s


def test_mode_gating_and_reverse_inside_model() -> None:
    c = cfg(start_heading=10.0)
    st = mail(c, km.init(c, 1), "THRUST_MODE_DIFFERENTIAL", "differential")
    st = mail(c, st, "DESIRED_THRUST", 50.0)
    assert float(st.thrust[0]) == 0.0
    st = mail(c, st, "THRUST_MODE_DIFFERENTIAL", "normal")
    st = mail(c, st, "THRUST_MODE_REVERSE", "reverse")
    st, _ = run(c, st, 1)
    assert float(st.heading[0]) == pytest.approx(190.0)  # stored heading flipped
    st, _ = run(c, st, 1)
    assert float(st.heading[0]) == pytest.approx(10.0)


def test_turn_radius_limits_the_heading_change() -> None:
    import math

    free = cfg(turn_loss=0.0)
    lim = cfg(turn_loss=0.0, turn_radius=20.0)
    out = []
    for c in (free, lim):
        st = mail(c, km.init(c, 1), "DESIRED_THRUST", 50.0)
        st = mail(c, st, "DESIRED_RUDDER", 100.0)
        st, _ = run(c, st, 1)
        out.append(st)
    s_free, s_lim = out
    assert float(s_free.heading[0]) == pytest.approx(100 * (70 * 2.5 / 5 / 100) * 0.1)
    # osv = (2.5 + 1.25)/2, radius shrinks by osv/max_speed; dist = the travelled chord
    dist = math.hypot(float(s_lim.x[0]), float(s_lim.y[0]))
    r_eff = 20.0 * (1 - (5 - 1.875) / 5)
    phi = math.degrees(math.asin(dist / (2 * r_eff)))
    assert float(s_lim.heading[0]) == pytest.approx(2 * phi, rel=1e-9)
    assert float(s_lim.heading[0]) < float(s_free.heading[0])
    # the mail form sets the same limit; a negative radius is refused
    c = cfg(turn_loss=0.0)
    st = mail(c, km.init(c, 1), "USM_TURN_RADIUS", 20.0)
    st = mail(c, st, "USM_TURN_RADIUS", -1.0)
    assert float(st.turn_radius[0]) == 20.0
