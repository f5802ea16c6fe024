"""Properties of the uSimMarine model (hypothesis): angle wrap, batch == N × single."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.models import usm as km
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.thrustmap import ThrustMap

finite = st.floats(-200, 200, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(
    thrust=finite,
    rudder=finite,
    rot=st.floats(-720, 720),
    dt=st.floats(0.0, 2.0),
    h0=st.floats(-1000, 1000),
    variant=st.sampled_from(["usm", "usm_v22"]),
)
def test_heading_stays_in_0_360(
    thrust: float, rudder: float, rot: float, dt: float, h0: float, variant: str
) -> None:
    c = UsmConfig(
        variant=variant,
        compat="moos",
        rotate_speed=rot,
        start_heading=h0,
        thrust_map=ThrustMap(20, True),
    )  # type: ignore[arg-type]
    s = km.init(c, 1)
    s, _p, _w = km.apply_mail(c, s, "DESIRED_THRUST", thrust, moos_time=0.0)
    s, _p, _w = km.apply_mail(c, s, "DESIRED_RUDDER", rudder, moos_time=0.0)
    for k in range(1, 4):
        s, pubs = km.iterate(c, s, k * dt)
        # the program's angle360 adds 360 to a tiny negative angle, which can round to 360.0
        assert 0.0 <= float(s.heading[0]) <= 360.0
        assert -np.pi - 1e-12 <= float(s.yaw[0]) <= np.pi + 1e-12
        assert 0.0 <= float(s.hog[0]) <= 360.0
        assert float(s.depth[0]) >= 0.0


vals = st.lists(st.floats(-120, 120, allow_nan=False), min_size=5, max_size=5)


@settings(max_examples=15, deadline=None)
@given(
    thrust=vals,
    rudder=vals,
    elev=vals,
    dual=st.booleans(),
    variant=st.sampled_from(["usm", "usm_v22"]),
)
def test_batch_equals_single(
    thrust: list[float], rudder: list[float], elev: list[float], dual: bool, variant: str
) -> None:
    c = UsmConfig(
        variant=variant,
        compat="moos",
        dual_state=dual,
        drift_x=0.2,
        max_rudder_degs_per_sec=30.0,
        default_water_depth=20.0,
        thrust_map=ThrustMap(20, True),
        start_depth=3.0,
    )  # type: ignore[arg-type]
    n = 5
    batch = km.init(c, n)
    singles = [km.init(c, 1) for _ in range(n)]
    for k in range(1, 8):
        t = 0.1 * k
        for var, v in (
            ("DESIRED_THRUST", thrust),
            ("DESIRED_RUDDER", rudder),
            ("DESIRED_ELEVATOR", elev),
        ):
            vk = np.asarray(v) * (1 if k % 2 else -0.5)
            batch, _p, _w = km.apply_mail(c, batch, var, vk, moos_time=t)
            for i in range(n):
                singles[i], _p, _w = km.apply_mail(c, singles[i], var, float(vk[i]), moos_time=t)
        if k == 4:
            batch, _p, _w = km.apply_mail(
                c, batch, "USM_RESET", "x=3,heading=45", moos_time=t, rows=[1, 3]
            )
            for i in (1, 3):
                singles[i], _p, _w = km.apply_mail(
                    c, singles[i], "USM_RESET", "x=3,heading=45", moos_time=t
                )
        batch, pb = km.iterate(c, batch, t)
        outs = [km.iterate(c, s, t) for s in singles]
        singles = [o[0] for o in outs]
        for name in ("x", "y", "heading", "speed", "depth", "pitch", "gt_x", "sog", "hog"):
            got = getattr(batch, name)
            want = np.concatenate([getattr(s, name) for s in singles])
            np.testing.assert_array_equal(got, want, err_msg=name)
        for key, arr in pb.items():
            want = [o[1].get(key, np.array([np.nan]))[0] for o in outs]
            if arr.dtype == object:
                assert list(arr) == want, key
            else:
                np.testing.assert_array_equal(arr, np.asarray(want, dtype=float), err_msg=key)
