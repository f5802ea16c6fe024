"""``fossen6dof`` motion plugin: wrench input, current as relative velocity, thruster chain,
thruster failure, divergence policy, batching, configuration errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.actuators.t200 import T200Cubic
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core import registry
from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin
from marinesim.scenario import load_simulation


class _ConstParams(ParamsBase):
    wrench: tuple[float, float, float, float, float, float] = field((0.0,) * 6)
    pwm: list[float] | None = field(None)


class _Const(Plugin):
    """Test controller: constant wrench/cmd and, if given, constant thrusters/cmd."""

    kind: ClassVar[str] = "controller"
    Params = _ConstParams
    publishes: ClassVar[dict[str, str]] = {"wrench/cmd": "array", "thrusters/cmd": "array"}

    def control(self, ctx: Any, rng: Any) -> None:
        p: Any = self.params
        ctx.publish("wrench/cmd", np.tile(np.asarray(p.wrench), (ctx.n, 1)))
        if p.pwm is not None:
            ctx.publish("thrusters/cmd", np.tile(np.asarray(p.pwm), (ctx.n, 1)))


registry.register("controller", "_test_const_cmd", _Const, replace=True)

# neutrally buoyant, CG = CB: no restoring, decoupled surge (rigid body + added mass 12 kg)
MODEL = """
        model:
          mass: 10.0
          inertia: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
          added_mass: [2.0, 0, 0, 0, 0, 0]
          linear_damping: [${d=0.0}, 0, 0, 0, 0, 0]
          neutrally_buoyant: true
          max_speed: ${vmax=50.0}
"""


def _scen(tmp_path: Path, body: str, *, current: float = 0.0, end: float = 2.0) -> Path:
    text = f"""\
marinesim: 1
name: t6dof
seed: 1
time: {{dt: 0.05, substeps: 2, end: {end}}}
environment:
  water: {{density: 1000.0, gravity: 9.81}}
  current: {{model: uniform, speed: {current}, direction_deg: 0.0}}
entities:
{body}
"""
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _free(count: int = 1, wrench: str = "[6.0, 0, 0, 0, 0, 0]", extra: str = "") -> str:
    return f"""\
  - name: veh
    count: {count}
    spawn: {{north: 0.0, east: 0.0, depth: 2.0, heading_deg: 0.0, step: {{east: 5.0}}}}
    motion:
      plugin: fossen6dof
      params:{MODEL}{extra}
    controllers:
      - {{name: const, plugin: _test_const_cmd, params: {{wrench: {wrench}}}}}
"""


def test_constant_surge_force_matches_newton(tmp_path: Path) -> None:
    # (m + X_udot) du/dt = F  ->  u = F t / 12, x = F t^2 / 24 (rk4 is exact for this ODE)
    sim = load_simulation(_scen(tmp_path, _free()))
    r = sim.run()
    t = r.t
    pos = r["truth.pos"][0]
    np.testing.assert_allclose(pos[:, 0], 6.0 * t**2 / 24.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r["truth.speed"][0, :, 0], 6.0 * t / 12.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pos[:, 1:], [[0.0, 2.0]] * len(t), atol=1e-12)
    # the wrench was applied from tick 0 (controller -> motion latency 0)
    assert r["fossen6dof.wrench"][0, -1, 0] == 6.0
    # truth's body specific force (for IMUs): a - g in body axes, level: (F/12, 0, -g)
    np.testing.assert_allclose(sim.block("veh").truth.accel[0], [0.5, 0.0, -9.81], atol=1e-9)


def test_current_enters_as_relative_velocity(tmp_path: Path) -> None:
    # linear damping d, current c towards north, at rest: 12 du/dt = -d (u - c)
    d, c = 6.0, 0.4
    sim = load_simulation(
        _scen(tmp_path, _free(wrench="[0, 0, 0, 0, 0, 0]"), current=c, end=3.0),
        variables={"d": d},
    )
    r = sim.run()
    u = r["truth.speed"][0, :, 0]
    expected = c * (1.0 - np.exp(-d * r.t / 12.0))
    # rk4 local error ~ (h d/M)^5 / 120 per step: far below 1e-8 at h = 0.025 s
    np.testing.assert_allclose(u, expected, rtol=0, atol=1e-8)


def test_batched_rows_equal_single_vehicle(tmp_path: Path) -> None:
    r3 = load_simulation(_scen(tmp_path, _free(count=3, wrench="[3, 1, 0, 0, 0, 0.2]"))).run()
    r1 = load_simulation(_scen(tmp_path, _free(count=1, wrench="[3, 1, 0, 0, 0, 0.2]"))).run()
    p3 = r3["truth.pos"]
    # the model's one-vehicle path uses Python floats: equal to the batched rows to rounding
    np.testing.assert_allclose(p3[0], r1["truth.pos"][0], rtol=0, atol=1e-12)
    # rows differ only by the spawn offset (5 m east per member)
    np.testing.assert_allclose(p3[2] - p3[0], [[0.0, 10.0, 0.0]] * len(r3.t), atol=1e-9)


def test_divergence_goes_through_the_engine_policy(tmp_path: Path) -> None:
    sim = load_simulation(
        _scen(tmp_path, _free(wrench="[500, 0, 0, 0, 0, 0]")), variables={"vmax": 1.0}
    )
    r = sim.run()
    assert r.status == "diverged"
    errs = [e for e in r.events if e.kind == "NumericalError"]
    assert errs and errs[0].entity == "veh[0]"
    assert "max_speed" in " ".join(e.text for e in errs)
    # 500 N / 12 kg reaches 1 m/s after 0.024 s: inside the first tick
    assert r.t[-1] == pytest.approx(0.05)


ROV = """\
  - name: rov
    count: 2
    spawn: {{north: 0.0, east: 0.0, depth: 5.0, heading_deg: 0.0, step: {{east: 3.0}}}}
    motion:
      plugin: fossen6dof
      params:
        preset: bluerov2_heavy
        thrusters: {{layout: bluerov2_heavy, rotor_time_constant: 0.1, failed: {failed},
                    battery: {{internal_resistance: 0.05}}}}
    controllers:
      - {{name: const, plugin: _test_const_cmd, params: {{pwm: {pwm}}}}}
