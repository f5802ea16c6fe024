"""World metrics in the generated tick against the plugins' ``metric`` phase.

``distance_travelled``, ``min_separation`` and ``time_in_box`` declare their laws
(:mod:`marinesim.engine.plugins.metric_laws`), so a scenario with them no longer leaves the
compiled route.  Every recorded signal, the events, the bus and call counts, the metric rows
and the end-condition values must be bit-identical whether ``demo_survey`` with the three
metrics runs compiled or through the plugins.  Every compiled test here uses the same plugin
set (one compile per machine, cached on disk).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled.route import plan
from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation, load_simulation
from marinesim.testing import assert_runs_identical

numba = pytest.importorskip("numba")

METRICS = [
    {"name": "dist", "plugin": "distance_travelled"},
    {"name": "cpa", "plugin": "min_separation"},
    {
        "name": "box",
        "plugin": "time_in_box",
        "params": {"north_min": -50.0, "north_max": 150.0, "east_min": -20.0, "east_max": 200.0},
    },
]


def _sim(compiled: bool, **sets: Any):  # noqa: ANN202
    sim = load_simulation("demo_survey", sets={"metrics": METRICS, **sets})
    sim.compiled = compiled
    return sim


def _both(**sets: Any):  # noqa: ANN202
    out = []
    for compiled in (False, True):
        sim = _sim(compiled, **sets)
        out.append((sim, sim.run()))
    return out


def _same_metrics(sa: Any, a: Any, sb: Any, b: Any) -> None:
    assert a.metrics == b.metrics  # every summary row, values compared exactly
    assert sa._metric_values == sb._metric_values
    for s1, s2 in zip(sa.world_slots, sb.world_slots, strict=True):
        for key, v in s1.state.items():
            w = s2.state[key]
            if isinstance(v, dict):
                assert v.keys() == w.keys()
                assert all(np.asarray(v[k]).tobytes() == np.asarray(w[k]).tobytes() for k in v)
            elif isinstance(v, np.ndarray):
                assert v.tobytes() == w.tobytes(), key
            elif key != "summary":
                assert v == w, key


def test_survey_with_three_metrics_matches_the_plugins() -> None:
    # 130 s: lane switches and the gust at 120 s are the plugins' ticks between compiled calls
    (sa, a), (sb, b) = _both(**{"time.end": 130.0})
    assert_runs_identical(a, b)
    _same_metrics(sa, a, sb, b)
    assert a.manifest["compiled_ticks"] == 0
    assert 650 - 12 <= b.manifest["compiled_ticks"] < 650
    rows = {(r["plugin"], r["entity"], r["metric"]): r["value"] for r in b.metrics}
    # the values read the logs: distance = the sum of the steps of the logged truth track
    pos = b["truth.pos"]
    steps = np.linalg.norm(np.diff(pos, axis=1), axis=2).sum(axis=1)
    for i in range(3):
        got = rows[("dist", f"survey[{i}]", "distance_travelled")]
        assert got == pytest.approx(steps[i], rel=1e-12)
        assert got == b["dist.distance"][i, -1, 0]
    # the closest approach is the smallest separation logged
    (cpa,) = [v for (_p, _e, m), v in rows.items() if m.startswith("cpa (survey[")]
    assert cpa == np.nanmin(b["cpa.separation"])
    assert sb._metric_values["cpa"] == np.nanmin(b["cpa.separation"])
    inside = b["box.inside"][:, 1:, 0]  # (frame 0 comes before the first metric call)
    assert set(np.unique(inside)) <= {0.0, 1.0} and 0 < inside.sum() < inside.size


def test_a_metric_end_condition_ends_the_run_at_the_same_tick() -> None:
    cond = {"metric": "cpa", "op": "<", "value": 95.0}
    (sa, a), (sb, b) = _both(**{"time.end": 300.0, "end_conditions": ["time", cond]})
    assert_runs_identical(a, b)
    _same_metrics(sa, a, sb, b)
    assert sa.ended_tick == sb.ended_tick and b.manifest["ended_by"] == a.manifest["ended_by"]
    assert "cpa" in str(b.manifest["ended_by"])
    sep = np.nanmin(b["cpa.separation"][..., 0], axis=0)  # the value at each frame
    assert sep[-1] < 95.0 <= sep[:-1].min()  # it ended on the first frame below
    # the tick at which it came true ran compiled too (the call ended after it, STOP_AFTER):
    # as many of its ticks were the plugins' as of the same run without the condition
    plain = _sim(True, **{"time.end": sb.ended_tick * sb.clock.dt}).run().manifest
    assert plain["ended_tick"] == sb.ended_tick
    assert sb.ended_tick - b.manifest["compiled_ticks"] == plain["ended_tick"] - plain["compiled_ticks"]


def test_stacked_replicas_keep_one_separation_per_world() -> None:
    sc = load_scenario(
        "demo_survey",
        sets={"metrics": METRICS, "time.end": 40.0, "end_conditions": ["time"], "seed": 3},
    )
    out = []
    for compiled in (False, True):
        sim = build_simulation(sc, replicas=[5, 0, 2])
        sim.compiled = compiled
        out.append((sim, sim.run()))
    (sa, a), (sb, b) = out
    assert_runs_identical(a, b)
    _same_metrics(sa, a, sb, b)
    assert b.manifest["compiled_ticks"] > 150
    assert len([r for r in b.metrics if r["metric"] == "cpa_time"]) == 3  # one per world


@pytest.mark.parametrize(
    ("metric", "why"),
    [
        ({"name": "e", "plugin": "energy"}, "world metric 'e' runs only tick by tick"),
        (
            {"name": "d", "plugin": "distance_travelled", "rate_hz": 1.0},
            "world metric 'd' runs only tick by tick here: a metric at its own rate",
        ),
    ],
)
def test_metrics_that_stay_python_say_why(metric: dict, why: str) -> None:
    sim = load_simulation("demo_survey", sets={"metrics": [*METRICS, metric], "time.end": 2.0})
    sim.compiled = True
    assert why in (plan(sim)[0] or "")
    with pytest.raises(ConfigError, match="the compiled tick does not apply"):
        sim.run()
