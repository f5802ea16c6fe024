"""The REMUS 100 block through the generated tick against the plugins' ticks.

``fossen6dof`` (REMUS 100) and ``depth_heading_autopilot`` declare their laws
(:mod:`marinesim.engine.plugins.remus_laws`); the generated tick runs the same tick as the
plugins (autopilot, the model's substeps, the frame):
every recorded signal, the events and the bus/call counts must be bit-identical whether the
ticks run compiled or through the plugins; the autonomy's ticks, a tick the kernel gives
back and a full chunk are the plugins'.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.compile import PARALLEL_MIN
from marinesim.core.errors import ConfigError
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

#: remus100_survey without its waypoints: the autopilot holds its parameters' set-points.
NO_WAYPOINTS = {
    "entities.0.autonomy": [],
    "end_conditions": ["time"],
    "entities.0.controllers.0.params": {"rpm": 1200.0, "depth": 6.0, "heading_deg": 75.0},
}


def _run(compiled: bool | None, end: float = 40.0, **sets: object):  # noqa: ANN202
    sim = load_simulation("remus100_survey", sets={"time.end": end, **sets})
    sim.compiled = compiled
    return sim.run()


def _same(a, b) -> None:  # noqa: ANN001
    assert_runs_identical(a, b, routes=True)


def test_bundled_survey_compiled_equals_plugin_ticks() -> None:
    a, b = _run(False, 60.0), _run(True, 60.0)
    _same(a, b)
    assert any(e.kind == "waypoint" for e in a.events)  # the autonomy ran
    assert [e.t for e in a.events if e.kind == "waypoint"] == [
        e.t for e in b.events if e.kind == "waypoint"
    ]
    assert a.manifest["compiled_ticks"] == 0
    # every tick but one or two at the start: the 1 Hz waypoints run in the generated tick
    assert 600 - 2 <= b.manifest["compiled_ticks"] < 600


def test_without_waypoints_one_span_to_the_end() -> None:
    a, b = _run(False, 30.0, **NO_WAYPOINTS), _run(True, 30.0, **NO_WAYPOINTS)
    _same(a, b)
    assert 300 - 3 <= b.manifest["compiled_ticks"] < 300
    depth = a["truth.pos"][0, -1, 2]
    assert 1.5 < depth < 6.0  # from 0.5 m it dives towards the 6 m set-point (not frozen)


@pytest.mark.parametrize(
    "sets",
    [
        {"time.dt": 0.05, "time.substeps": 1},
        {"time.dt": 0.2, "time.substeps": 10, "time.start": 3.3},
        {"entities.0.autonomy.0.rate_hz": 0.5, "entities.0.spawn.heading_deg": 200.0},
        {"environment.current.speed": 0.0, "entities.0.spawn.heading_deg": 359.0},
    ],
)
def test_other_rates_and_poses_match(sets: dict) -> None:
    a, b = _run(False, 20.0, **sets), _run(True, 20.0, **sets)
    assert b.manifest["compiled_ticks"] > 0.7 * (len(a.t) - 1)
    _same(a, b)


def test_speed_to_rpm_keeps_the_waypoints_in_python() -> None:
    # with rpm_per_speed the autopilot takes each DESIRED_SPEED message as it comes: the
    # waypoints stay a Python-only plugin (1 Hz) between the compiled ticks
    sets = {"entities.0.controllers.0.params.rpm_per_speed": 700.0}
    a, b = _run(False, 20.0, **sets), _run(True, 20.0, **sets)
    assert 200 - 20 - 2 <= b.manifest["compiled_ticks"] <= 200 - 20
    _same(a, b)
    rpm = a["autopilot.command"][0, -1, 2]
    assert rpm == pytest.approx(700.0 * 1.8)  # the survey's 1.8 m/s, not the 1200 rpm default


def test_several_vehicles_match() -> None:
    sets = {"entities.0.count": 3}
    a, b = _run(False, 20.0, **sets), _run(True, 20.0, **sets)
    assert a["truth.pos"].shape[0] == 3
    assert b.manifest["compiled_ticks"] > 150
    _same(a, b)


@pytest.mark.parametrize("log_rate", [2.0, 10.0 / 3.0])
def test_decimated_frames_match(log_rate: float) -> None:
    a, b = _run(False, 20.0, log_rate=log_rate), _run(True, 20.0, log_rate=log_rate)
    assert len(a.t) < 100 and b.manifest["compiled_ticks"] > 150
    _same(a, b)


def test_streamed_log_matches(tmp_path) -> None:  # noqa: ANN001
    from marinesim.engine import recorder

    old = recorder._MAX_ROWS
    recorder._MAX_ROWS = 50  # several parts, written while the spans run
    try:
        out = []
        for compiled in (False, True):
            sim = load_simulation("remus100_survey", sets={"time.end": 20.0})
            sim.compiled = compiled
            sim.stream_to(tmp_path / str(compiled))
            out.append(sim.run())
    finally:
        recorder._MAX_ROWS = old
    _same(*out)


def test_small_chunks_flush_between_spans() -> None:
    from marinesim.engine import recorder

    old = recorder._MAX_ROWS
    recorder._MAX_ROWS = 7  # the span stops at every full chunk, the recorder flushes
    try:
        _same(_run(False, 20.0, **NO_WAYPOINTS), _run(True, 20.0, **NO_WAYPOINTS))
    finally:
        recorder._MAX_ROWS = old


def _end_state(sim) -> list:  # noqa: ANN001
    """Everything the plugins and the engine hold after a run (arrays copied)."""
    blk = sim.blocks[0]
    tr = blk.truth
    out = [np.array(a) for a in (tr.pos, tr.quat, tr.vel, tr.ang_vel, tr.accel)] + [tr.t]
    by = {s.plugin.kind: s.ctx.state for s in sim.slots}
    m, c = by["motion"], by["controller"]
    out += [np.array(m["x"].x), np.array(m["x"].alive), m["x"].t, np.array(m["cmd"])]
    out += [np.array(m["accel"]), np.array(m["commanded"]), c["t_prev"]]
    out += [np.array(v) for v in vars(c["ap"]).values()]
    out += [sorted(sim.bus._seq.items()), sim.clock.k, np.array(sim._last_finite["remus"])]
    rec = sim._recorder
    out += [rec._ticks, rec.frames, {k: np.array(v) for k, v in rec.current.items()}]
    return out


def test_a_step_undone_mid_loop_leaves_the_plugins_state(monkeypatch) -> None:  # noqa: ANN001
    # at tick 58 the model rows are made to trip the guard (500 m/s forward): the generated
    # loop restores every state array to the start of the tick and returns it; the plugins
    # run it as if the loop had stopped before it
    from marinesim.engine.compiled import route

    real_compile = route.compile_tick
    undone: list[int] = []

    def compile_tick(decls, **kw):  # noqa: ANN001, ANN003, ANN202
        from marinesim.engine.compiled import lawfunc
        from marinesim.engine.compiled.generate import arena_tables, array_of, tick_module_of

        real, order, state = real_compile(decls, **kw)
        # the loop with the save copies (a run calls the one without: tick_run)
        saved = real_compile(decls, **{**kw, "saved": True})[0]
        d = next(i for i, ls in enumerate(decls) if "xlog" in ls.arrays)
        arrays = [array_of(decls, key) for key in order]
        x = arrays[order.index(f"{d}:x")]

        def fn(k0, kend, *rest):  # noqa: ANN001, ANN002, ANN202
            if k0 < 57:  # stop at 57 (tick 57 is then the plugins'), the next call at 58
                return real(k0, min(kend, 57), *rest)
            if undone:
                return real(k0, kend, *rest)
            keep = x.copy()
            x[:, 6] = 500.0
            # with ``save`` (as a deferred run calls it) the loop restores the state arrays;
            # without (Simulation.run's tick_run), the route replays from the plugins' state
            # (rest: start, dt, h, nsub, sched, the address and shape tables, j0)
            saves = [np.empty_like(arrays[i]) for i in state]
            ad, dm, sv = arena_tables(arrays, [(arrays[i], c) for i, c in zip(state, saves, strict=True)])
            lawfunc.load(tick_module_of(decls))  # (what the route does before a call)
            r = saved(k0, kend, *rest[:5], ad, dm, sv, 1, rest[-1])
            np.testing.assert_array_equal(x[:, 6], 500.0)  # the rows of before the tick
            x[...] = keep
            undone.append(r)
            return r

        return fn, order, state

    def run(compiled: bool):  # noqa: ANN202
        sim = load_simulation("remus100_survey", sets={"time.end": 20.0, **NO_WAYPOINTS})
        sim.compiled = compiled
        return sim, sim.run()

    monkeypatch.setattr(route, "compile_tick", compile_tick)
    sb, b = run(True)
    monkeypatch.setattr(route, "compile_tick", real_compile)
    assert undone == [58]
    sa, a = run(False)
    _same(a, b)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")
    # ticks 57, 58 (handed back) and 59 (the engine backs off once) were the plugins'
    assert 200 - 6 <= b.manifest["compiled_ticks"] < 200 - 2


def test_end_state_matches_with_waypoints() -> None:
    out = []
    for compiled in (False, True):
        sim = load_simulation("remus100_survey", sets={"time.end": 25.35})
        sim.compiled = compiled
        sim.run()
        out.append(_end_state(sim))
    assert_values_identical(out[0], out[1], routes=True, what="end state")


def test_compiled_true_says_why_it_does_not_apply() -> None:
    sim = load_simulation("remus100_survey", sets={"time.end": 2.0, "time.time_warp": 1.0})
    sim.compiled = True
    with pytest.raises(ConfigError, match=r"compiled tick does not apply: time_warp \(paced runs\)"):
        sim.run()


def test_compiled_tick_is_used_by_default() -> None:
    r = _run(None, 5.0)
    assert r.manifest["compiled_ticks"] > 0


def test_a_step_the_guard_stops_is_undone_and_run_by_the_plugins() -> None:
    # 500 m/s forward (> the model's 50 m/s bound): the kernel's first substep trips the
    # guard; it must undo the tick (autopilot state, model rows) and give it back
    from marinesim.models.sixdof.motion import RowsState

    def run(compiled: bool):  # noqa: ANN202
        sim = load_simulation("remus100_survey", sets={"time.end": 5.0, **NO_WAYPOINTS})
        sim.compiled = compiled
        sim.step(2)
        st = next(s for s in sim.slots if s.plugin.kind == "motion").ctx.state
        x = st["x"].x.copy()
        x[:, 6] = 500.0
        st["x"] = RowsState(x=x, alive=st["x"].alive.copy(), t=st["x"].t)
        return sim.run()

    a, b = run(False), run(True)
    assert a.status == b.status == "diverged"
    assert any("max_speed" in e.text for e in b.events)
    assert b.manifest["compiled_ticks"] == 0
    _same(a, b)


def _spread(compiled: bool, n: int, end: float, fast_row: int | None = None):  # noqa: ANN202
    """``n`` vehicles without waypoints, spawned apart in position, depth and heading (each
    its own trajectory); ``fast_row``: that vehicle at 500 m/s after the first tick, past the
    model's guard."""
    from marinesim.models.sixdof.motion import RowsState

    spread = {"north": 20.0, "east": 20.0, "depth": 1.0, "heading_deg": 90.0}
    sets = {"time.end": end, "entities.0.count": n, "entities.0.spawn.spread": spread}
    sim = load_simulation("remus100_survey", sets={**sets, **NO_WAYPOINTS})
    sim.compiled = compiled
    sim.step(1)
    if fast_row is not None:
        st = next(s for s in sim.slots if s.plugin.kind == "motion").ctx.state
        x = st["x"].x.copy()
        x[fast_row, 6] = 500.0
        st["x"] = RowsState(x=x, alive=st["x"].alive.copy(), t=st["x"].t)
    return sim, sim.run()


def test_many_vehicles_step_on_threads_with_the_same_bits() -> None:
    # from PARALLEL_MIN vehicles on, the substep law runs the vehicles' steps through the
    # plugin route's prange kernel: every row the same bits as the plugins' ticks
    from marinesim.engine.plugins.remus_laws import pvs_laws, pvs_substep_threads

    n = PARALLEL_MIN + 3
    _, a = _spread(False, n, 3.0)
    sim, b = _spread(True, n, 3.0)
    slot = next(s for s in sim.slots if s.plugin.kind == "motion")
    assert pvs_laws(slot.plugin, slot, sim).laws[0].fn is pvs_substep_threads
    assert b.manifest["compiled_ticks"] >= 30 - 2
    assert np.ptp(a["truth.heading"][:, -1, 0]) > 10.0  # the rows differ from one another
    _same(a, b)


def test_many_vehicles_a_stopped_step_goes_back_to_the_plugins() -> None:
    n = PARALLEL_MIN + 3
    _, a = _spread(False, n, 3.0, fast_row=200)
    _, b = _spread(True, n, 3.0, fast_row=200)
    assert a.status == b.status == "diverged"
    assert b.manifest["compiled_ticks"] == 0
    _same(a, b)
