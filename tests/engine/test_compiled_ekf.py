"""``auv_survey_ins`` in the generated tick: the INS/EKF, its sensors, contacts and nav metrics.

Two ``usm`` blocks, each with IMU, AHRS, depth, DVL (and GPS on one) feeding ``nav_ekf``
through wires, a ``contacts`` sonar that scans the other block, the PID and waypoints steering
by the EKF's belief, and the world metrics ``nav_error``, ``min_separation``,
``distance_travelled``, ``time_in_box`` (:mod:`marinesim.engine.plugins.ekf_laws`,
``contact_laws``, ``belief_laws``, ``metric_laws``).  Run past the scripted surfacing (GPS
fixes from 300 s), the compiled route must give the plugins' run: every signal, event and
count, the metric rows, the filter's state and the random streams' positions — bit for bit
where numpy is libm, to rounding elsewhere (:func:`~marinesim.testing.assert_runs_identical`).
One plugin set (one compile per machine, cached on disk).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

END = 400.0  # s: past the surfacing (300–362 s), where the GPS fixes come


def _run(compiled: bool) -> tuple[Any, Any]:
    sim = load_simulation("auv_survey_ins", sets={"time.end": END})
    sim.compiled = compiled
    return sim, sim.run()


def _slot(sim: Any, block: str, name: str) -> Any:
    return next(s for s in sim.slots if s.block is not None and s.block.name == block
                and s.plugin.name == name)  # fmt: skip


@pytest.fixture(scope="module")
def runs() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    return _run(False), _run(True)


def test_auv_survey_ins_runs_compiled(runs: Any) -> None:
    (_sp, rp), (_sc, rc) = runs
    assert rp.manifest["compiled_ticks"] == 0
    assert rc.manifest["compiled_why_not"] is None
    # the plugins run the first ticks, those of the 31 scripted depth commands and those where
    # a sensor's pre-drawn random block is used up (the sonar's 192 normals per scan: every
    # 21 s per vehicle): 126 of 2000 on the machine this was written on
    assert rc.manifest["compiled_ticks"] >= 0.9 * rc.manifest["ticks"]


def test_auv_survey_ins_compiled_is_the_plugins_run(runs: Any) -> None:
    (sp, rp), (sc, rc) = runs
    assert_runs_identical(rp, rc, routes=True)
    rows_p, rows_c = rp.metrics, rc.metrics
    assert [(r["entity"], r["metric"]) for r in rows_p] == [(r["entity"], r["metric"]) for r in rows_c]
    assert_values_identical(
        np.array([r["value"] for r in rows_p]), np.array([r["value"] for r in rows_c]),
        routes=True, what="metric rows",
    )
    # the INS AUV's filter took GPS fixes at the surface (the compiled ticks among them), the
    # dead-reckoning AUV's none; both estimates stay within metres of the truth
    gps_ticks = np.flatnonzero(np.asarray(rc["gps.fix"])[0, :, 0] == 1.0)
    assert gps_ticks.size > 20 and rc.manifest["compiled_ticks"] > 0
    assert "gps" in _slot(sc, "ins_auv", "nav").ctx.state["ekf"].nis
    assert "gps" not in _slot(sc, "dr_auv", "nav").ctx.state["ekf"].nis
    assert np.nanmax(np.asarray(rc["nav_error.error"])) < 5.0
    for block in ("ins_auv", "dr_auv"):
        ep, ec = (_slot(sim, block, "nav").ctx.state["ekf"] for sim in (sp, sc))
        for field in ("x", "P", "rot"):
            assert_values_identical(getattr(ep, field), getattr(ec, field), routes=True, what=field)
        assert ep.t == ec.t
        for kind in ("depth", "gps", "dvl"):
            assert np.array_equal(ep.rejected[kind], ec.rejected[kind])
        assert sorted(ep.nis) == sorted(ec.nis)
        for name in ("imu", "ahrs", "depth", "dvl", "sonar", "nav"):
            if name == "gps" and block == "dr_auv":
                continue
            a, b = _slot(sp, block, name), _slot(sc, block, name)
            for dist in ("normal", "uniform"):
                if a.rng is not None and dist in a.rng._buf:
                    assert a.rng.buffered(dist)[1] == b.rng.buffered(dist)[1], (block, name, dist)
        bp, bc = (next(b for b in sim.blocks if b.name == block).belief for sim in (sp, sc))
        assert_values_identical(bp.pos, bc.pos, routes=True, what="belief")
    for topic in ("imu/data", "gps/fix", "dvl/velocity", "contacts", "nav/state"):
        for counts in ("published", "delivered", "unheard"):
            assert getattr(sp.bus, counts).get(topic) == getattr(sc.bus, counts).get(topic), (
                topic, counts)
    assert sc.bus._seq == sp.bus._seq
    # the sonar saw the other AUV, and the waypoint events of both blocks come in time order
    assert np.nansum(np.asarray(rc["sonar.detections"])) > 0
    times = [e.t for e in rc.events]
    assert times == sorted(times)


def test_stacked_replicas_scan_their_own_replica_in_the_tick() -> None:
    # two replicas as rows of one simulation (marinesim batch's stacking): each sonar sees its
    # own replica only, with that run's target order and ids, compiled as on the plugins
    from marinesim.scenario import load_scenario
    from marinesim.scenario.build import build_simulation

    sets = {"time.end": 40, "entities.dr_auv.spawn.north": 60.0,
            "entities.dr_auv.spawn.east": 60.0}  # fmt: skip  (in sonar view from the start)
    out = []
    for compiled in (False, True):
        sim = build_simulation(load_scenario("auv_survey_ins", sets=sets), replicas=[3, 0])
        sim.compiled = compiled
        out.append(sim.run())
    assert out[1].manifest["compiled_ticks"] >= 190 and out[0].manifest["compiled_ticks"] == 0
    assert_runs_identical(out[0], out[1], routes=True)
    assert np.nansum(np.asarray(out[1]["sonar.detections"])) > 0


def test_a_signal_selection_keeps_the_sensors_and_the_filter_compiled(runs: Any) -> None:
    # the batch's selection (marinesim batch records only these): the sensors, the sonar and
    # the filter's declarations start from the last values of signals the recorder does not
    # record, so the run stays compiled and what it records is the full run's, bit for bit
    from marinesim.batch.results import LOG_SIGNALS

    _sc, rc = runs[1]
    sim = load_simulation("auv_survey_ins", sets={"time.end": END, "log_columns": list(LOG_SIGNALS)})
    sim.compiled = True
    rs = sim.run()
    assert rs.manifest["compiled_ticks"] == rc.manifest["compiled_ticks"] > 0.9 * rs.manifest["ticks"]
    assert "imu.accel" not in rs.signals and "sonar.detections" not in rs.signals
    assert {"truth.pos", "belief.pos"} <= set(rs.signals) and len(rs.signals) < len(rc.signals)
    for name, sig in rs.signals.items():
        assert np.array_equal(np.asarray(sig.values), np.asarray(rc[name]), equal_nan=True), name
    assert [(r["entity"], r["metric"], r["value"]) for r in rs.metrics] == [
        (r["entity"], r["metric"], r["value"]) for r in rc.metrics]  # fmt: skip


def test_a_stacked_world_fuses_its_messages_as_alone() -> None:
    # At the surfacing the GPS fixes of a tick come for some rows only.  The filter fuses the
    # messages of one stamp in a fixed order (attitude, IMU, depth, GPS, DVL), not in the bus's
    # delivery order, which depends on the other rows (the first sender, the topic's message
    # count): a world's estimate is the same in any stack of worlds.  Before, replicas 16, 19
    # and 23 of these two stacks differed from t = 310 s (the order depth, DVL, GPS in one
    # stack and GPS, depth, DVL in the other).
    from marinesim.scenario import load_scenario
    from marinesim.scenario.build import build_simulation

    def rows(reps: range, compiled: bool) -> dict[str, dict[str, np.ndarray]]:
        sim = build_simulation(load_scenario("auv_survey_ins", sets={"time.end": 312.0}),
                               replicas=list(reps))  # fmt: skip
        sim.compiled = compiled
        res = sim.run()
        assert (res.manifest["compiled_ticks"] > 0) is compiled
        names = [e["name"] for e in res.entities]
        return {n: {k: np.asarray(v.values)[i] for k, v in res.signals.items()}
                for i, n in enumerate(names)}  # fmt: skip

    a, b = rows(range(0, 25), False), rows(range(16, 32), False)
    shared = sorted(set(a) & set(b))
    assert len(shared) == 18
    for name in shared:
        for sig in a[name]:
            assert np.array_equal(a[name][sig], b[name][sig], equal_nan=True), (name, sig)
    # the GPS fixes reached some rows of the stacks only at the first surfacing fixes
    fixes = np.array([a[f"ins_auv[0]@{r}"]["gps.fix"][1550, 0] for r in range(25)])
    assert 0 < np.nansum(fixes) < 25
    c = rows(range(16, 32), True)
    for name in shared:
        for sig in b[name]:
            assert_values_identical(b[name][sig], c[name][sig], routes=True, what=(name, sig))


def test_a_world_without_an_imu_message_predicts_as_alone() -> None:
    # An IMU that drops samples: at a tick where no row of world r delivered but a row of
    # another world did, the stack has an IMU message and world r alone has none.  The filter
    # predicts to an aiding measurement's time before it updates (the specific force held),
    # so world r's rows predict, then update, in both: before, the stacked rows predicted
    # before the depth/DVL updates and the lone rows after them, and replica 1 differed from
    # t = 12 s on.
    from marinesim.scenario import load_scenario
    from marinesim.scenario.build import build_simulation

    sets = {"time.end": 40.0, "entities.0.sensors.0.params.dropout_probability": 0.3,
            "entities.0.sensors.1.params.dropout_probability": 0.3}  # (IMU, AHRS)  # fmt: skip

    def run(reps: list[int], compiled: bool) -> Any:
        sim = build_simulation(load_scenario("auv_survey_ins", sets=sets), replicas=reps)
        sim.compiled = compiled
        res = sim.run()
        assert (res.manifest["compiled_ticks"] > 0) is compiled
        return res

    for compiled in (False, True):
        stack = run([0, 1, 2, 3], compiled)
        imu = stack["imu.accel"][:4, 1:, 0]  # the INS vehicle of each world (NaN: dropped)
        assert 0 < np.isnan(imu).sum() < imu.size
        for r in (0, 1, 3):
            alone = run([r], compiled)
            for key in ("belief.pos", "nav.cep", "truth.pos"):
                got = np.asarray(stack[key])[[r, 4 + r]]  # (block ins_auv, block dr_auv)
                assert np.array_equal(got, np.asarray(alone[key]), equal_nan=True), (r, key)
