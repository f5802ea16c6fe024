"""Stacked worlds that end at different ticks stay in the generated tick.

A world whose end condition holds is frozen while the others go on (docs/guide/worlds.md).
The plugins hold its truth after every physics phase; the generated tick lets its rows run
on with the others, unseen, and after each call holds its truth where it ended, repeats its
end frame in the log and drops its later events.  Either way, what a user sees is the same:
every recorded signal (the frozen rows included), the events, the bus and call counts, the
metric rows, every world's end, and the truth after the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

_LM = "entities.survey.autonomy.survey.params.lawnmower"
#: ``demo_survey`` with a small survey: its worlds finish their lanes (``all_done``) at
#: ticks 588 … 617, the spawn spread wide so that they do not end together.
SETS: dict[str, Any] = {
    "time.end": 300.0,
    "entities.survey.spawn.spread.north": 60.0,
    f"{_LM}.length": 40.0,
    f"{_LM}.width": 40.0,
    f"{_LM}.spacing": 20.0,
    "metrics": [{"name": "dist", "plugin": "distance_travelled"},
                {"name": "cpa", "plugin": "min_separation"}],
}  # fmt: skip
REPS = [0, 1, 2, 3, 4, 5]


def _run(compiled: bool) -> tuple[Any, Any]:
    sim = build_simulation(load_scenario("demo_survey", sets=SETS), replicas=REPS)
    sim.compiled = compiled
    return sim, sim.run()


def test_worlds_ending_at_different_ticks_match_the_plugins() -> None:
    (sa, a), (sb, b) = _run(False), _run(True)
    ends = np.asarray(b.manifest["worlds"]["ended_tick"])
    assert len(set(ends.tolist())) == len(REPS)  # each world ends at a tick of its own
    assert b.manifest["worlds"] == a.manifest["worlds"]
    assert b.manifest["ended_tick"] == a.manifest["ended_tick"] == ends.max()
    # (bit for bit where numpy's elementary functions are libm's, else within rounding)
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(a.metrics, b.metrics, routes=True, what="metrics")
    for x, y in zip(sa.blocks, sb.blocks, strict=True):  # the truth after the run
        for f in ("pos", "quat", "vel"):
            assert_values_identical(getattr(x.truth, f), getattr(y.truth, f), routes=True, what=f)
    # after the first world ended, the ticks still ran compiled, those at which a world
    # finished too (the call ends after them: STOP_AFTER): the plugins' ticks are the first
    # ones and the gust script's, as many as in the run alone of the world that ends last
    assert a.manifest["compiled_ticks"] == 0
    last = REPS[int(np.argmax(ends))]
    one = build_simulation(load_scenario("demo_survey", sets=SETS), replicas=[last]).run()
    assert one.manifest["ended_tick"] == ends.max()
    plugins = one.manifest["ended_tick"] - one.manifest["compiled_ticks"]
    assert 0 < plugins == ends.max() - b.manifest["compiled_ticks"]
    # the world that ended first stays where it ended, in the log and in the truth
    first = int(np.argmin(ends))
    rows = [i for i, e in enumerate(b.entities) if e["name"].endswith(f"@{REPS[first]}")]
    after = np.flatnonzero(np.rint((b.t - b.t[0]) / sb.clock.dt) >= ends[first])
    for name in ("truth.pos", "usm.NAV_X", "pid.rudder", "dist.distance"):
        v = b[name][rows][:, after]
        assert np.array_equal(v, np.broadcast_to(v[:, :1], v.shape), equal_nan=True), name
    blk = sb.blocks[0]
    assert np.array_equal(blk.truth.pos[rows], b["truth.pos"][rows][:, -1])


def _freeze(sim: Any, w: int) -> None:
    """End world ``w`` now, as an end condition of its own would (``Worlds.update``, which
    runs with the recorder's frames in: a run with such a condition defers none)."""
    sim.flush()
    worlds = sim.worlds
    new = np.arange(worlds.n) == w
    worlds.ended_by[w] = "test"
    worlds.ended_tick[w] = sim.clock.k
    worlds._freeze(new)
    worlds.frozen |= new


#: One scenario per motion declaration (Fossen 6-DOF with thrusters, a PythonVehicleSimulator
#: fleet vessel, the REMUS 100 torpedo) and the SURFTRAK vertical model, which does not hold
#: an ended world (its run goes on through the plugins).
#: The distance metric reads the truth wires: its summary at the run's end (an event of no
#: entity, kept) shows whether the ended world's truth stood still.
DIST = [{"name": "dist", "plugin": "distance_travelled"}]
HOLDS = {
    "bluerov2_station_keeping": ({"time.end": 3.0, "metrics": DIST}, True),
    "supply_dp_current": ({"time.end": 6.0, "metrics": DIST}, True),
    "torpedo_depth_heading": ({"time.end": 4.0, "metrics": DIST}, True),
    "surftrak_sawtooth": ({"time.end": 1.5}, False),
}


@pytest.mark.parametrize("name", sorted(HOLDS))
def test_a_world_ended_midway_is_held_by_each_motion(name: str) -> None:
    sets, holds = HOLDS[name]
    out = []
    for compiled in (False, True):
        sim = build_simulation(load_scenario(name, sets=sets), replicas=[0, 1, 2])
        sim.compiled = compiled
        sim.step(20)
        _freeze(sim, 1)
        k = sim.clock.k
        held = [b.truth.pos[b.world == 1].copy() for b in sim.blocks]
        res = sim.run()
        for b, pos in zip(sim.blocks, held, strict=True):  # where it ended, after the run
            assert np.array_equal(b.truth.pos[b.world == 1], pos)
        out.append((sim, res))
    (sa, a), (sb, b) = out
    assert b.manifest["worlds"] == a.manifest["worlds"]
    assert b.manifest["worlds"]["ended_tick"] == [a.manifest["ended_tick"], k, a.manifest["ended_tick"]]
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(a.metrics, b.metrics, routes=True, what="metrics")
    ticks = b.manifest["compiled_ticks"]
    if holds:  # the ticks after the end of world 1 ran compiled too
        assert ticks > k + 0.8 * (b.manifest["ended_tick"] - k)
    else:
        assert ticks <= k
