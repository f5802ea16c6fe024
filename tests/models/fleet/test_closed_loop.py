"""The compiled closed loop of the fleet: one copy of each control law, k steps per launch."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.control import pvs_fleet as ctl
from marinesim.models.sixdof import fleet
from marinesim.models.sixdof.fleet import kernel
from marinesim.reference import pvs_fleet_loop as loop

CASES = {
    "DSRV": ("depthAutopilot", 30.0),
    "frigate": ("headingAutopilot", 8.0, 45.0),
    "ROVzefakkel": ("headingAutopilot", 4.5, -30.0),
    "semisub": ("DPcontrol", 5.0, -5.0, 30.0, 0.5, 100.0),
    "shipClarke83": ("headingAutopilot", 20.0, 120, 15, 7, 0.75, 0.4, 60.0, 2e5),
    "supply": ("DPcontrol", 3.0, 2.0, -40.0, 0.7, 250.0),
    "tanker": ("headingAutopilot", 15, 0.3, 60, 25, 70),
    "torpedo": ("depthHeadingAutopilot", 20, 30, 1200, 0.4, 200),
}
H = 0.02


def _start(v: fleet.FleetVehicle, n: int, seed: int = 0) -> np.ndarray:
    """Rows of n vehicles spread around the upstream initial state (η, ν perturbed)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 12 + v.m))
    x[:, 6:12] = v.nu0
    x[:, 0:2] += rng.normal(scale=20.0, size=(n, 2))
    x[:, 5] += rng.normal(scale=1.0, size=n)
    return x


def _stepwise(v: fleet.FleetVehicle, x: np.ndarray, steps: int) -> tuple[np.ndarray, dict]:
    """The same loop through the batched face: controller call, then one kernel step."""
    fn, st = ctl.onboard(v, x.shape[0])
    alive = np.ones(x.shape[0], dtype=bool)
    for k in range(steps):
        u, st = fn(st, k * H, x[:, 0:6], x[:, 6:12], H)
        x, alive, _ = kernel.step_guarded(v, x, u, H, alive, (k + 1) * H)
    return x, st


@pytest.mark.parametrize("mode", ["closed", "stepInput"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_loop_equals_the_stepwise_loop(name: str, mode: str) -> None:
    """k steps in one launch are bit-identical to the controller face + per-step kernel."""
    v = fleet.build(name, *CASES[name]) if mode == "closed" else fleet.build(name, "stepInput")
    x0 = _start(v, 5)
    want, st = _stepwise(v, x0.copy(), 80)
    got = loop.run(v, x0, 80, H)
    np.testing.assert_array_equal(got.x, want)
    for j, key in enumerate(got.names):
        np.testing.assert_array_equal(got.state[:, j], st[key])


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunks_and_batch_sizes_are_bit_identical(name: str) -> None:
    """Chunked runs (state carried) and each vehicle alone give the same bits as one run."""
    v = fleet.build(name, *CASES[name])
    x0 = _start(v, 4, seed=1)
    whole = loop.run(v, x0, 90, H)
    a = loop.run(v, x0, 40, H)
    b = loop.run(v, a.x, 50, H, state=a.state, alive=a.alive, k0=40)
    np.testing.assert_array_equal(b.x, whole.x)
    np.testing.assert_array_equal(b.state, whole.state)
    for i in range(4):
        one = loop.run(v, x0[i : i + 1], 90, H)
        np.testing.assert_array_equal(one.x[0], whole.x[i])


def test_python_backend_matches_the_compiled_loop() -> None:
    """The interpreted closed loop differs from the compiled one only by libm rounding."""
    v = fleet.build("torpedo", *CASES["torpedo"])
    x0 = _start(v, 2)
    a = loop.run(v, x0, 12, H, log=True, final=True)
    b = loop.run(v, x0, 12, H, log=True, final=True, backend="python")
    assert a.log is not None and b.log is not None
    scale = np.maximum(1.0, np.max(np.abs(a.log), axis=(0, 1)))
    assert np.all(np.max(np.abs(a.log - b.log), axis=(0, 1)) <= 1e-12 * scale)


def test_divergence_inside_the_loop_stops_and_names_the_vehicle() -> None:
    """A vehicle the guard stops mid-run is frozen there; the event names it and its time."""
    v = fleet.build("torpedo", "depthHeadingAutopilot", 30, 50, 1525, 0.5, 170)
    x0 = np.zeros((3, 17))
    x0[2, 6] = 0.97  # accelerates past max_speed = 1 m/s within the run, the others do not
    res = loop.run(v, x0, 20, H, k0=5, max_speed=1.0)
    assert res.alive.tolist() == [True, True, False]
    fn, st = ctl.onboard(v, 3)
    x, alive, events = x0.copy(), np.ones(3, dtype=bool), []
    for k in range(5, 25):
        u, st = fn(st, k * H, x[:, 0:6], x[:, 6:12], H)
        x, alive, ev = kernel.step_guarded(v, x, u, H, alive, (k + 1) * H, max_speed=1.0)
        events += ev
    assert len(events) == 1 and "vehicle[2]" in events[0] and "t=0.1" not in events[0]
    assert list(res.events) == events
    np.testing.assert_array_equal(res.x, x)


def test_command_table_replaces_the_control_system() -> None:
    """Open-loop commands are applied row by row and logged as the commands."""
    v = fleet.build("supply", *CASES["supply"])
    table = np.tile(np.linspace(0, 60, 21)[:, None], (1, v.m))
    res = loop.run(v, _start(v, 2), 20, H, commands=table, final=True, log=True)
    assert res.log is not None and res.names == ()
    np.testing.assert_array_equal(res.log[0, :, 12 : 12 + v.m], table)
