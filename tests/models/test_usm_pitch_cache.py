"""A pitch set from outside the model: the depth law takes sin of it in radians.

The real uSimMarine (SimEngine's depth step, spec §3.4) adds ``-sin(pitch)·v`` to the depth
rate with the pitch in radians.  The numpy model and the rows keep sin(pitch) in a cache and
refresh it when the pitch no longer matches the cache key (whoever changes the pitch need not
touch the cache): a refresh that took the pitch for degrees made the pitch term about 57
times too small.  Both paths must give the program's depth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from marinesim.models import usm
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import config_from_mapping
from marinesim.models.usm.state import _evolve


@pytest.mark.parametrize("pitch", [0.2, -0.35])
def test_external_pitch_enters_the_depth_law_in_radians(pitch: float) -> None:
    cfg, _w = config_from_mapping({"buoyancy_rate": 0.0}, variant="usm", compat="doc")
    assert R.why_not_rows(cfg) is None
    n = 3
    st = usm.init(cfg, n, moos_time=10.0)
    st = _evolve(
        st,
        {"speed": np.array([1.0, 2.0, 3.0]), "depth": np.full(n, 5.0), "ts": np.full(n, 10.0),
         "pitch": np.full(n, pitch)},
    )  # fmt: skip
    assert (st.pkey != st.pitch).all()  # the cache is stale: the model must refresh it
    u = np.zeros((n, R.NU))  # PAUSE and HOLD columns 0: every row runs
    for c, f in enumerate(R.FIELDS):
        u[:, c] = getattr(st, f)
    it = st.iteration.copy()
    t, dt = 11.0, 1.0
    new, _pubs = usm.iterate(cfg, st, t)
    w = np.zeros((n, R.NSCRATCH))
    pc = R.config_numbers(cfg)
    assert R.usm_propagate(u, it, pc, t, u[:, R.DRX].copy(), u[:, R.DRY].copy(), w) == 0
    v = 2.0 * np.asarray(new.speed) - st.speed  # the new speed before averaging (§3.1)
    assert (v > 0.1).all()
    want = 5.0 - math.sin(pitch) * v * dt  # depth + (-sin(pitch)·v)·dt, §3.4
    np.testing.assert_allclose(new.depth, want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(new.pitch, pitch, rtol=1e-12)  # -asin(-sin(p)) = p
    assert u[:, R.FIELDS.index("depth")].tobytes() == np.asarray(new.depth).tobytes()
