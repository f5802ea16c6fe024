""":func:`iterate_one` (the MOOS app's one-vehicle iteration) against :func:`iterate`, bit for bit.

Mail sequences that take the short path (thrust, rudder, elevator, drift, water depth, a
thrust map, speed snapping, V22's turn-speed map and turn radius) and that leave it (pause,
reverse thrust, dual state, an obstacle, buoyancy and trim handshakes, disabled) go through
both, with and without a datum; every state field must hold the same bits and dtype, and the
publications must be the scalar form of :func:`iterate`'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.models import usm
from marinesim.models.usm import one as one_mod
from marinesim.models.usm.config import configure
from marinesim.models.usm.state import _FIELD_NAMES

BASE = ["prefix = NAV", "turn_rate = 70", "start_pos = x=0, y=-10, heading=180, speed=0"]

#: (config lines, variant, compat)
CASES = [
    ([*BASE, "thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5"], "usm", "moos"),
    ([*BASE, "max_acceleration = 0.5", "max_deceleration = 0.3"], "usm", "doc"),
    ([*BASE, "default_water_depth = 30", "max_depth_rate = 0.5"], "usm", "moos"),
    ([*BASE, "dual_state = true", "drift_x = 0.3"], "usm", "moos"),
    ([*BASE, "turn_radius = 5", "max_speed = 1.5"], "usm_v22", "moos"),
    ([*BASE, "turn_spd_map_full_speed = 2"], "usm_v22", "doc"),
]

#: (MOOS s after start, variable, value)
MAIL = [
    (0.3, "DESIRED_THRUST", 40.0),
    (1.0, "DESIRED_RUDDER", 30.0),
    (2.0, "DESIRED_ELEVATOR", -20.0),
    (2.5, "DRIFT_X", 0.4),
    (3.0, "WATER_DEPTH", 12.0),
    (3.5, "DESIRED_RUDDER", -80.0),
    (4.0, "USM_SIM_PAUSED", "true"),
    (4.6, "USM_SIM_PAUSED", "false"),
    (5.0, "THRUST_MODE_REVERSE", "true"),
    (5.7, "THRUST_MODE_REVERSE", "false"),
    (6.0, "BUOYANCY_CONTROL", "true"),
    (6.2, "TRIM_CONTROL", "true"),
    (7.0, "DESIRED_THRUST", 100.0),
    (7.5, "DRIFT_VECTOR", "45,0.5"),
    (8.0, "USM_ENABLED", "false"),
    (8.4, "USM_ENABLED", "true"),
    (9.0, "USM_RESET", "x=5,y=5,heading=359.99,speed=1"),
    (9.5, "DESIRED_THRUST", -30.0),
    (12.0, "OBSTACLE_HIT", "true"),
]


def _same_state(a: usm.UsmState, b: usm.UsmState) -> None:
    for f in _FIELD_NAMES:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f
            if x.dtype == np.float64:
                assert np.array_equal(x.view(np.int64), y.view(np.int64)), f
            else:
                assert np.array_equal(x, y), f
        else:
            assert x == y, f


@pytest.mark.parametrize("datum", [None, (42.358456, -71.087589)])
@pytest.mark.parametrize(("lines", "variant", "compat"), CASES)
def test_iterate_one_is_iterate_bit_for_bit(
    lines: list[str], variant: str, compat: str, datum: tuple[float, float] | None
) -> None:
    cfg, _w = configure(lines, variant=variant, compat=compat)  # type: ignore[arg-type]
    t0 = 1_700_000_000.0 * 10
    a = usm.init(cfg, 1, t0, datum=datum)
    b = a  # (states are not changed in place: both runs start from this one)
    short = 0
    orig = one_mod._short_path

    def counting(*args: object) -> object:
        nonlocal short
        got = orig(*args)  # type: ignore[arg-type]
        short += got is not None
        return got

    mail = list(MAIL)
    one_mod._short_path = counting  # type: ignore[assignment]
    try:
        for k in range(1, 141):
            t = t0 + 0.1 * k
            while mail and mail[0][0] <= 0.1 * k:
                _dt, var, val = mail.pop(0)
                a, pa, _wa = usm.apply_mail(cfg, a, var, val, moos_time=t)
                b, pb, _wb = usm.apply_mail(cfg, b, var, val, moos_time=t)
            a, pubs_a = usm.iterate(cfg, a, t)
            b, pubs_b = usm.iterate_one(cfg, b, t)
            assert pubs_b == one_mod.scalar_pubs(pubs_a), k
            assert all(type(v) in (float, str) for _n, v in pubs_b)
            _same_state(a, b)
    finally:
        one_mod._short_path = orig  # type: ignore[assignment]
    # the short path ran for some iterations, and the general one for others
    assert 0 < short < 140 or cfg.dual_state and short == 0


def test_two_vehicles_interleaved_keep_their_own_rows() -> None:
    """The last iteration's rows are reused only for the state it returned (by identity)."""
    cfg, _w = configure([*BASE, "thrust_map = 0:0, 20:1, 40:2"], compat="moos")
    t0 = 1000.0
    ref = [usm.init(cfg, 1, t0), usm.init(cfg, 1, t0, datum=(42.358456, -71.087589))]
    got = list(ref)
    for k in range(1, 60):
        t = t0 + 0.1 * k
        for j in (0, 1):
            if k % (7 + j) == 0:
                val = 30.0 + k if j else -40.0 + k
                ref[j], _p, _w = usm.apply_mail(cfg, ref[j], "DESIRED_THRUST", val, moos_time=t)
                got[j], _p, _w = usm.apply_mail(cfg, got[j], "DESIRED_THRUST", val, moos_time=t)
                ref[j], _p, _w = usm.apply_mail(cfg, ref[j], "DESIRED_RUDDER", 9.0, moos_time=t)
                got[j], _p, _w = usm.apply_mail(cfg, got[j], "DESIRED_RUDDER", 9.0, moos_time=t)
            ref[j], pubs = usm.iterate(cfg, ref[j], t)
            got[j], mine = usm.iterate_one(cfg, got[j], t)
            assert mine == one_mod.scalar_pubs(pubs)
            _same_state(ref[j], got[j])
    assert got[0].x[0] != got[1].x[0]  # the two vehicles went different ways


