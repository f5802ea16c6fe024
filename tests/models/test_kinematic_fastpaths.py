"""The uSimMarine hot path's shortcuts give the same numbers as the general formulas.

``kinematic`` skips work with whole-array checks (level flight without elevator, one dt, one
buoyancy rate, one turn rate, zero drift, no water depth) and folds sign logic into fewer
array operations.  A vehicle must get bit-identical results whether its batch takes a
shortcut or the general path, so each test mixes vehicles that force the general path with
vehicles that alone would take the shortcut, and compares against single-vehicle runs.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.models import usm as km
from marinesim.models.usm.config import UsmConfig


def _rel_ang_reference(xa: float, ya: float, xb: float, yb: float) -> float:
    """MOOS-IvP ``relAng`` transcribed branch by branch (scalar)."""
    if xa == xb and ya == yb:
        return 0.0
    w = 0.0
    sop = 0.0
    if xa < xb:
        if ya == yb:
            return 90.0
        w = 90.0
    elif xa > xb:
        if ya == yb:
            return 270.0
        w = 270.0
    if ya < yb:
        if xa == xb:
            return 0.0
        sop = -1.0 if xb > xa else 1.0
    elif yb < ya:
        if xa == xb:
            return 180.0
        sop = 1.0 if xb > xa else -1.0
    aval = (math.atan(abs(yb - ya) / abs(xb - xa)) / math.pi) * 180.0
    ret = (aval * sop) + w
    while ret >= 360.0:
        ret -= 360.0
    while ret < 0.0:
        ret += 360.0
    return ret


coord = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1.0, -1.0]),
)


@settings(max_examples=200, deadline=None)
@given(xa=coord, ya=coord, xb=coord, yb=coord)
def test_rel_ang_matches_the_program_branch_by_branch(
    xa: float, ya: float, xb: float, yb: float
) -> None:
    # the vectorised form works on the differences, as the program's arithmetic does
    dx = xb - xa
    dy = yb - ya
    want = _rel_ang_reference(0.0, 0.0, dx, dy)
    got = km.rel_ang(np.array([0.0]), np.array([0.0]), np.array([dx]), np.array([dy]))
    assert got.shape == (1,)
    assert float(got[0]) == want
    assert float(km.rel_ang(0.0, 0.0, dx, dy)) == want  # scalar inputs too


@settings(max_examples=200, deadline=None)
@given(v=st.floats(-1e3, 1e3, allow_nan=False))
def test_snap_speed_rounds_half_away_from_zero(v: float) -> None:
    q = v / 0.01
    want = math.trunc(q - 0.5 if q < 0 else q + 0.5) * 0.01
    assert float(km.snap_speed(v)) == want
    assert float(km.snap_speed(np.array([v, 0.0]))[0]) == want


def _run(c: UsmConfig, n: int, mail: list[tuple[str, object, object]], steps: int, jitter: object):
    s = km.init(c, n)
    pubs_all = []
    for k in range(1, steps + 1):
        t = 0.1 * k
        for var, val, rows in mail:
            s, _p, _w = km.apply_mail(c, s, var, val, moos_time=t, rows=rows)
        s, pubs = km.iterate(c, s, t + np.asarray(jitter) * k)
        pubs_all.append(pubs)
    return s, pubs_all


@settings(max_examples=12, deadline=None)
@given(
    thrust=st.lists(st.floats(0, 100), min_size=4, max_size=4),
    rudder=st.lists(st.floats(-60, 60), min_size=4, max_size=4),
    special=st.sampled_from(
        ["elevator", "buoyancy", "drift", "water", "turn_rate", "dt", "decel_negative_dt"]
    ),
    variant=st.sampled_from(["usm", "usm_v22"]),
)
def test_mixed_batch_equals_single_runs(
    thrust: list[float], rudder: list[float], special: str, variant: str
) -> None:
    """Vehicle 0 forces the general path; vehicles 1-3 alone would take the shortcuts."""
    c = UsmConfig(variant=variant, compat="moos", max_rudder_degs_per_sec=40.0)  # type: ignore[arg-type]
    n = 4
    th = np.asarray(thrust)
    ru = np.asarray(rudder)
    jit = np.zeros(n)
    extra: list[tuple[str, object, object]] = []
    if special == "elevator":
        extra.append(("DESIRED_ELEVATOR", 30.0, [0]))
    elif special == "buoyancy":
        extra.append(("BUOYANCY_RATE", -0.2, [0]))
    elif special == "drift":
        extra.append(("DRIFT_X", 0.3, [0]))
        extra.append(("DRIFT_Y", -0.1, [0]))
    elif special == "water":
        extra.append(("WATER_DEPTH", 12.0, [0]))
    elif special == "turn_rate":
        extra.append(("USM_TURN_RATE", 35.0, [0]))
    elif special == "dt":
        jit[0] = 0.013
    else:  # a vehicle whose clock goes backwards: negative dt with a deceleration limit
        jit[0] = -0.15
    mail = [("DESIRED_THRUST", th, None), ("DESIRED_RUDDER", ru, None), *extra]
    batch, bpubs = _run(c, n, mail, 6, jit)
    for i in range(n):
        smail = [
            (var, val[i] if isinstance(val, np.ndarray) else val, None)
            for var, val, rows in mail
            if rows is None or i in rows  # type: ignore[operator]
        ]
        single, spubs = _run(c, 1, smail, 6, jit[i])
        for name in km._FIELD_NAMES:
            got = getattr(batch, name)
            if isinstance(got, np.ndarray) and not name.startswith("act_"):  # not the cache
                np.testing.assert_array_equal(
                    got[i : i + 1], getattr(single, name), err_msg=f"{special} {name} [{i}]"
                )
        for k, (bp, sp) in enumerate(zip(bpubs, spubs, strict=True)):
            for key, arr in sp.items():
                if arr.dtype != object:
                    np.testing.assert_array_equal(
                        bp[key][i : i + 1], arr, err_msg=f"{special} {key} step {k}"
                    )


def test_demanded_speed_follows_mail_turn_rate_and_config() -> None:
    """Each iteration's demanded speed follows the latest thrust, rudder and configuration."""
    kw = {"max_rudder_degs_per_sec": 0.0, "max_deceleration": 0.0}  # no rate limits
    c1 = UsmConfig(compat="moos", **kw)  # type: ignore[arg-type]
    c2 = UsmConfig(compat="moos", turn_loss=0.3, **kw)  # type: ignore[arg-type]
    s = km.init(c1, 3)
    s, _p, _w = km.apply_mail(c1, s, "DESIRED_THRUST", np.array([50.0, 60.0, 70.0]), moos_time=0.1)
    s, _p, _w = km.apply_mail(c1, s, "DESIRED_RUDDER", 20.0, moos_time=0.1)
    s, _pubs = km.iterate(c1, s, 0.1)
    steps = [
        (c1, "DESIRED_THRUST", 90.0, [1]),
        (c1, "DESIRED_RUDDER", -35.0, [2]),
        (c1, "USM_TURN_RATE", 10.0, [0]),
        (c2, "DESIRED_THRUST", 40.0, [0]),  # another configuration: its turn loss at once
    ]
    for k, (cfg, var, val, rows) in enumerate(steps, start=2):
        t = 0.1 * k
        s, _p, _w = km.apply_mail(cfg, s, var, val, moos_time=t, rows=rows)
        new, _ = km.iterate(cfg, s, t)
        # the documented demanded speed (factor 20, turn loss), averaged with the last speed
        v_map = np.maximum(new.thrust, 0.0) / 20.0
        loss = (np.abs(np.clip(new.rudder, -100, 100)) / 100) * cfg.turn_loss
        np.testing.assert_allclose(new.speed, (v_map * (1.0 - loss) + s.speed) / 2, rtol=1e-15)
        s = new


