"""Every bundled scenario stacks: replica r of a stacked batch equals replica r run alone.

The world axis (docs/guide/worlds.md): end conditions are evaluated per world, a world that
has ended is frozen while the others go on, lanes are split per world, and world-aware
plugins (contacts, min_separation) compare only the vehicles of one world.  For every bundled
scenario that needs no SITL peer, a batch of stacked replicas gives each replica the runs-table
row and track log of its own run, exactly (the comparison reads every value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from marinesim.batch import worker
from marinesim.batch.plan import RunSpec, make_plan
from marinesim.batch.results import split_replicas
from marinesim.batch.worker import Task, run_task
from marinesim.core.errors import ConfigError
from marinesim.engine.worlds import world_frames
from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation, builtin_names, stack_problems

#: Bundled scenarios that need a SITL peer program (ArduSub SITL decides when they end).
SITL = {"ardusub_sawtooth", "ardusub_trapezoid"}

_LM = "autonomy.survey.params.lawnmower"
#: Short runs; the surveys shrink so that ``all_done`` ends worlds at different ticks.
SETS: dict[str, dict[str, Any]] = {
    "auv_survey_ins": {
        "time.end": 60,
        "end_conditions": ["time", "all_done"],
        f"entities.ins_auv.{_LM}.length": 20.0,
        f"entities.ins_auv.{_LM}.width": 0.0,
        f"entities.dr_auv.{_LM}.length": 20.0,
        f"entities.dr_auv.{_LM}.width": 0.0,
    },
    "bluerov2_station_keeping": {"time.end": 4},
    "bluerov2_thruster_failure": {"time.end": 4},
    "demo_survey": {
        "time.end": 150,
        f"entities.survey.{_LM}.length": 40.0,
        f"entities.survey.{_LM}.width": 40.0,
        f"entities.survey.{_LM}.spacing": 20.0,
    },
    "remus100_survey": {
        "time.end": 60,
        f"entities.remus.{_LM}.length": 40.0,
        f"entities.remus.{_LM}.width": 0.0,
    },
    "supply_dp_current": {"time.end": 5},
    "surftrak_sawtooth": {"time.end": 2},
    "tanker_heading_autopilot": {"time.end": 20},
    "torpedo_depth_heading": {"time.end": 5},
}
REPS = (5, 0, 2)
#: Scenarios whose thruster allocation and 6-DOF wrench use BLAS matrix products
#: (``thrust @ B.T``, ``tau @ B_pinv.T``): numpy calls gemv for one row and gemm for several,
#: which round differently in the last bit, so these agree within 1e-12 relative (engine spec
#: §10.5: a vectorised linear-algebra kernel summing in another order), as they did before
#: the world axis.  Every other scenario is compared bit for bit.
BLAS_ROWS = {"bluerov2_station_keeping", "bluerov2_thruster_failure"}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def test_every_bundled_non_sitl_scenario_has_a_case() -> None:
    assert set(builtin_names()) - SITL == set(SETS)


@pytest.mark.parametrize("name", sorted(SETS))
def test_stacked_replicas_equal_their_own_runs(name: str, monkeypatch: Any) -> None:
    plan = make_plan(name, replicas=max(REPS) + 1, sets=SETS[name], seed=7)
    assert plan.stack_problems == [] and plan.stackable, plan.stack_problems
    specs = [RunSpec(f"r{r}", 0, r, {}) for r in REPS]
    singles = [run_task(plan.source, Task(1, (s,), False, 1.0))[0] for s in specs]

    def no_fallback(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the stacked simulation fell back to single runs")

    monkeypatch.setattr(worker, "_single", no_fallback)
    stacked = run_task(plan.source, Task(0, tuple(specs), True, 1.0))
    assert len(stacked) == len(REPS)
    for one, st in zip(singles, stacked, strict=True):
        assert one.record["status"] == "completed", one.record["error"]
        assert list(one.record) == list(st.record)
        diff = [k for k in one.record if not _same(one.record[k], st.record[k])]
        assert diff == [], diff
        assert one.units == st.units
        assert one.log.columns.tolist() == st.log.columns.tolist()
        assert one.log.dtypes.tolist() == st.log.dtypes.tolist()
        assert len(one.log) == len(st.log) > 0
        if name not in BLAS_ROWS:
            assert one.log.equals(st.log)
            continue
        for c in one.log.columns:
            x, y = one.log[c].to_numpy(), st.log[c].to_numpy()
            if x.dtype == object:
                assert np.array_equal(x, y), c
            else:
                scale = float(np.nanmax(np.abs(x))) if np.isfinite(x).any() else 0.0
                assert np.allclose(x, y, rtol=1e-12, atol=1e-12 * scale, equal_nan=True), c
    if name in ("demo_survey", "auv_survey_ins"):  # worlds ended at different ticks: frozen
        ends = {o.record["t_end"] for o in singles}
        assert len(ends) > 1, ends
        assert {o.record["ended_by"] for o in singles} == {"all_done"}


def test_world_ending_early_is_frozen_and_the_run_ends_with_the_last_world() -> None:
    sc = load_scenario("demo_survey", sets=SETS["demo_survey"])
    sim = build_simulation(sc, replicas=[0, 1, 2, 3])
    assert sim.n_worlds == 4
    res = sim.run()
    w = res.manifest["worlds"]
    assert w["replicas"] == [0, 1, 2, 3]
    ticks = np.asarray(w["ended_tick"])
    assert set(w["ended_by"]) == {"all_done"}
    assert ticks.min() < ticks.max() == res.manifest["ended_tick"]
    # a frozen world's truth stays where its own run ended
    first = int(np.argmin(ticks))
    pos = res.signals["truth.pos"].values  # (rows, frames, 3)
    rows = [i for i, e in enumerate(res.entities) if e["name"].endswith(f"@{first}")]
    t = np.asarray(res.t)
    k_end = t[0] + ticks[first] * sim.clock.dt
    after = t >= k_end - 1e-9
    assert after.sum() > 1
    held = pos[rows][:, after, :]
    assert np.array_equal(held, np.broadcast_to(held[:, :1, :], held.shape))
    # its log stops: every signal of its rows repeats the frame of its end
    for name, sig in res.signals.items():
        v = sig.values[rows][:, after]
        assert np.array_equal(v, np.broadcast_to(v[:, :1], v.shape), equal_nan=True), name
    # the other worlds went on in the compiled tick (the ended one ran on there, unseen)
    assert res.manifest["compiled_ticks"] > ticks.min()
    # no event of that world after its end
    names = {res.entities[i]["name"] for i in rows}
    assert all(e.t <= k_end + 1e-9 for e in res.events if e.entity in names)
    # its frames are those of its own run
    alone = build_simulation(sc, replicas=[first]).run()
    own = world_frames(t, int(ticks[first]), res.manifest["log_every_ticks"], sim.clock.dt)
    assert np.array_equal(t[own], np.asarray(alone.t))


def test_lanes_are_split_per_world() -> None:
    sc = load_scenario("demo_survey", sets=SETS["demo_survey"])
    one = build_simulation(sc, replicas=[0])
    two = build_simulation(sc, replicas=[0, 1])
    one.step(1)
    two.step(1)
    slot1 = next(s for s in one.slots if s.plugin.name == "survey")
    slot2 = next(s for s in two.slots if s.plugin.name == "survey")
    p1, p2 = slot1.state["points"], slot2.state["points"]
    assert p2.shape[0] == 2 * p1.shape[0] == 6
    assert np.array_equal(p2[:3], p1) and np.array_equal(p2[3:], p1)
    assert not np.array_equal(p1[0], p1[1])  # the lanes are shared within a world


def test_min_separation_summary_of_a_world_is_taken_at_its_end() -> None:
    sc = load_scenario("auv_survey_ins", sets={**SETS["auv_survey_ins"], "seed": 7})
    res = build_simulation(sc, replicas=list(REPS)).run()
    ticks = res.manifest["worlds"]["ended_tick"]
    assert len(set(ticks)) > 1
    per = split_replicas(res.metrics, REPS)
    for r in REPS:
        alone = build_simulation(sc, replicas=[r]).run()
        assert per[r] == alone.metrics


def test_a_metric_end_condition_still_couples_worlds() -> None:
    sc = load_scenario(
        "auv_survey_ins",
        sets={"replicas": 2, "end_conditions": ["time", {"metric": "cpa", "op": "<", "value": 5}]},
    )
    assert stack_problems(sc) == [
        "end condition 'metric cpa' reads one value for the whole simulation"
    ]
    with pytest.raises(ConfigError, match="2 replicas cannot share one simulation"):
        build_simulation(sc)


@pytest.mark.parametrize("cond", ["all_inactive", "one_team"])
def test_all_inactive_and_one_team_end_one_world_only(cond: str) -> None:
    sc = load_scenario(
        "auv_survey_ins",
        sets={"time.end": 4, "end_conditions": ["time", cond], "entities.dr_auv.team": 2},
    )
    sim = build_simulation(sc, replicas=[3, 1, 4])
    sim.step(2)
    assert not sim.worlds.frozen.any()
    for blk in sim.blocks:  # world 1 (replica 1) loses its dr_auv, or every vehicle
        if cond == "all_inactive" or blk.name == "dr_auv":
            blk.active = blk.active & (blk.world != 1)
    assert sim.step(1) == 1  # the other worlds go on
    assert sim.worlds.frozen.tolist() == [False, True, False]
    assert sim.worlds.ended_by == [None, cond, None]
    k = int(sim.worlds.ended_tick[1])
    pos = sim.block("ins_auv").truth.pos[1].copy()
    res = sim.run()
    assert res.manifest["worlds"]["ended_by"] == ["time", cond, "time"]
    assert res.manifest["worlds"]["ended_tick"][1] == k < res.manifest["ended_tick"]
    assert np.array_equal(sim.block("ins_auv").truth.pos[1], pos)  # frozen where it ended