"""


def test_thruster_chain_pwm_to_force_at_battery_voltage(tmp_path: Path) -> None:
    pwm = [1600.0, 1400.0, 1550.0, 1500.0, 1700.0, 1300.0, 1500.0, 1650.0]
    body = ROV.format(failed="[3]", pwm=pwm)
    r = load_simulation(_scen(tmp_path, body, end=1.5)).run()
    thrust = r["fossen6dof.thrust"][0, -1]
    rotor = r["fossen6dof.rotor"][0, -1]
    volt = r["fossen6dof.voltage"][0, -1, 0]
    cur = r["fossen6dof.current"][0, -1]
    u = (np.asarray(pwm) - 1500.0) / 400.0
    u[3] = 0.0  # failed from the start
    # first-order rotor lag: after 1.5 s with tau = 0.1 s the state is within e^-15 of u
    np.testing.assert_allclose(rotor, u, atol=1e-6)
    t200 = T200Cubic()
    # voltage of the plant = V_oc(q) - R I_total (the last substep's current)
    soc = r["fossen6dof.soc"][0, -1, 0]
    np.testing.assert_allclose(volt, 12.8 + 4.0 * soc - 0.05 * cur.sum(), atol=1e-9)
    # thrust is the T200 model at the previous substep's voltage; dV per substep is tiny
    f_ref = t200.u_to_force(rotor, volt)
    f_ref = np.where(rotor > 0, np.maximum(f_ref, 0), np.minimum(f_ref, 0))
    np.testing.assert_allclose(thrust, f_ref, rtol=1e-4, atol=1e-6)
    assert thrust[3] == 0.0 and cur[3] == 0.0
    geo = Geometry(get_layout("bluerov2_heavy"))
    np.testing.assert_allclose(r["fossen6dof.wrench"][0, -1], geo.b @ thrust, atol=1e-9)


def test_thruster_fail_message_decays_through_rotor_dynamics(tmp_path: Path) -> None:
    pwm = [1600.0] * 8
    body = ROV.format(failed="[]", pwm=pwm) + '\nscript:\n  - "thrusters/fail=2 at 0.5"\n'
    text = _scen(tmp_path, "", end=1.5).read_text().replace("entities:\n", "entities:\n" + body)
    p = tmp_path / "f.yaml"
    p.write_text(text)
    r = load_simulation(p).run()
    rotor = r["fossen6dof.rotor"][0, :, 2]
    t = r.t
    k = np.searchsorted(t, 1.5)
    # failed at 0.5 s: 1.0 s of decay with tau = 0.1 s leaves e^-10 of u = 0.25
    assert abs(rotor[k]) <= 0.25 * np.exp(-10.0) * 1.01
    assert r["fossen6dof.enabled"][0, -1, 2] == 0.0 and r["fossen6dof.enabled"][0, -1, 1] == 1.0
    # events number thrusters from 1 as the figures do, and name the 0-based index
    assert any("thruster 3" in e.text and "index 2" in e.text for e in r.events)


def test_configuration_errors_are_located(tmp_path: Path) -> None:
    body = """\
  - name: v
    count: 1
    spawn: {north: 0.0, east: 0.0}
    motion: {plugin: fossen6dof, params: {preset: bluerov2_hevy}}