def test_a_thrust_map_that_still_changes_is_read_at_every_iteration() -> None:
    from marinesim.models.usm.thrustmap import ThrustMap

    tm = ThrustMap(20.0, False)  # not frozen: the user may still edit it
    c = UsmConfig(compat="moos", thrust_map=tm)  # type: ignore[arg-type]
    s = km.init(c, 2)
    s, _p, _w = km.apply_mail(c, s, "DESIRED_THRUST", 60.0, moos_time=0.1)
    s, _pubs = km.iterate(c, s, 0.1)
    assert float(s.speed[0]) == 1.5  # (60 / 20 + 0) / 2
    tm.set_thrust_factor(10.0)
    s, _pubs = km.iterate(c, s, 0.2)
    assert float(s.speed[0]) == 3.75  # (60 / 10 + 1.5) / 2: the edited map is used at once


def test_batch_mail_with_a_non_finite_value_rejects_only_that_vehicle() -> None:
    c = km.bench_config()
    s = km.init(c, 3)
    vals = np.array([10.0, np.nan, 30.0])
    s, _p, warns = km.apply_mail(c, s, "DESIRED_THRUST", vals, moos_time=0.1)
    np.testing.assert_array_equal(s.thrust, [10.0, 0.0, 30.0])
    s, _p, warns = km.apply_mail(c, s, "DESIRED_RUDDER", vals, moos_time=0.1)
    # rate limit 30 %/s over 0.1 s since t = 0: at most 3 % per message
    np.testing.assert_array_equal(s.rudder, [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(s.rudder_tstamp, [0.1, 0.0, 0.1])
    assert any("non-finite" in w for w in warns)
