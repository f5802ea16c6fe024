"""The thruster-driven 6-DOF block through the generated tick against the plugins' ticks.

``station_keeping_pid``, ``thruster_allocator`` (``pinv``) and ``fossen6dof`` with a T200
plant and battery declare their laws (:mod:`marinesim.engine.plugins.sixdof_laws`); the
generated tick must give every recorded signal (thrust, rotor, currents, battery voltage and
charge, allocator PWM/forces/unmet wrench, the wrench demand, the truth), the events and the
bus/call counts bit for bit as the plugins' ticks (``compiled: false``) — with a thruster
failure posted by a script, handed to the plugins on its tick, too.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

numba = pytest.importorskip("numba")

FAIL = {"script": ["thrusters/fail=0 at 4"]}


def _run(  # noqa: ANN202
    compiled: bool | None,
    end: float,
    name: str = "bluerov2_station_keeping",
    variables: dict[str, str] | None = None,
    **sets: object,
):
    sim = load_simulation(name, variables=variables, sets={"time.end": end, **sets})
    sim.compiled = compiled
    return sim.run()


def test_station_keeping_compiled_equals_plugin_ticks() -> None:
    a, b = _run(False, 15.0), _run(True, 15.0)
    assert_runs_identical(a, b, routes=True)
    assert a.manifest["compiled_ticks"] == 0
    assert 300 - 3 <= b.manifest["compiled_ticks"] < 300  # all but the first tick or two
    volt = b["fossen6dof.voltage"][0, :, 0]
    assert volt[-1] < 16.8 - 0.01  # the battery sags under the thrusters' current
    assert np.all(b["alloc.voltage"][0, 2:, 0] > 15.0)
    thrust = b["fossen6dof.thrust"][0]
    assert np.abs(thrust[-1]).max() > 1.0  # the thrusters push against the current
    pwm = b["alloc.pwm"][0, -1]
    assert np.all((1100.0 <= pwm) & (pwm <= 1900.0)) and np.any(pwm != 1500.0)
    err = np.hypot(*b["hold.error"][0, -1, :2])
    assert err < 1.0  # it holds station within a metre in the 0.3 m/s current


def test_three_vehicles_each_row_its_own_voltage() -> None:
    spread = {"north": 2.0, "east": 2.0, "depth": 1.0, "heading_deg": 60.0}
    sets = {"entities.0.count": 3, "entities.0.spawn.spread": spread}
    a, b = _run(False, 5.0, **sets), _run(True, 5.0, **sets)
    assert_runs_identical(a, b, routes=True)
    assert b.manifest["compiled_ticks"] >= 100 - 3
    v = b["alloc.voltage"][:, -1, 0]
    assert len(set(v.tolist())) > 1  # the batteries sag differently: per-row bounds


def test_same_seed_same_bytes_compiled() -> None:
    assert_runs_identical(_run(True, 5.0), _run(True, 5.0))


def test_thruster_failure_hands_its_tick_back() -> None:
    a, b = _run(False, 10.0, **FAIL), _run(True, 10.0, **FAIL)
    assert_runs_identical(a, b, routes=True)
    kinds = [(e.t, e.kind) for e in b.events]
    assert (4.0, "thruster_fail") in kinds
    en = b["fossen6dof.enabled"][0, -1]
    assert en[0] == 0.0 and np.all(en[1:] == 1.0)
    assert b["fossen6dof.thrust"][0, -1, 0] == pytest.approx(0.0, abs=1e-3)  # lag decayed
    # every tick but the script's (the event's and the one before) and the first
    assert 200 - 6 <= b.manifest["compiled_ticks"] < 200


def test_two_vehicle_failure_scenario_compiled_equals_plugin_ticks() -> None:
    # the bundled scenario: two blocks (pinv, fault-unaware; qp, fault-aware) in one
    # generated tick; thruster 0 fails at 4 s (the script's tick goes through the plugins)
    fail = {"script": ["thrusters/fail=0 at 4"]}
    a = _run(False, 8.0, name="bluerov2_thruster_failure", **fail)
    b = _run(True, 8.0, name="bluerov2_thruster_failure", **fail)
    assert_runs_identical(a, b, routes=True)
    assert b.manifest["compiled_why_not"] is None
    assert 160 - 6 <= b.manifest["compiled_ticks"] < 160
    en = b["fossen6dof.enabled"][:, -1]  # both plants lost thruster 0
    assert np.all(en[:, 0] == 0.0) and np.all(en[:, 1:] == 1.0)
    f = b["alloc.force"][:, -1]
    assert f[1, 0] == 0.0  # rov_qp's allocator was told: no force asked of thruster 0
    assert f[0, 0] != 0.0  # rov_pinv's was not: its dead motor keeps a share