"""
    with pytest.raises(ConfigError) as exc:
        load_simulation(_scen(tmp_path, body))
    msg = str(exc.value)
    assert "bluerov2_heavy" in msg and "s.yaml" in msg and exc.value.line is not None
    body2 = body.replace("{preset: bluerov2_hevy}", "{preset: remus100, integrator: rk4}")
    with pytest.raises(ConfigError, match="semi-implicit"):
        load_simulation(_scen(tmp_path, body2))
    body3 = body.replace("{preset: bluerov2_hevy}", "{preset: lauv, thrusters: {layot: x}}")
    with pytest.raises(ConfigError, match="layout"):
        load_simulation(_scen(tmp_path, body3))


class _UuvParams(ParamsBase):
    thruster: float = field(0.0)
    fin: float = field(0.0)


class _UuvCmd(Plugin):
    """Test controller: constant commands of one UUV thruster and one fin."""

    kind: ClassVar[str] = "controller"
    Params = _UuvParams
    publishes: ClassVar[dict[str, str]] = {"thrusters/cmd": "array", "fins/cmd": "array"}

    def control(self, ctx: Any, rng: Any) -> None:
        p: Any = self.params
        ctx.publish("thrusters/cmd", np.full((ctx.n, 1), p.thruster))
        ctx.publish("fins/cmd", np.full((ctx.n, 1), p.fin))


registry.register("controller", "_test_uuv_cmd", _UuvCmd, replace=True)


def test_uuv_thruster_chain_and_fin_drive_the_model(tmp_path: Path) -> None:
    # one thruster along +x at the CO (zero-order rotor, F = c |w| w) and one fin whose
    # mount makes its lift act sideways: at rest the fin has no flow and exerts nothing
    body = f"""\
  - name: auv
    count: 2
    spawn: {{north: 0.0, east: 0.0, depth: 2.0, heading_deg: 0.0, step: {{east: 5.0}}}}
    motion:
      plugin: fossen6dof
      params:{MODEL}
        actuators:
          thrusters:
            - {{name: prop, axis: [1, 0, 0], dynamics: {{type: zero_order}},
               conversion: {{type: basic, rotor_constant: 0.0002}}}}
          fins:
            - {{name: rudder, position: [-0.4, 0, 0], lower: -0.5, upper: 0.5,
               dynamics: {{type: first_order, time_constant: 0.2}},
               liftdrag: {{type: quadratic, lift_constant: 9.8688, drag_constant: 6.513408}}}}
    controllers:
      - {{name: cmd, plugin: _test_uuv_cmd, params: {{thruster: 200.0, fin: 0.9}}}}
"""
    r = load_simulation(_scen(tmp_path, body, end=1.0)).run()
    thrust = 0.0002 * 200.0 * 200.0  # 8 N
    np.testing.assert_allclose(r["fossen6dof.thrust"][0, -1], [thrust])
    # the fin command is clamped to its upper limit 0.5 rad and lags with tau = 0.2 s
    np.testing.assert_allclose(
        r["fossen6dof.fin_angle"][0, -1, 0], np.degrees(0.5 * (1 - np.exp(-5.0))), rtol=1e-9
    )
    w = r["fossen6dof.wrench"][0, -1]
    assert w[0] < thrust  # the fin's drag opposes the motion once the vehicle moves
    # surge speed bounded by the thrust alone: u(t) <= F t / (m + X_udot)
    assert 0.0 < r["truth.speed"][0, -1, 0] <= thrust * 1.0 / 12.0
    # batched: both vehicles identical (same commands, spawn differs only in east)
    np.testing.assert_allclose(r["fossen6dof.wrench"][1, -1], w, atol=1e-12)


def test_snapshot_restore_continues_bit_identically() -> None:
    # plugin states (6-DOF state, rotors, battery, allocator, PID integrals) are snapshotted
    sim = load_simulation("bluerov2_station_keeping", variables={"end": 2})
    sim.step(15)
    snap = sim.snapshot()
    r1 = sim.run()
    pos1, volt1 = r1["truth.pos"].copy(), r1["fossen6dof.voltage"].copy()
    sim.restore(snap)
    r2 = sim.run()
    np.testing.assert_array_equal(r2["truth.pos"], pos1)
    np.testing.assert_array_equal(r2["fossen6dof.voltage"], volt1)
