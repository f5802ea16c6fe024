"""The engine's uSimMarine rows against the model's API, bit for bit.

The compiled tick runs :func:`usm_mail_cmd` and :func:`usm_propagate` on its own rows
matrix; the plugins run :func:`apply_mail` and :func:`iterate` (whose propagation is the same
law, ``usm_propagate_map``, over the state packed by ``publish``).  Random states (turning and straight rows, stopped
rows, diving and level rows, drift on some rows, headings across 0/360) go through both for
many steps; every state column must hold the same bits.  The rows run interpreted here
(``register_jitable`` functions are plain Python); tests/engine/test_compiled_usm.py runs
them compiled.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.models import usm
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.state import _evolve


def _state(cfg: UsmConfig, n: int, rng: np.random.Generator, *, level: bool) -> usm.UsmState:
    st = usm.init(cfg, n, moos_time=10.0)
    ch = {
        "x": rng.uniform(-50, 50, n), "y": rng.uniform(-50, 50, n),
        "heading": rng.choice([0.0, 359.9, 0.05, 180.0, 90.0], n) + rng.uniform(0, 1e-3, n),
        "speed": rng.uniform(0.0, 2.0, n), "ts": np.full(n, 10.0),
        "drift_x": np.where(rng.random(n) < 0.5, rng.normal(0, 0.3, n), 0.0),
        "drift_y": np.zeros(n),
    }  # fmt: skip
    ch["heading"] = ch["heading"] % 360.0
    if not level:
        ch["depth"] = rng.uniform(0.0, 5.0, n)
    return _evolve(st, ch)


def _numpy_step(cfg: UsmConfig, st: usm.UsmState, cmd: np.ndarray, t: float) -> usm.UsmState:
    for var, col in (("DESIRED_RUDDER", 0), ("DESIRED_THRUST", 1), ("DESIRED_ELEVATOR", 2)):
        st, _p, _w = usm.apply_mail(cfg, st, var, cmd[:, col].copy(), moos_time=t)
    st, _pubs = usm.iterate(cfg, st, t)
    return st


def _rows_step(cfg: UsmConfig, u: np.ndarray, it: np.ndarray, cmd: np.ndarray, t: float) -> None:
    pc = R.config_numbers(cfg)
    R.usm_mail_cmd(u, cmd, t, pc[6])
    n = u.shape[0]
    w = np.zeros((n, R.NSCRATCH))
    assert R.usm_propagate(u, it, pc, t, u[:, R.DRX].copy(), u[:, R.DRY].copy(), w) == 0


@pytest.mark.parametrize(
    ("params", "level"),
    [
        ({}, False),
        ({}, True),
        ({"max_acceleration": 0.5, "max_deceleration": 0.3, "turn_rate": 70.0}, False),
        ({"max_rudder_degs_per_sec": 30.0, "rotate_speed": 0.7, "buoyancy_rate": 0.0}, True),
        ({"thrust_factor": 0.0}, False),
    ],
)
def test_rows_match_the_numpy_model_bit_for_bit(params: dict, level: bool) -> None:
    from marinesim.models.usm.config import config_from_mapping

    cfg, _w = config_from_mapping(dict(params), variant="usm", compat="doc")
    assert R.why_not_rows(cfg) is None
    rng = np.random.default_rng(7)
    n = 40
    st = _state(cfg, n, rng, level=level)
    u = np.zeros((n, R.NU))  # PAUSE and HOLD columns 0: every row runs
    for c, f in enumerate(R.FIELDS):
        u[:, c] = getattr(st, f)
    it = st.iteration.copy()
    t = 10.0
    for step in range(60):
        t += 0.2
        cmd = np.empty((n, 3))
        cmd[:, 0] = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(-120, 120, n))  # rudder
        cmd[:, 1] = rng.uniform(-20, 110, n)  # thrust
        cmd[:, 2] = 0.0 if level else rng.uniform(-100, 100, n)  # elevator
        if step % 7 == 0:
            cmd[:, 0] = 0.0  # a tick nobody turns
        st = _numpy_step(cfg, st, cmd, t)
        _rows_step(cfg, u, it, cmd, t)
        for c, f in enumerate(R.FIELDS):
            assert u[:, c].tobytes() == np.asarray(getattr(st, f), float).tobytes(), (step, f)
        np.testing.assert_array_equal(it, st.iteration)


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"dual_state": True}, "dual_state"),
        ({"thrust_map": "-100:-2, 0:0, 100:5"}, "thrust map"),
        ({"default_water_depth": 30.0}, "water depth"),
    ],
)
def test_rows_say_which_configurations_they_do_not_take(params: dict, why: str) -> None:
    from marinesim.models.usm.config import config_from_mapping

    cfg, _w = config_from_mapping(dict(params), variant="usm", compat="doc")
    assert why in (R.why_not_rows(cfg) or "")
