"""A block's navigation estimate in the generated tick: ``noisy_state`` and its readers.

``demo_survey`` with a ``noisy_state`` belief writer and the ``nav_error`` metric: the
waypoints and the PID of each vehicle steer by the belief, not the truth.  The compiled route must run it (the belief
wires of :mod:`marinesim.engine.plugins.belief_laws`) and give the plugins' run: every
signal (the belief frames among them), event and count, the plugin's belief and the random
stream's position, bit for bit where numpy is libm (to rounding elsewhere,
:func:`~marinesim.testing.assert_runs_identical`).  A controller that reads the truth as its
navigation keeps a block with a belief writer on the plugins, and says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

POS_STD = (1.0, 1.0, 0.2)
NOISY = {
    "name": "nav", "plugin": "noisy_state", "rate_hz": 2.5,
    "params": {"pos_std": list(POS_STD), "pos_mean": [0.0, 0.0, 0.0], "vel_std": [0.1, 0.1, 0.1],
               "vel_mean": [0.05, 0.0, 0.0], "att_std_deg": [0.5, 0.5, 1.0],
               "att_mean_deg": [0.0, 0.0, 2.0]},
}  # fmt: skip


def _run(compiled: bool, end: float = 60.0) -> tuple[Any, Any]:
    sets = {"entities.0.sensors": [NOISY], "time.end": end,
            "metrics": [{"name": "nav_error", "plugin": "nav_error"}]}  # fmt: skip
    sim = load_simulation("demo_survey", sets=sets)
    sim.compiled = compiled
    return sim, sim.run()


def test_noisy_state_belief_runs_compiled_as_the_plugins() -> None:
    (sp, rp), (sc, rc) = _run(False), _run(True)
    assert rc.manifest["compiled_ticks"] >= rc.manifest["ticks"] - 5, rc.manifest.get(
        "compiled_why_not"
    )
    assert rp.manifest["compiled_ticks"] == 0
    assert_runs_identical(rp, rc, routes=True)
    # the plugin's state where the compiled route left it: the belief and the stream position
    slot_p, slot_c = (next(s for s in sim.slots if s.plugin.name == "nav") for sim in (sp, sc))
    bp, bc = slot_p.ctx.state["belief"], slot_c.ctx.state["belief"]
    for field in ("pos", "quat", "vel", "cov"):
        assert_values_identical(getattr(bp, field), getattr(bc, field), routes=True, what=field)
    assert bp.t == bc.t
    assert slot_p.rng.buffered("normal")[1] == slot_c.rng.buffered("normal")[1]
    assert sc.blocks[0].belief is not None
    assert_values_identical(sc.blocks[0].belief.pos, bc.pos, what="block belief")
    assert sc.bus.unheard.get("nav/state") == sp.bus.unheard.get("nav/state") > 0
    assert slot_c.calls["estimate"] == slot_p.calls["estimate"] == slot_p.calls["sense"]
    # nav_error in the tick: its signals above, its summary rows (RMS, final, CEP50) here
    rows_p, rows_c = rp.metrics, rc.metrics
    assert [(r["entity"], r["metric"]) for r in rows_p] == [(r["entity"], r["metric"]) for r in rows_c]
    assert len(rows_p) == 9
    assert_values_identical(
        np.array([r["value"] for r in rows_p]), np.array([r["value"] for r in rows_c]),
        routes=True, what="nav_error summary",
    )
    err = np.asarray(rc["nav_error.error"])
    assert np.nanmax(err) > 1.0 and np.all(err[:, 1:] >= 0.0)


def test_the_compiled_belief_is_the_truth_plus_the_configured_noise() -> None:
    _sim, res = _run(True, end=120.0)
    err = np.asarray(res["belief.pos"]) - np.asarray(res["truth.pos"])  # (N, frames, 3)
    # samples at 2.5 Hz, the frames at t = 0.4, 0.8 … s (the belief is held 0.2 s between
    # them, while the vehicle moves on): one per sample
    samples = err[:, 2::2].reshape(-1, 3)
    assert samples.shape[0] >= 3 * 290
    # a standard deviation of ~900 draws is within 4 standard errors (~3.3 % each) of σ
    sd = samples.std(axis=0)
    assert np.all(np.abs(sd / np.array(POS_STD) - 1.0) < 0.15), sd
    assert np.all(np.abs(samples.mean(axis=0)) < 4 * np.array(POS_STD) / np.sqrt(len(samples)))
    # the vehicles steer by the belief: the truth's track is not the one of perfect navigation
    perfect = load_simulation("demo_survey", sets={"time.end": 120.0}).run()
    moved = np.abs(np.asarray(res["truth.pos"]) - np.asarray(perfect["truth.pos"]))
    assert np.nanmax(moved[..., :2]) > 0.5


def test_a_controller_reading_the_truth_keeps_a_belief_block_on_the_plugins() -> None:
    sim = load_simulation(
        "remus100_survey", sets={"entities.0.sensors": [NOISY], "time.end": 1.0}
    )
    sim.compiled = True
    with pytest.raises(ConfigError, match="reads the truth, not the navigation estimate of 'nav'"):
        sim.run()
