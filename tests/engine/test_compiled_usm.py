"""The uSimMarine survey block through the generated tick against the plugins' ticks.

``usm``, ``heading_speed_depth_pid``, ``waypoints`` and ``event_script`` declare their laws
(:mod:`marinesim.engine.plugins.usm_laws`); every recorded signal, the events, the bus and
call counts and the plugins' end state must be bit-identical whether ``demo_survey`` runs
compiled or through the plugins.  A waypoint reached (its event, the next lane) and a
script event are the plugins' ticks.  Every test here uses the same plugin set (one compile
per machine, cached on disk).  The ``waypoints`` law's second pass, which notes the rows
that reached a waypoint (:func:`~marinesim.engine.plugins.usm_laws.waypoint_notes`), is
also checked on its own, interpreted and compiled.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled.law import STOP_AFTER
from marinesim.engine.plugins.usm_laws import waypoint_notes
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

#: Three short legs each; the vehicles finish at different ticks and keep running (stopped).
SHORT_LEGS = {
    "entities.0.autonomy.0.params": {
        "points_ne": [[-10.0, 0.0], [0.0, 15.0], [10.0, 0.0]],
        "member_offset_ne": [[0.0, 0.0], [0.0, 110.0], [0.0, 220.0]],
        "speed": 2.0, "depth": 2.0, "capture_radius": 4.0, "slip_radius": 8.0, "lead": 5.0,
    },
    "end_conditions": ["time"],
}  # fmt: skip


def _sim(compiled: bool | None, end: float, **sets: object):  # noqa: ANN202
    sim = load_simulation("demo_survey", sets={"time.end": end, **sets})
    sim.compiled = compiled
    return sim


def _run(compiled: bool | None, end: float, **sets: object):  # noqa: ANN202
    return _sim(compiled, end, **sets).run()


def _end_state(sim) -> list:  # noqa: ANN001
    """What the plugins and the engine hold after a run (arrays copied)."""
    blk = sim.blocks[0]
    tr = blk.truth
    out: list = [np.array(a) for a in (tr.pos, tr.quat, tr.vel, tr.ang_vel, tr.accel)] + [tr.t]
    by = {s.plugin.name: s.ctx.state for s in sim.slots}
    ust = by["usm"]["usm"]
    for name, v in sorted(vars(ust).items()):
        # (act_*: the model's actuator cache, keyed by the actuators' bits; the compiled
        # route leaves it as it was, still valid for its keys)
        if isinstance(v, np.ndarray) and not name.startswith("act_"):
            out.append((name, np.array(v)))
    pid = by["pid"]
    out += [np.array(pid["pid"].integral), np.array(pid["pid"].prev_error), pid["t_prev"]]
    out += [np.array(pid["desired"])]
    wpt = by["survey"]["wpt"]
    out += [np.array(v) for v in vars(wpt).values()]
    out += [np.array(by["survey"]["last_heading"]), by["script"]["next"]]
    out += [sorted(sim.bus._seq.items()), sim.clock.k]
    rec = sim._recorder
    out += [rec._ticks, rec.frames, {k: np.array(v) for k, v in rec.current.items()}]
    return out


def test_survey_with_a_gust_and_a_lane_switch_matches() -> None:
    a, b = _run(False, 130.0), _run(True, 130.0)
    assert_runs_identical(a, b, routes=True)
    kinds = [e.kind for e in a.events]
    assert "script" in kinds and "waypoint" in kinds  # both were the plugins' ticks
    assert a.manifest["compiled_ticks"] == 0
    assert 650 - 12 <= b.manifest["compiled_ticks"] < 650
    # the gust at 120 s moved the vehicles east: the drift log shows it
    drift = b["usm.drift"]
    t = b.t
    assert np.all(
        drift[:, t > 121.0, 0] - drift[:, (t > 118.0) & (t < 119.9), 0].mean(axis=1)[:, None] > 0.3
    )


def test_vehicles_finishing_mid_call_match_and_stop() -> None:
    sa = _sim(False, 60.0, **SHORT_LEGS)
    sb = _sim(True, 60.0, **SHORT_LEGS)
    a, b = sa.run(), sb.run()
    assert_runs_identical(a, b, routes=True)
    done = b["survey.done"][:, :, 0]
    finished = [int(np.argmax(d > 0)) for d in done]
    assert all(d[-1] == 1.0 for d in done) and len(set(finished)) > 1  # at different ticks
    assert b.manifest["compiled_ticks"] > 270  # the stopped vehicles stay compiled
    speed = b["pid.desired_speed"][:, -1, 0]
    np.testing.assert_array_equal(speed, 0.0)  # end_action: stop
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")


@pytest.mark.parametrize(
    "sets",
    [
        {"entities.0.autonomy.0.rate_hz": 1.0, "time.substeps": 2},
        {"time.dt": 0.1, "time.start": 7.3, "entities.0.spawn.heading_deg": 270.0},
        {"entities.0.count": 2, "environment.current": {"model": "uniform", "speed": 0.3, "direction_deg": 45.0}},
        {"entities.0.motion.params": {"turn_rate": 50, "max_rudder_degs_per_sec": 40,
                                      "rotate_speed": 0.5}},
    ],
)  # fmt: skip
def test_other_rates_currents_and_params_match(sets: dict) -> None:
    a, b = _run(False, 40.0, **sets), _run(True, 40.0, **sets)
    assert b.manifest["compiled_ticks"] > 0.8 * (len(a.t) - 1)
    assert_runs_identical(a, b, routes=True)


def test_end_state_matches_after_a_paused_run() -> None:
    out = []
    for compiled in (False, True):
        sim = _sim(compiled, 125.3)
        sim.run()
        out.append(_end_state(sim))
    assert_values_identical(out[0], out[1], routes=True, what="end state")


def test_compiled_by_default_and_same_seed_same_bytes() -> None:
    a, b = _run(None, 30.0), _run(None, 30.0)
    assert a.manifest["compiled_ticks"] > 140
    assert_runs_identical(a, b)


@pytest.mark.parametrize(
    ("sets", "why"),
    [
        ({"entities.0.motion.plugin": "usm_v22"}, "variant 'usm_v22'"),
        ({"entities.0.motion.params": {"dual_state": True}}, "dual_state"),
        ({"entities.0.motion.params": {"compat": "moos"}}, "compat='moos'"),
    ],
)
def test_compiled_true_says_why_not(sets: dict, why: str) -> None:
    sim = _sim(True, 2.0, **sets)
    with pytest.raises(ConfigError, match=f"compiled tick does not apply: plugin .* {why}"):
        sim.run()


def test_a_non_finite_pose_is_handed_back_and_ends_the_run_as_the_plugins_do() -> None:
    from marinesim.models.usm.state import _evolve

    def run(compiled: bool):  # noqa: ANN202
        sim = _sim(compiled, 20.0)
        sim.step(3)
        st = next(s for s in sim.slots if s.plugin.name == "usm").ctx.state
        x = st["usm"].x.copy()
        x[1] = np.nan
        st["usm"] = _evolve(st["usm"], {"x": x})
        sim.flush()
        before = sim._span.ticks if sim._span else 0  # step() runs compiled ticks too
        return sim.run(), before

    (a, _), (b, before) = run(False), run(True)
    assert a.status == b.status == "diverged"
    assert b.manifest["compiled_ticks"] == before  # none after the non-finite pose
    assert_runs_identical(a, b, routes=True)


def test_level_quaternion_is_the_euler_law_at_roll_zero_bit_for_bit() -> None:
    # the usm law's quaternion at roll 0 (cos 0, sin 0 written in) against the frames law,
    # as plain functions (no compile): pitch and yaw over their ranges, signed zeros, the
    # wrap of the heading
    from marinesim.core.frames import quat_from_euler_c
    from marinesim.engine.plugins.usm_laws import level_quat

    rng = np.random.default_rng(7)
    pitch = [0.0, -0.0, 1e-300, -0.5, 0.5, *rng.uniform(-1.6, 1.6, 300)]
    yaw = [0.0, -0.0, np.pi, -np.pi, 2 * np.pi, 7.0, *rng.uniform(-7.0, 7.0, 300)]
    for p, y in zip(pitch, yaw[: len(pitch)], strict=False):
        a = np.array(level_quat(float(p), float(y)))
        b = np.array(quat_from_euler_c(0.0, float(p), float(y)))
        assert a.tobytes() == b.tobytes(), (p, y, a, b)


def test_deg360_is_angle360_bit_for_bit_interpreted_and_compiled() -> None:
    # the wrap without the % (waypoint bearing, PID heading error, truth heading) against the
    # frames law: both sides of every boundary, signed zeros, tiny angles, non-finite ones
    from marinesim.control.guidance import deg360
    from marinesim.core.frames import angle360_c

    tiny = np.nextafter(0.0, 1.0)
    edge = [0.0, -0.0, tiny, -tiny, 1e-300, -1e-300, -1e-14, -5e-14, 1e-14]
    for b in (360.0, -360.0, 180.0, -180.0, 720.0, -720.0):
        edge += [b, np.nextafter(b, 0.0), np.nextafter(b, 1e9), np.nextafter(b, -1e9)]
    edge += [np.nan, np.inf, -np.inf, 1e300, -1e300]
    rng = np.random.default_rng(3)
    vals = np.array([*edge, *rng.uniform(-400.0, 400.0, 2000), *rng.uniform(-1.0, 1.0, 500)])
    want = np.array([angle360_c(float(v)) for v in vals])
    got = np.array([deg360(float(v)) for v in vals])
    assert got.tobytes() == want.tobytes()

    @numba.njit(error_model="numpy")
    def both(v):  # noqa: ANN001, ANN202
        a = np.empty_like(v)
        b = np.empty_like(v)
        for i in range(v.shape[0]):
            a[i] = deg360(v[i])
            b[i] = angle360_c(v[i])
        return a, b

    a, b = both(vals)
    assert a.tobytes() == b.tobytes() == want.tobytes()


def _notes(fn, codes, done, per, room=16):  # noqa: ANN001, ANN202
    n = len(codes)
    evb, evn = np.zeros((room, 3)), np.zeros(1, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64) + 1
    st = fn(7.5, np.array(codes, dtype=np.int64), idx, np.array(done), evb, evn, per)
    return st, evb[: evn[0]].tolist()


@pytest.mark.parametrize("compiled", [False, True])
def test_waypoint_notes_in_row_order_and_a_world_done_once(compiled: bool) -> None:
    fn = numba.njit(waypoint_notes) if compiled else waypoint_notes
    # world 0 (rows 0–2): rows 0 and 2 finish now, row 1 was done before: it ends
    # world 1 (rows 3–5): row 3 goes on to its next point, row 4 finishes, row 5 is not done
    codes = [2, 0, 2, 1, 2, 0]
    done = [True, True, True, False, True, False]
    st, ev = _notes(fn, codes, done, 3)
    assert st == STOP_AFTER
    assert ev == [[7.5, 0, -1], [7.5, 2, -1], [7.5, 3, 4], [7.5, 4, -1]]
    # world 0 without its row 1: no world ends (counted once, not once per finish)
    st, _ev = _notes(fn, codes, [True, False, True, False, True, False], 3)
    assert st == 0
    # the note buffer full: the plugins run the tick
    st, ev = _notes(fn, codes, done, 3, room=2)
    assert st == 1 and len(ev) == 2
    assert _notes(fn, [0] * 6, [False] * 6, 3) == (0, [])
