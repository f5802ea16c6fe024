"""Replicas stacked through coupling plugins: contacts and min_separation are replica-aware.

A stacked replica must be bit-identical to the same replica run alone (engine spec §10.5):
its sonar sees only the vehicles of its own replica, with the draws, ids and target order of
its own run, and the separation metric compares it only with its own replica's vehicles.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.batch import worker
from marinesim.batch.plan import make_plan
from marinesim.batch.worker import Task, run_task
from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation, stack_problems
from marinesim.sensors import contacts as contacts_law
from marinesim.sensors.contacts import ContactParams, detect_contacts, draws_per_scan

# dr_auv starts 85 m away at bearing 45° from ins_auv (inside its 120° sonar sector), so the
# sonars report contacts from the first scans; 40 s keeps the runs short
SETS = {
    "time.end": 40,
    "entities.dr_auv.spawn.north": 60.0,
    "entities.dr_auv.spawn.east": 60.0,
}
REPS = [4, 0, 9]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def test_auv_survey_ins_stacks_and_every_replica_equals_its_own_run(monkeypatch: Any) -> None:
    plan = make_plan("auv_survey_ins", replicas=len(REPS), sets=SETS, seed=5)
    assert plan.stack_problems == [] and plan.stackable
    specs = [plan.runs[0].__class__(f"r{r}", 0, r, {}) for r in REPS]

    singles = [run_task(plan.source, Task(1, (s,), False, 1.0))[0] for s in specs]

    def no_fallback(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the stacked simulation fell back to single runs")

    monkeypatch.setattr(worker, "_single", no_fallback)
    stacked = run_task(plan.source, Task(0, tuple(specs), True, 1.0))
    assert len(stacked) == len(REPS)
    for one, st_ in zip(singles, stacked, strict=True):
        assert one.record["status"] == "completed"
        assert set(one.record) == set(st_.record)
        diff = [k for k in one.record if not _same(one.record[k], st_.record[k])]
        assert diff == [], diff
        assert one.units == st_.units
        # the replica's world rows (CPA) are in its own row, named as in its own run
        assert "cpa (ins_auv[0], dr_auv[0])" in st_.record
        assert np.isfinite(st_.record["cpa (ins_auv[0], dr_auv[0])"])
        assert one.log.columns.tolist() == st_.log.columns.tolist()
        for c in one.log.columns:
            assert np.array_equal(one.log[c].to_numpy(), st_.log[c].to_numpy()) or np.array_equal(
                one.log[c].to_numpy(dtype=float), st_.log[c].to_numpy(dtype=float), equal_nan=True
            ), c
    # replicas differ from each other
    assert (
        stacked[0].record["cpa (ins_auv[0], dr_auv[0])"]
        != stacked[1].record["cpa (ins_auv[0], dr_auv[0])"]
    )


def test_stacked_sonar_signals_equal_single_runs_and_see_only_their_replica() -> None:
    sc = load_scenario("auv_survey_ins", sets=SETS)
    assert stack_problems(sc) == []
    stacked = build_simulation(sc, replicas=REPS).run()
    names = [e["name"] for e in stacked.entities]
    for r in REPS:
        one = build_simulation(load_scenario("auv_survey_ins", sets=SETS), replicas=[r]).run()
        rows = [i for i, n in enumerate(names) if n.endswith(f"@{r}")]
        for name, sig in one.signals.items():
            np.testing.assert_array_equal(
                sig.values, stacked.signals[name].values[rows], err_msg=name
            )
        det = np.nansum(one.signals["sonar.detections"].values)
        assert det > 0  # the sonars did report contacts
        rows_m = [m for m in one.metrics if m["plugin"] == "cpa"]
        got = [
            {**m, "entity": m["entity"].rsplit("@", 1)[0]}
            for m in stacked.metrics
            if m["plugin"] == "cpa" and m["entity"].endswith(f"@{r}")
        ]
        assert got == rows_m


def test_stacked_contacts_never_report_another_replica(monkeypatch: Any) -> None:
    """Every scan of the stacked sonars: each detection's target is in the sensor's replica
    and carries the id the target has in that replica's own run (ins_auv 0, dr_auv 1)."""
    calls: list[tuple[Any, Any, Any, Any]] = []
    real_detect = contacts_law.detect_contacts

    def spy(*args: Any, **kw: Any) -> Any:
        det = real_detect(*args, **kw)
        calls.append((args[2], kw.get("sensor_group"), kw.get("target_group"), det))
        return det

    monkeypatch.setattr(contacts_law, "detect_contacts", spy)
    build_simulation(load_scenario("auv_survey_ins", sets=SETS), replicas=REPS).run()
    assert calls
    n_det = 0
    for sids, sg, tg, det in calls:
        assert sg is not None and tg is not None
        assert sorted(set(np.asarray(sg).tolist())) == sorted(REPS)
        real = ~det.false_alarm
        np.testing.assert_array_equal(np.asarray(tg)[det.target[real]], sg[det.row[real]])
        # single-run ids; a vehicle never reports itself
        assert set(det.contact_id[real].tolist()) <= {0, 1}
        assert not np.any(det.contact_id[real] == np.asarray(sids)[det.row[real]])
        n_det += int(real.sum())
    assert n_det > 0


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.integers(0, 3), min_size=1, max_size=6),
    per=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    tree=st.booleans(),
)
def test_grouped_scan_equals_each_group_alone(
    groups: list[int], per: int, seed: int, tree: bool
) -> None:
    """detect_contacts with groups = the scan of every group on its own (same rows' draws)."""
    p = ContactParams(
        max_range=80.0,
        fov_az_deg=300.0,
        fov_el_deg=170.0,
        range_std=1.0,
        az_std_deg=1.0,
        el_std_deg=1.0,
        detection_probability=0.7,
        false_alarm_rate=0.5,
        max_false_alarms=2,
        max_contacts=3,
        spatial_index_threshold=1 if tree else 256,
    )
    rng = np.random.default_rng(seed)
    g = np.repeat(np.asarray(groups, dtype=np.int64), per)  # sensors and targets alike
    n = len(g)
    pos = rng.uniform(-50, 50, (n, 3))
    yaw = rng.uniform(-np.pi, np.pi, n)
    rot = np.zeros((n, 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1] = (
        np.cos(yaw),
        -np.sin(yaw),
        np.sin(yaw),
        np.cos(yaw),
    )
    rot[:, 2, 2] = 1.0
    local = np.zeros(n, dtype=np.int64)  # ids unique within a group only
    for k in np.unique(g):
        local[g == k] = np.arange(np.count_nonzero(g == k))
    nu, nn = draws_per_scan(p)
    u, z = rng.uniform(size=(n, nu)), rng.standard_normal((n, nn))
    ok = np.ones(n, bool)
    both = detect_contacts(pos, rot, local, pos, local, ok, u, z, p, sensor_group=g, target_group=g)
    # never a detection across groups
    real = ~both.false_alarm
    np.testing.assert_array_equal(g[both.row[real]], g[both.target[real]])
    for k in np.unique(g):
        idx = np.flatnonzero(g == k)
        alone = detect_contacts(
            pos[idx], rot[idx], local[idx], pos[idx], local[idx], ok[idx], u[idx], z[idx], p
        )
        mine = np.isin(both.row, idx)
        np.testing.assert_array_equal(idx[alone.row], both.row[mine])
        np.testing.assert_array_equal(alone.contact_id, both.contact_id[mine])
        np.testing.assert_array_equal(alone.pos, both.pos[mine])
        np.testing.assert_array_equal(alone.cov, both.cov[mine])
        np.testing.assert_array_equal(alone.false_alarm, both.false_alarm[mine])
        np.testing.assert_array_equal(alone.overflow, both.overflow[idx])


def test_min_separation_and_contacts_declare_replica_awareness() -> None:
    from marinesim.engine.plugins.metrics import MinSeparation
    from marinesim.engine.plugins.sensors import ContactSensor

    assert MinSeparation.replica_aware and ContactSensor.replica_aware


def test_unstacked_min_separation_keeps_world_rows() -> None:
    res = build_simulation(load_scenario("auv_survey_ins", sets=SETS), replicas=[0]).run()
    cpa = [r for r in res.metrics if r["plugin"] == "cpa" and r["entity"] in ("", None)]
    assert [r["metric"] for r in cpa] == ["cpa (ins_auv[0], dr_auv[0])", "cpa_time"]
    assert cpa[0]["value"] < 86.0  # the vehicles start 85 m apart and close in