@pytest.mark.parametrize("datum", [None, (42.358456, -71.087589)])
@pytest.mark.parametrize(("lines", "variant", "compat"), CASES)
def test_one_vehicle_mailed_and_iterated_is_iterate_bit_for_bit(
    lines: list[str], variant: str, compat: str, datum: tuple[float, float] | None
) -> None:
    """The app's use: mail and iterations in turn on one :class:`OneVehicle`, whose rows
    run ahead of its state for several iterations between two reads of the state."""
    cfg, _w = configure(lines, variant=variant, compat=compat)  # type: ignore[arg-type]
    t0 = 1_700_000_000.0 * 10
    a = usm.init(cfg, 1, t0, datum=datum)
    veh = usm.OneVehicle(cfg, a)
    mail = list(MAIL)
    seen = []
    for k in range(1, 141):
        t = t0 + 0.1 * k
        while mail and mail[0][0] <= 0.1 * k:
            _dt, var, val = mail.pop(0)
            a, pa, wa = usm.apply_mail(cfg, a, var, val, moos_time=t)
            pb, wb = veh.mail(var, val, moos_time=t)
            assert wb == wa
            assert [n for n, _v in pb] == [n for n, _v in pa]
        a, pubs_a = usm.iterate(cfg, a, t)
        assert veh.iterate(t) == one_mod.scalar_pubs(pubs_a), k
        if k % 9 == 0:  # a read of the state between runs of iterations
            _same_state(a, veh.state)
            seen.append((veh.state, a))
    _same_state(a, veh.state)
    # a state once read never changes with later iterations (it holds copies of the rows)
    for got, ref in seen:
        _same_state(ref, got)
