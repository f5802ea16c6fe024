"""The generic motion adapter (``fossen6dof`` plugin) over the motion-model face
(:mod:`marinesim.models.sixdof.motion`): every preset kind by name, the PythonVehicleSimulator fleet
in the engine equal to its own loop, the moved thruster plant and station-keeping law."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from marinesim.actuators import plant
from marinesim.actuators.t200 import T200Cubic
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.errors import ConfigError
from marinesim.engine.plugins import sixdof
from marinesim.models import presets
from marinesim.models.sixdof import fleet
from marinesim.models.sixdof.motion import KINDS, motion_model
from marinesim.reference import pvs_fleet as ref
from marinesim.scenario import load_simulation


def _scen(tmp_path: Path, motion: str, *, end: float, current: str = "") -> Path:
    text = f"""\
marinesim: 1
name: adapter
seed: 3
time: {{dt: 0.1, substeps: 5, end: {end}}}
environment:
  water: {{density: 1026.0, gravity: 9.81}}
{current}
entities:
  - name: v
    count: ${{n=1}}
    spawn: {{north: 0.0, east: 0.0, depth: 0.0, heading_deg: 0.0}}
    motion: {motion}
"""
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_the_adapter_has_no_model_branches() -> None:
    """The adapter asks the face, never which model it is (no ``is_pvs``, no kind tests)."""
    src = inspect.getsource(sixdof)
    assert "is_pvs" not in src
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            text = ast.unparse(node)
            assert "remus100" not in text and '"pvs' not in text, text


def test_every_preset_kind_has_a_motion_model() -> None:
    kinds = {presets.get(n).model for n in presets.names()}
    assert kinds <= set(KINDS)
    for name in presets.names():
        m = motion_model(name)
        assert m.kind == presets.get(name).model
        assert m.m == sum(w for _t, _k, w in m.inputs) and m.m > 0


@pytest.mark.parametrize(
    ("preset", "args", "current"),
    [
        ("tanker", {"control_system": "headingAutopilot", "r": -20.0}, (0.5, 150.0)),
        ("torpedo", {"control_system": "depthHeadingAutopilot", "r_z": 10.0, "r_psi": 30.0,
                     "r_rpm": 1525.0}, (0.3, 60.0)),
        ("supply", {"control_system": "DPcontrol", "r_x": 4.0, "r_y": 4.0, "r_n": 100.0},
         (0.5, -20.0)),
        ("frigate", {"control_system": "stepInput", "U": 6.0}, None),
    ],
)  # fmt: skip
def test_fleet_vehicle_in_the_engine_is_its_own_loop(
    tmp_path: Path, preset: str, args: dict, current: tuple[float, float] | None
) -> None:
    """Engine (dt 0.1 s, 5 substeps) = the PythonVehicleSimulator loop at h = 0.02 s, bit for bit,
    the uniform current handed to the constructor as V_current / beta_current."""
    cur = ""
    kw = dict(args)
    if current is not None:
        cur = f"  current: {{model: uniform, speed: {current[0]}, direction_deg: {current[1]}}}"
        kw.update(V_current=current[0], beta_current=current[1])
    flow = ", ".join(f"{k}: {v}" for k, v in args.items())
    motion = f"{{plugin: fossen6dof, params: {{preset: {preset}, vehicle_args: {{{flow}}}}}}}"
    sim = load_simulation(_scen(tmp_path, motion, end=4.0, current=cur))
    # through the plugins: the compiled tick equals them bit for bit (test_compiled_fleet.py),
    # and compiling a tick per vehicle here would cost a minute of CPU each
    sim.compiled = False
    res = sim.run()
    v = fleet.build(presets.get(preset).data["vehicle"], **kw)
    run = ref.simulate(v, 200, 0.02)
    pos = res["truth.pos"][0]
    every = slice(0, None, 5)
    assert np.array_equal(pos[:, 0], run.columns["x"][0, every])
    assert np.array_equal(pos[:, 1], run.columns["y"][0, every])
    assert np.array_equal(pos[:, 2], run.columns["z"][0, every])
    yaw = np.radians(res["fossen6dof.euler"][0, :, 2])
    psi = np.arctan2(np.sin(run.columns["psi"][0, every]), np.cos(run.columns["psi"][0, every]))
    np.testing.assert_allclose(yaw, psi, rtol=0, atol=1e-12)  # via the quaternion
    if args["control_system"] != "stepInput":
        assert "fossen6dof.autopilot" in res.signals


def test_fleet_batch_rows_equal_single(tmp_path: Path) -> None:
    motion = "{plugin: fossen6dof, params: {preset: semisub, vehicle_args: {control_system: DPcontrol, r_x: 10, r_y: 2, r_n: 40}}}"  # noqa: E501
    path = _scen(tmp_path, motion, end=3.0)
    one = load_simulation(path).run()
    five = load_simulation(path, variables={"n": 5}).run()
    for name in ("truth.pos", "fossen6dof.actuators", "fossen6dof.autopilot"):
        assert np.array_equal(one[name][0], five[name][3])


def test_remus100_takes_fins_and_propeller(tmp_path: Path) -> None:
    m = motion_model("remus100")
    assert [t for t, _k, _w in m.inputs] == ["fins/cmd", "propeller/cmd"]
    p = sixdof.SixDofMotion("m", sixdof.SixDofParams(preset="remus100"))
    assert set(p.subscribes) == {"fins/cmd", "propeller/cmd"}
    q = sixdof.SixDofMotion("m", sixdof.SixDofParams(preset="tanker"))
    assert set(q.subscribes) == {"actuators/cmd"}


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"preset": "tanker", "vehicle_args": {"rpm": 200}}, "rpm"),
        ({"preset": "tanker", "vehicle_args": {"control_system": "DPcontrol"}}, "headingAutopilot"),
        ({"preset": "frigate", "vehicle_args": {"U": -1}}, "U"),
        ({"preset": "tanker", "thrusters": {}}, "own actuators"),
        ({"preset": "bluerov2_heavy", "vehicle_args": {"r": 1}}, "PythonVehicleSimulator presets"),
    ],
)
def test_bad_vehicle_args_are_named(params: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        from marinesim.core.params import validate

        validate(sixdof.SixDofParams, params)


def test_plant_step_is_the_chain_with_enable_and_voltage_clamp() -> None:
    g = Geometry(get_layout("bluerov2_heavy"))
    pl = plant.T200Plant.from_geometry(g, t200=T200Cubic(), rotor_time_constant=0.1)
    rng = np.random.default_rng(4)
    n = 6
    cmd = rng.uniform(1100, 1900, (n, g.n))
    rotor = rng.uniform(-0.5, 0.5, (n, g.n))
    volts = np.array([9.0, 12.0, 16.0, 18.0, 21.0, 15.0])
    enabled = np.ones((n, g.n), dtype=bool)
    enabled[2, 3] = False
    out = plant.step(pl, rotor, cmd, volts, enabled, 0.02)
    assert out.voltage_clamped.tolist() == [True, False, False, False, True, False]
    v = np.clip(volts, 10.0, 20.0)
    u = np.where(enabled, np.clip(plant.esc_command(pl, cmd, v), -1, 1), 0.0)
    r1, thrust, cur, wrench = plant.chain(pl, rotor, u, v, 0.02)
    assert np.array_equal(out.rotor, r1) and np.array_equal(out.wrench, wrench)
    # the lag moves a disabled thruster's rotor towards 0
    assert abs(out.rotor[2, 3]) < abs(rotor[2, 3])
    # force never opposes the spin; wrench = B (σ f); current ≥ 0
    assert np.all(thrust * g.sigma * np.sign(out.rotor) >= 0)
    # B·f summed thruster by thruster (the row law's order, every route): bit for bit
    acc = np.zeros((n, 6))
    for j in range(g.n):
        acc = acc + out.thrust[:, j : j + 1] * g.b[None, :, j]
    assert np.array_equal(out.wrench, acc)
    np.testing.assert_allclose(out.wrench, out.thrust @ g.b.T, rtol=1e-14, atol=1e-12)
    assert np.all(out.current >= 0)
    # N = 1 is the batch path: every value bit for bit (one row law per vehicle)
    one = plant.step(pl, rotor[4:5], cmd[4:5], volts[4:5], enabled[4:5], 0.02)
    for a, b in ((one.rotor, out.rotor), (one.thrust, out.thrust), (one.current, out.current),
                 (one.wrench, out.wrench)):  # fmt: skip
        assert np.array_equal(a[0], b[4])


def test_station_keeping_law_pushes_towards_the_target() -> None:
    from marinesim.control.station_keeping import StationKeepingState, station_keeping_pid
    from marinesim.core.frames import quat_from_euler
    from marinesim.engine.plugins.wrench import StationKeepingPidParams

    p = StationKeepingPidParams()
    n = 3
    yaw = np.array([0.0, np.pi / 2, np.pi])
    quat = quat_from_euler(np.zeros(n), np.zeros(n), yaw)
    euler = np.stack([np.zeros(n), np.zeros(n), yaw], axis=1)
    target = np.array([[1.0, 0.0, 0.0, 0.0]] * n)
    out, st = station_keeping_pid(
        p, StationKeepingState.zeros(n), target, np.zeros((n, 3)), quat, euler,
        np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 6)), np.ones(n, dtype=bool), 0.1,
    )  # fmt: skip
    # 1 m north of each vehicle: kp·1 m + ki·(0.1 s·1 m) = 61.2 N, as surge for heading 0,
    # sway to port for heading 90°, backwards at 180°
    f = p.kp_pos + p.ki_pos * 0.1
    np.testing.assert_allclose(out.wrench[:, :2], [[f, 0.0], [0.0, -f], [-f, 0.0]], atol=1e-9)
    np.testing.assert_allclose(st.int_ned[:, 0], 0.1)
    assert out.wrench[1, 5] < 0 and out.wrench[2, 5] != 0  # yaw back to north
    inactive = station_keeping_pid(
        p, st, target, np.zeros((n, 3)), quat, euler, np.zeros((n, 3)), np.zeros((n, 3)),
        np.zeros((n, 6)), np.zeros(n, dtype=bool), 0.1,
    )  # fmt: skip
    assert np.all(inactive[0].wrench == 0) and np.array_equal(inactive[1].int_ned, st.int_ned)
