"""The PythonVehicleSimulator fleet through the generated tick against the plugins' ticks.

``fossen6dof`` with a fleet preset declares its laws (:mod:`marinesim.engine.plugins.fleet_laws`:
the vehicle's own control system, then its guarded loop step, every substep).  Every recorded
signal, the events, the bus and hook-call counts and the plugin's end state must be
bit-identical whether the ticks run compiled or through the plugins.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

STEP_INPUT = {"control_system": "stepInput"}
FLEET = ("tanker_heading_autopilot", "torpedo_depth_heading", "supply_dp_current")


def _sim(name: str, compiled: bool | None, end: float, **sets: object):  # noqa: ANN202
    sim = load_simulation(name, sets={"time.end": end, **sets})
    sim.compiled = compiled
    return sim


def _end_state(sim) -> list:  # noqa: ANN001
    """Everything the plugin and the engine hold after a run (arrays copied)."""
    tr = sim.blocks[0].truth
    out = [np.array(a) for a in (tr.pos, tr.quat, tr.vel, tr.ang_vel, tr.accel)] + [tr.t]
    st = sim.slots[0].ctx.state
    out += [np.array(st["x"].x), np.array(st["x"].alive), st["x"].t, np.array(st["cmd"])]
    out += [np.array(st["accel"]), np.array(st["commanded"]), np.array(st["bad"])]
    out += [(k, np.array(v)) for k, v in st["onboard"].items()]
    name = sim.blocks[0].name
    out += [sorted(sim.bus._seq.items()), sim.clock.k, np.array(sim._last_finite[name])]
    rec = sim._recorder
    out += [rec._ticks, rec.frames, {k: np.array(v) for k, v in rec.current.items()}]
    ctx = sim.slots[0].ctx
    out += [ctx.t, ctx.tick, ctx.t_next, ctx.substep, dict(sim.slots[0].calls)]
    return out


@pytest.mark.parametrize("name", FLEET)
def test_bundled_fleet_scenario_compiled_equals_plugin_ticks(name: str) -> None:
    end = 40.0 if name == "tanker_heading_autopilot" else 12.0
    sa, sb = _sim(name, False, end), _sim(name, True, end)
    a, b = sa.run(), sb.run()
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")
    assert a.manifest["compiled_ticks"] == 0
    assert sb.clock.k - 3 <= b.manifest["compiled_ticks"] < sb.clock.k  # all but the first tick or two
    assert "fossen6dof.autopilot" in b.signals
    # the closed loop acts: the controller states move off their zero start
    assert np.abs(b["fossen6dof.autopilot"][:, -1]).max() > 1e-3


@pytest.mark.parametrize(
    ("name", "sets"),
    [
        ("torpedo_depth_heading", {"entities.0.count": 3, "time.dt": 0.2, "time.substeps": 10}),
        ("supply_dp_current", {"entities.0.count": 2, "time.start": 3.3, "log_rate": 2.5}),
        ("tanker_heading_autopilot", {"time.dt": 0.02, "time.substeps": 1}),
        # a step-input vehicle: the schedule reads the substep's time (t > 50 s, then 0)
        ("tanker_heading_autopilot", {"entities.0.motion.params.vehicle_args": STEP_INPUT}),
        ("torpedo_depth_heading", {"entities.0.motion.params.vehicle_args": STEP_INPUT}),
    ],
)
def test_other_setups_match(name: str, sets: dict) -> None:
    end = 60.0 if name == "tanker_heading_autopilot" else 8.0
    sa, sb = _sim(name, False, end, **sets), _sim(name, True, end, **sets)
    a, b = sa.run(), sb.run()
    assert sb.clock.k - 3 <= b.manifest["compiled_ticks"] < sb.clock.k
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")


def test_step_input_crosses_its_switch_times() -> None:
    # the tanker's stepInput: δ = 10° until t > 50 s, then 0 (its actuator follows)
    sets = {"entities.0.motion.params.vehicle_args": STEP_INPUT}
    b = _sim("tanker_heading_autopilot", True, 60.0, **sets).run()
    assert b.manifest["compiled_ticks"] > 100
    delta = b["fossen6dof.actuators"][0, :, 0]
    t = b.t
    assert abs(delta[(t > 40) & (t < 50)]).max() > 5.0
    assert abs(delta[-1]) < abs(delta[t == 50.0][0])


def test_a_held_actuator_command_replaces_the_vehicles_own() -> None:
    # a vehicle that received actuators/cmd flies the held command; its own autopilot still
    # runs (its states advance), as in the plugin
    def run(compiled: bool):  # noqa: ANN202
        sim = _sim("torpedo_depth_heading", compiled, 8.0, **{"entities.0.count": 2})
        sim.step(2)
        st = sim.slots[0].ctx.state
        cmd = st["cmd"].copy()
        cmd[1] = [0.1, -0.1, 0.05, -0.05, 800.0]
        st["cmd"] = cmd
        st["commanded"] = np.array([False, True])
        return sim, sim.run()

    (sa, a), (sb, b) = run(False), run(True)
    assert b.manifest["compiled_ticks"] > 70
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")
    rpm = b["fossen6dof.actuators"][:, -1, 4]
    assert abs(rpm[1] - 800.0) < 50.0 < abs(rpm[0] - 800.0)


def test_a_step_the_guard_stops_is_undone_and_run_by_the_plugins() -> None:
    from marinesim.models.sixdof.motion import RowsState

    def run(compiled: bool):  # noqa: ANN202
        sim = _sim("supply_dp_current", compiled, 5.0)
        sim.step(2)
        st = sim.slots[0].ctx.state
        x = st["x"].x.copy()
        x[:, 6] = 500.0  # beyond the 50 m/s bound: the first substep trips the guard
        st["x"] = RowsState(x=x, alive=st["x"].alive.copy(), t=st["x"].t)
        return sim.run()

    a, b = run(False), run(True)
    assert a.status == b.status == "diverged"
    assert any("max_speed" in e.text for e in b.events)
    assert b.manifest["compiled_ticks"] == 0
    assert_runs_identical(a, b, routes=True)


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"preset": "otter"}, "otter .*has no compiled laws"),
        ({"preset": "bluerov2_heavy"}, "without a T200 thruster plant"),
    ],
)
def test_compiled_true_says_why_other_models_run_tick_by_tick(params: dict, why: str) -> None:
    sim = _sim("torpedo_depth_heading", True, 1.0, **{"entities.0.motion.params": params})
    with pytest.raises(ConfigError, match=f"compiled tick does not apply: .*{why}"):
        sim.run()


def test_a_current_field_is_ignored_alike() -> None:
    # the fleet's models take a uniform current in their constructor: a current field is
    # reported at the start (a warning) and ignored by both routes
    sets = {"environment.current": {"model": "field", "file": "demo_current.cfd"}}
    sa, sb = _sim("torpedo_depth_heading", False, 5.0, **sets), _sim("torpedo_depth_heading", True, 5.0, **sets)
    a, b = sa.run(), sb.run()
    assert any("current field is ignored" in e.text for e in b.events)
    assert b.manifest["compiled_ticks"] >= 47
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")
