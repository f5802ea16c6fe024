"""Plans (unknown parameters, replicas) and replicas stacked as extra rows (engine spec §10.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.batch.plan import declared_unit, make_plan
from marinesim.core.errors import ConfigError
from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation, stack_problems

SMALL = Path(__file__).resolve().parents[1] / "data" / "batch" / "mc_small.yaml"


def test_stacked_replicas_equal_single_runs_bit_for_bit() -> None:
    """Spawn spread, step formation, per-member offsets, a member's script event, sensors and
    the EKF: every signal of replica r inside a stack equals the single run of replica r."""
    sc = load_scenario(SMALL, sets={"time.end": 8})
    assert stack_problems(sc) == []
    reps = [3, 0, 11]
    stacked = build_simulation(sc, replicas=reps).run()
    assert [e["name"] for e in stacked.entities][:3] == ["auv[0]@3", "auv[1]@3", "auv[0]@0"]
    for r in reps:
        one = build_simulation(sc, replicas=[r]).run()
        rows = [i for i, e in enumerate(stacked.entities) if e["name"].endswith(f"@{r}")]
        for name, sig in one.signals.items():
            np.testing.assert_array_equal(
                sig.values, stacked.signals[name].values[rows], err_msg=name
            )
    # replicas differ from each other (the keys start with the replica index)
    a = build_simulation(sc, replicas=[0]).run()
    b = build_simulation(sc, replicas=[1]).run()
    assert not np.array_equal(a.signals["truth.pos"].values, b.signals["truth.pos"].values)


def test_scenario_replicas_key_stacks_and_coupled_scenarios_are_refused() -> None:
    sim = build_simulation(load_scenario(SMALL, sets={"replicas": 3}))
    assert sim.blocks[0].n == 6
    # contacts and min_separation are world-aware (tests/batch/test_stack_coupled.py) and
    # all_done is evaluated per world (tests/batch/test_worlds.py); a metric end condition
    # reads one value for the whole simulation and still couples the replicas
    assert (
        stack_problems(
            load_scenario("auv_survey_ins", sets={"end_conditions": ["time", "all_done"]})
        )
        == []
    )
    sc = load_scenario(
        "auv_survey_ins",
        sets={"replicas": 2, "end_conditions": ["time", {"metric": "cpa", "op": "<", "value": 1}]},
    )
    problems = stack_problems(sc)
    assert problems == ["end condition 'metric cpa' reads one value for the whole simulation"]
    with pytest.raises(
        ConfigError, match="replicas: 2 replicas cannot share one simulation.*marinesim batch"
    ):
        build_simulation(sc)


def test_replicas_zero_is_rejected() -> None:
    with pytest.raises(ConfigError, match="replicas"):
        load_scenario(SMALL, sets={"replicas": 0})
    with pytest.raises(ConfigError, match="replicas must be an integer >= 1, got 0"):
        make_plan(SMALL, replicas=0)
    with pytest.raises(ConfigError, match="replicas must be an integer >= 1, got -3"):
        make_plan(SMALL, replicas=-3)


def test_unknown_sweep_parameters_get_did_you_mean() -> None:
    with pytest.raises(
        ConfigError, match="unknown sweep parameter 'entities.avu.spawn.north'.*did you mean 'auv'"
    ):
        make_plan(SMALL, sweep={"parameters": {"entities.avu.spawn.north": [1.0]}})
    with pytest.raises(
        ConfigError, match="unknown sweep parameter .*survey.params.sped.*did you mean 'speed'"
    ):
        make_plan(SMALL, sweep={"parameters": {"entities.auv.autonomy.survey.params.sped": [1.0]}})
    with pytest.raises(
        ConfigError, match="unknown sweep parameter 'entities.auv.spawn.nort'.*did you mean 'north'"
    ):
        make_plan(SMALL, sweep={"parameters": {"entities.auv.spawn.nort": [1.0]}})
    with pytest.raises(ConfigError, match="the sweep is empty"):
        make_plan(SMALL, sweep={"parameters": {}})


def test_plan_runs_and_declared_units() -> None:
    sweep = {
        "parameters": {
            "entities.auv.autonomy.survey.params.speed": {"values": [2.0, 4.0], "unit": "knot"}
        }
    }
    plan = make_plan(SMALL, replicas=3, sweep=sweep)
    assert [r.run_id for r in plan.runs][:4] == [
        "p0000r00000",
        "p0000r00001",
        "p0000r00002",
        "p0001r00000",
    ]
    assert plan.points[1]["entities.auv.autonomy.survey.params.speed"] == pytest.approx(
        4 * 1852 / 3600
    )
    assert plan.source.seed == 7 and plan.stackable
    sc = load_scenario(SMALL)
    assert declared_unit(sc, "entities.auv.sensors.dvl.params.noise_std") == "m/s"
    assert declared_unit(sc, "entities.auv.spawn.heading_deg") == "deg"
    assert declared_unit(sc, "time.end") == "s"
    assert make_plan(SMALL, seed=99).fingerprint() != plan.fingerprint()


def test_sweep_block_in_the_scenario_is_used() -> None:
    sweep = {
        "design": "random",
        "samples": 4,
        "parameters": {
            "entities.auv.spawn.north": {
                "distribution": "uniform",
                "low": 1,
                "high": 2,
                "unit": "km",
            }
        },
    }
    plan = make_plan(SMALL, replicas=2, sets={"sweep": sweep})
    assert len(plan.runs) == 8 and plan.sweep is not None
    north = [p["entities.auv.spawn.north"] for p in plan.points]
    assert all(1000.0 <= v < 2000.0 for v in north)  # km converted to the declared m
    # a --sweep argument replaces the scenario's block
    other = make_plan(
        SMALL, replicas=1, sets={"sweep": sweep}, sweep={"parameters": {"time.end": [3, 4]}}
    )
    assert other.points == [{"time.end": 3}, {"time.end": 4}]
