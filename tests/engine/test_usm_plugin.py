"""The ``usm`` motion plugin against the model run directly (one iteration per tick)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugins.script import EventScript, EventScriptParams
from marinesim.engine.plugins.usm import UsmMotion, UsmV22Motion
from marinesim.engine.simulation import Simulation
from marinesim.models import usm as kinematic
from marinesim.scenario import load_simulation

EVENTS = [
    {"at": 0.0, "var": "DESIRED_THRUST", "value": 40.0},
    {"at": 0.0, "var": "DESIRED_RUDDER", "value": 20.0},
    {"at": 1.0, "var": "DRIFT_VECTOR_ADD", "value": "90,0.5"},
    {"at": 2.0, "var": "DESIRED_RUDDER", "value": -35.0},
]


def _sim(
    cls: type[UsmMotion] = UsmMotion, events: list[dict] | None = None, n: int = 2
) -> Simulation:
    motion = cls("usm", cls.build_params({"turn_rate": 60})[0])
    script = EventScript(
        "script", EventScriptParams(events=events if events is not None else EVENTS)
    )
    block = BlockSpec(
        "auv",
        n,
        PluginSpec(motion),
        autonomy=(PluginSpec(script),),
        spawn=Spawn(north=10.0, east=-5.0, heading_deg=30.0, speed=0.5),
    )
    return Simulation([block], dt=0.1, end=3.0, seed=1)


@pytest.mark.parametrize("cls", [UsmMotion, UsmV22Motion])
def test_engine_equals_direct_model_loop(cls: type[UsmMotion]) -> None:
    res = _sim(cls).run()
    cfg = cls.build_params({"turn_rate": 60})[0].config
    import dataclasses

    st = kinematic.init(cfg, 2, moos_time=0.0)
    rec = {
        "x": np.full(2, -5.0),
        "y": np.full(2, 10.0),
        "heading": np.full(2, 30.0),
        "speed": np.full(2, 0.5),
        "depth": np.zeros(2),
    }
    st = dataclasses.replace(st, **rec, **{"gt_" + k: v.copy() for k, v in rec.items()})
    xs = [st.x.copy()]
    ys = [st.y.copy()]
    for k in range(30):
        t_k, t_next = 0.1 * k, 0.1 * (k + 1)
        for ev in EVENTS:
            if abs(ev["at"] - t_k) < 1e-9:
                st, _p, _w = kinematic.apply_mail(cfg, st, ev["var"], ev["value"], moos_time=t_next)
        st, _pubs = kinematic.iterate(cfg, st, t_next)
        xs.append(st.x.copy())
        ys.append(st.y.copy())
    pos = res["truth.pos"]
    assert np.array_equal(pos[:, :, 1], np.array(xs).T)  # east = x
    assert np.array_equal(pos[:, :, 0], np.array(ys).T)  # north = y
    if cls is UsmMotion:  # (V22 does not publish at every iteration)
        assert np.array_equal(res["usm.NAV_X"][:, 1:, 0], np.array(xs).T[:, 1:])


def test_truth_mapping_and_drift_log() -> None:
    res = _sim().run()
    h = res["truth.heading"][:, :, 0]
    assert h[0, 0] == pytest.approx(30.0)
    drift = res["usm.drift"]
    t = res.t
    assert np.all(drift[:, t < 1.0 + 1e-9, 0] == 0.0)
    assert np.allclose(drift[:, t > 1.05, 0], 0.5)  # east, from DRIFT_VECTOR_ADD 90,0.5
    assert res.signal("usm.drift").labels == ("east", "north")


def test_pause_and_reset_by_script() -> None:
    events = [
        {"at": 0.0, "var": "DESIRED_THRUST", "value": 50.0},
        {"at": 1.0, "var": "USM_SIM_PAUSED", "value": "true"},
        {"at": 1.5, "var": "USM_SIM_PAUSED", "value": "false"},
        {"at": 2.0, "var": "USM_RESET", "value": "x=100,y=50", "rows": [1]},
    ]
    res = _sim(events=events).run()
    pos = res["truth.pos"]
    t = res.t
    frozen = (t > 1.05) & (t < 1.55)
    assert np.ptp(pos[0, frozen, 0]) == 0.0 and np.ptp(pos[0, frozen, 1]) == 0.0
    assert res["usm.paused"][0, frozen, 0].all()
    after = np.flatnonzero(t > 2.05)[0]
    assert pos[1, after, 1] == pytest.approx(100.0, abs=1.0)  # east = x
    assert pos[1, after, 0] == pytest.approx(50.0, abs=1.0)
    assert pos[0, after, 1] < 20.0


def test_origin_gives_lat_long(tmp_path: Path) -> None:
    sim = load_simulation("demo_survey", sets={"time.end": 1.0})
    assert sim.env.origin == (42.358456, -71.087589)
    slot = [s for s in sim.slots if s.plugin.name == "usm"][0]
    sim.run()
    assert slot.state["usm"].geodesy is not None


def test_empty_block_is_allowed() -> None:
    sets = {"time.end": 1.0, "entities.survey.count": 0, "script": [], "end_conditions": ["time"]}
    res = load_simulation("demo_survey", sets=sets).run()
    assert res.status == "completed" and res["truth.pos"].shape == (0, 6, 3)
