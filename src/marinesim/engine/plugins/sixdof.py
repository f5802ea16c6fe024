"""``fossen6dof`` motion plugin: any 6-DOF motion model and its actuators inside the engine.

A thin adapter: the vehicle is the motion model of its preset's kind, chosen by name through
:func:`marinesim.models.sixdof.motion.motion_model` (generic Fossen 6-DOF, PythonVehicleSimulator
REMUS 100 / Otter, the PythonVehicleSimulator fleet) and driven through that one face
(``init`` / ``step`` / ``pose``); the thruster plant is
:mod:`marinesim.actuators.plant`; the battery :mod:`marinesim.models.battery`.  This module
only moves commands from the bus into them, reports events and logs.

The engine has no "actuator" plugin kind (motion, sensor, controller, autonomy, ...), so the
**actuator chain runs inside this motion plugin's substep**, driven by the commands that
controllers publish on the entity's local bus (held over the tick, engine spec §4.2):

* ``thrusters/cmd`` (N, k) — per-thruster commands, ESC pulse widths [µs] (``input: pwm``,
  default) or forces along each thruster axis [N] (``input: force``).  Chain per substep:
  PWM → ESC output u → rotor dynamics (first-order lag of u, ``rotor_time_constant``) →
  T200 force at the **battery's terminal voltage** (shipped cubic fit,
  :class:`marinesim.actuators.t200.T200Cubic`) → body wrench τ = B·f
  (:mod:`marinesim.allocation.tam`).  The current per motor (same T200 model) discharges an
  internal-resistance battery (:mod:`marinesim.models.battery`) whose terminal voltage sags
  with the total current; the voltage of the previous substep is used (explicit, no algebraic
  loop).  ``thrusters/fail`` (double: 0-based thruster index) fails a thruster in the plant:
  its command is held at neutral and its thrust decays through its rotor dynamics.
* ``actuators`` (an :class:`~marinesim.actuators.actuator_set.ActuatorSet`) instead of
  ``thrusters``: UUV Simulator thruster chains on ``thrusters/cmd`` (N, k_t)
  (:mod:`marinesim.actuators.thruster`) and fins on ``fins/cmd`` (N, k_f) [rad]
  (:mod:`marinesim.actuators.fins`, with the current in body axes).
* ``wrench/cmd`` (N, 6) — a body wrench [N, N·m] applied directly (vehicles with neither
  ``thrusters`` nor ``actuators``).
* ``fins/cmd`` (N, 2) — rudder and stern-plane angles [rad] and ``propeller/cmd`` (N,) —
  propeller speed [rpm], for the PythonVehicleSimulator REMUS 100 (``preset: remus100``),
  whose fin and propeller lags are part of its PVS-exact dynamics
  (:mod:`marinesim.models.sixdof.pvs`).
* ``actuators/cmd`` (N, m) — commanded actuators in the vehicle's units, for the Otter and the
  PythonVehicleSimulator fleet (``preset: tanker``, ``torpedo`` ... ``vehicle_args``: the
  constructor's arguments, e.g. ``{control_system: headingAutopilot, r: 30}``).  A fleet
  vehicle runs its own control system (:func:`marinesim.control.pvs_fleet.onboard`: the
  constructor's ``controlSystem``, its step-input schedule for ``stepInput``) every substep;
  a vehicle that received ``actuators/cmd`` uses the held command instead.

Published every tick (last substep): ``battery/voltage`` (N,) [V], ``thrusters/current``
(N, k) [A] and ``thrusters/thrust`` (N, k) [N] (vehicles with thrusters).

Truth: pos = η position, quat = attitude (body FRD → NED), vel/ang_vel = ν, accel = body
specific force (finite difference over the substep).  The environment's current (uniform and
field, sampled at each substep start at the vehicles' positions) enters the 6-DOF model as
the relative velocity ν_r = ν − ν_c; PythonVehicleSimulator models take the uniform current
in their constructor (``V_current``, ``beta_current``) unless ``vehicle_args`` gives it.  A vehicle the model stops (non-finite state or beyond
``max_speed``/``max_rate``) gets a non-finite truth so that the engine's ``on_nonfinite``
policy applies, with an event naming the entity, the time and the model's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import model_validator

from marinesim.actuators import fins as fin_model
from marinesim.actuators import plant as plant_model
from marinesim.actuators import thruster as thruster_model
from marinesim.actuators.actuator_set import ActuatorSet
from marinesim.actuators.t200 import V_MAX, V_MIN, T200Cubic
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.control import pvs_fleet
from marinesim.core.errors import ConfigError
from marinesim.core.frames import euler_from_quat
from marinesim.core.params import ParamsBase, field
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin
from marinesim.models import battery as battery_model
from marinesim.models import presets
from marinesim.models.sixdof import fossen6dof
from marinesim.models.sixdof.motion import KINDS, MotionModel, Water, motion_model

__all__ = ["SixDofMotion", "SixDofParams", "ThrusterPlantParams"]

F64 = NDArray[np.float64]

#: Motion-model kind → the vehicle's own control system (control layer), where it has one.
ONBOARD: dict[str, Callable[[Any, int], tuple[Any, dict[str, Any]]]] = {
    "pvs_fleet": pvs_fleet.onboard,
}


class ThrusterPlantParams(ParamsBase):
    """The simulated thrusters (T200) and the battery feeding them."""

    layout: str = field("bluerov2_heavy", description="thruster layout (allocation.vehicles)")
    bound_set: Literal["ardusub_positive_forward", "flipped", "symmetric"] = field(
        "ardusub_positive_forward",
        description="which T200 side pushes along each positive direction (allocation §8.3)",
    )
    input: Literal["pwm", "force"] = field(
        "pwm", description="unit of thrusters/cmd: ESC pulse [µs] or force along the axis [N]"
    )
    rotor_time_constant: float = field(
        0.1,
        unit="s",
        ge=0,
        description="first-order lag of the ESC output (0 = none, with a warning)",
    )
    t200_profile: Literal["default", "mrobosub"] = field(
        "default", description="T200 cubic coefficient set of the plant"
    )
    failed: list[int] = field(
        default_factory=list, description="0-based thrusters failed from the start"
    )
    battery: battery_model.Params = field(
        default_factory=battery_model.Params, description="internal-resistance battery"
    )

    @model_validator(mode="after")
    def _check(self) -> ThrusterPlantParams:
        try:
            layout = get_layout(self.layout, self.bound_set)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        k = len(layout.thrusters)
        bad = [i for i in self.failed if not 0 <= i < k]
        if bad:
            raise ValueError(f"failed thruster index {bad[0]} outside 0..{k - 1}")
        if self.rotor_time_constant == 0:
            import warnings

            from marinesim.core.errors import ConfigWarning

            warnings.warn(
                ConfigWarning(
                    "0 s: the ESC output follows the command "
                    "within one step (no rotor lag; a T200 rotor takes about 0.1 s)",
                    param="thrusters.rotor_time_constant",
                ),
                stacklevel=2,
            )
        return self


class SixDofParams(ParamsBase):
    """Vehicle (preset or inline Fossen parameters), integrator and actuators."""

    preset: str | None = field(
        None, description="vehicle preset (marinesim vehicles list), e.g. bluerov2_heavy"
    )
    model: fossen6dof.Params | None = field(
        None, description="inline Fossen 6-DOF parameters instead of a preset"
    )
    integrator: Literal["rk4", "semi_implicit_euler"] | None = field(
        None, description="override the preset's integrator (fossen6dof presets only)"
    )
    thrusters: ThrusterPlantParams | None = field(
        None, description="T200 thrusters + battery driven by thrusters/cmd (else wrench/cmd)"
    )
    actuators: ActuatorSet | None = field(
        None,
        description="UUV Simulator thruster chain and fins (thrusters/cmd, fins/cmd; FRD)",
    )
    max_speed: float | None = field(
        None, unit="m/s", gt=0, description="divergence bound on |ν_lin| (default: model's)"
    )
    vehicle_args: dict[str, Any] | None = field(
        None,
        description="PythonVehicleSimulator presets: constructor arguments (control_system, "
        "r, U, V_current ...; marinesim vehicles show NAME)",
    )

    @model_validator(mode="after")
    def _one_vehicle(self) -> SixDofParams:
        if (self.preset is None) == (self.model is None):
            raise ValueError("give exactly one of 'preset' or 'model'")
        if self.thrusters is not None and self.actuators is not None:
            raise ValueError("give either 'thrusters' (T200 + battery) or 'actuators', not both")
        kind = "fossen6dof"
        if self.preset is not None:
            try:
                p = presets.get(self.preset)
            except ConfigError as exc:
                raise ValueError(exc.message) from None
            kind = p.model
            if kind not in KINDS:
                raise ValueError(
                    f"preset {p.name!r} has model kind {kind!r}, which has no motion model"
                )
            if not motion_model(p.name).input_is_wrench:
                what = f"preset {p.name!r} is PythonVehicleSimulator-exact"
                if self.integrator is not None:
                    raise ValueError(
                        f"{what}: its integrator is PythonVehicleSimulator's own (semi-implicit "
                        "Euler for REMUS 100 and Otter, forward Euler for the fleet); remove "
                        "'integrator'"
                    )
                if self.thrusters is not None or self.actuators is not None:
                    raise ValueError(
                        f"{what}: it has its own actuators ({_inputs_text(p.name)}); "
                        "remove 'thrusters' / 'actuators'"
                    )
                if self.max_speed is not None:
                    raise ValueError(f"{what}: remove 'max_speed'")
                try:
                    motion_model(p.name, self.vehicle_args or {})
                except ConfigError as exc:
                    key = f"vehicle_args.{exc.param}" if exc.param else "vehicle_args"
                    raise ValueError(f"{key}: {exc.message}") from None
                except TypeError as exc:
                    raise ValueError(f"vehicle_args: {exc}") from None
        if kind == "fossen6dof" and self.vehicle_args is not None:
            raise ValueError("'vehicle_args' applies to PythonVehicleSimulator presets only")
        return self


def _inputs_text(preset: str) -> str:
    return ", ".join(t for t, _k, _w in motion_model(preset).inputs)


def _fossen_params(p: SixDofParams) -> fossen6dof.Params:
    """Effective fossen6dof Params of a fossen6dof preset or inline model."""
    if p.model is not None:
        base = p.model
    else:
        assert p.preset is not None
        base = fossen6dof.Params.model_validate(presets.get(p.preset).params)
    changes: dict[str, Any] = {}
    if p.integrator is not None:
        changes["integrator"] = p.integrator
    if p.max_speed is not None:
        changes["max_speed"] = p.max_speed
    return base.model_copy(update=changes) if changes else base


def _build_motion(p: SixDofParams) -> MotionModel:
    if p.model is not None:
        return motion_model("fossen6dof", _fossen_params(p))
    assert p.preset is not None
    if presets.get(p.preset).model == "fossen6dof":
        return motion_model(p.preset, _fossen_params(p))
    return motion_model(p.preset, p.vehicle_args or {})


def _rows_value(inbox: Any, topic: str, out: F64) -> F64:
    """Copy of ``out`` updated with every message of ``topic`` (delivery order, by row)."""
    res = out
    for m in inbox.topic(topic):
        val = np.asarray(m.value, dtype=float)
        if res is out:
            res = out.copy()
        res[m.rows] = val.reshape((len(m.rows), *out.shape[1:]))
    return res


class SixDofMotion(Plugin):
    """Any registered 6-DOF motion model with thrusters, fins and battery in the substep."""

    kind: ClassVar[str] = "motion"
    Params = SixDofParams
    subscribes: ClassVar[dict[str, str]] = {}
    publishes: ClassVar[dict[str, str]] = {}
    example_params: ClassVar[dict[str, Any]] = {"preset": "bluerov2_heavy"}

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        if params is None:
            params = SixDofParams(preset="bluerov2_heavy")
        super().__init__(name, params)
        p: SixDofParams = self.params  # type: ignore[assignment]
        self.motion = _build_motion(p)
        subs: dict[str, str] = {}
        pubs: dict[str, str] = {}
        self.plant: plant_model.T200Plant | None = None
        self.names: tuple[str, ...] = ()
        self.thruster_bank: thruster_model.ThrusterBankParams | None = None
        self.fin_bank: fin_model.FinBankParams | None = None
        if p.actuators is not None:
            self.thruster_bank = p.actuators.thruster_bank() if p.actuators.thrusters else None
            self.fin_bank = p.actuators.fin_bank() if p.actuators.fins else None
            if self.thruster_bank is not None:
                subs["thrusters/cmd"] = "array"
            if self.fin_bank is not None:
                subs["fins/cmd"] = "array"
        elif p.thrusters is not None:
            tp = p.thrusters
            geometry = Geometry(get_layout(tp.layout, tp.bound_set))
            self.names = tuple(geometry.names)
            self.plant = plant_model.T200Plant.from_geometry(
                geometry,
                t200=T200Cubic(profile=tp.t200_profile),
                input=tp.input,
                rotor_time_constant=tp.rotor_time_constant,
            )
            subs.update({"thrusters/cmd": "array", "thrusters/fail": "double"})
            pubs.update(
                {
                    "battery/voltage": "double",
                    "thrusters/current": "array",
                    "thrusters/thrust": "array",
                }
            )
        else:
            subs.update({topic: kind for topic, kind, _w in self.motion.inputs})
        self.onboard = ONBOARD.get(self.motion.kind)
        self._onboard_fn: Any = None
        self.subscribes = subs
        self.publishes = pubs

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """Its laws in the generated tick, or None (this model runs tick by tick).

        Declared: the PythonVehicleSimulator REMUS 100 in a uniform current
        (:mod:`marinesim.engine.plugins.remus_laws`); the PythonVehicleSimulator fleet, any
        ``control_system`` (:mod:`marinesim.engine.plugins.fleet_laws`); a Fossen model with
        a T200 plant (:mod:`marinesim.engine.plugins.sixdof_laws`).  Any other setup: the
        reason it runs tick by tick.
        """
        from marinesim.models.sixdof.motion import FleetMotion, PvsMotion

        p: Any = self.params
        if p.thrusters is not None:
            from marinesim.engine.plugins.sixdof_laws import motion_laws

            return motion_laws(self, slot, sim)
        if p.actuators is not None:
            return "a UUV Simulator actuator set (thruster and fin banks step in numpy)"
        if isinstance(self.motion, FleetMotion):
            from marinesim.engine.plugins.fleet_laws import fleet_laws

            return fleet_laws(self, slot, sim)
        if not isinstance(self.motion, PvsMotion):
            return "a Fossen model without a T200 thruster plant (wrench/cmd from the bus)"
        from marinesim.engine.plugins.remus_laws import pvs_laws

        return pvs_laws(self, slot, sim)

    # hooks ------------------------------------------------------------------------------------
    def start(self, ctx: Any, rng: Any) -> None:
        """Initialise the model at the spawn poses and the actuators at rest."""
        truth = ctx.truth
        n = ctx.n
        st = ctx.state
        env = ctx.env
        motion = self.motion
        if motion.current_in_constructor:
            if env.current_field is not None:
                ctx.events.emit(
                    "fossen6dof",
                    f"the {motion.name} (PythonVehicleSimulator) model takes a uniform current "
                    "only; the current field is ignored",
                    severity="warning",
                )
            motion = motion.in_current(env.current_north, env.current_east)
        st["motion"] = motion
        nu = np.concatenate([truth.vel, truth.ang_vel], axis=1)
        st["x"] = motion.init(truth.pos, truth.quat, nu, ctx.t)
        for text in motion.environment_warnings(env.density, env.gravity):
            ctx.events.emit("fossen6dof", text, severity="warning")
        st["cmd"] = np.zeros((n, motion.m))
        st["commanded"] = np.zeros(n, dtype=bool)
        if self.onboard is not None:  # the function is rebuilt every start; its state in st
            self._onboard_fn, st["onboard"] = self.onboard(motion.built, n)
        st["wrench"] = np.zeros((n, 6))
        if self.thruster_bank is not None:
            k = len(self.thruster_bank.thrusters)
            st["uuv_cmd"] = np.zeros((n, k))
            st["uuv"] = thruster_model.init(self.thruster_bank, n)
        if self.fin_bank is not None:
            st["fin_cmd"] = np.zeros((n, len(self.fin_bank.fins)))
            st["fins"] = fin_model.init(self.fin_bank, n)
        tp = self.params.thrusters  # type: ignore[attr-defined]
        if tp is not None:
            assert self.plant is not None
            k = self.plant.k
            enabled = np.ones((n, k), dtype=bool)
            enabled[:, list(tp.failed)] = False
            st["enabled"] = enabled
            st["cmd"] = np.full((n, k), self.plant.neutral)
            st["rotor"] = np.zeros((n, k))  # ESC output after the rotor lag [-]
            st["thrust"] = np.zeros((n, k))
            st["current"] = np.zeros((n, k))
            st["battery"] = battery_model.init(tp.battery, n)
            st["voltage"] = battery_model.voltage(tp.battery, st["battery"], np.zeros(n))
            st["v_clamped"] = np.zeros(n, dtype=bool)
        st["accel"] = np.zeros((n, 3))
        st["bad"] = np.zeros(n, dtype=bool)
        self._set_truth(ctx)
        self._log(ctx)

    def substep(self, ctx: Any, rng: Any) -> None:
        """Apply the held commands through the actuators and integrate over ``ctx.h``."""
        st = ctx.state
        h = ctx.h
        inbox = ctx.inbox
        last = ctx.substep == round(ctx.dt / h) - 1
        motion: MotionModel = st["motion"]
        x = st["x"]
        n = ctx.n
        if self.plant is not None:
            cmd = self._thrusters(ctx, inbox, h)
        elif self.thruster_bank is not None or self.fin_bank is not None:
            cmd = self._uuv_actuators(ctx, inbox, h, motion, x)
        else:
            cmd = self._commands(ctx, inbox, motion, x, h)
            if motion.input_is_wrench:
                st["wrench"] = cmd
        env = ctx.env
        if motion.current_in_constructor:  # the still water of this model (never written)
            water = st.get("still_water")
            if water is None or water.current.shape[0] != n:
                water = st["still_water"] = Water(np.zeros((n, 3)), env.density, env.gravity)
        else:
            water = Water(np.zeros((n, 3)), env.density, env.gravity)
            pos = motion.pose(x)[0]
            water.current[:, :2] = env.current(pos[:, 0], pos[:, 1])
        x1, events = motion.step(x, cmd, h, water)
        pose = None
        if last:  # the truth's specific force describes t_{k+1}: only the last substep's
            pose = motion.pose(x1)
            st["accel"] = motion.specific_force(motion.nu(x), x1, h, env.gravity, pose[1])
        for text in events:
            self._diverged(ctx, text, ctx.t + h)
        alive = motion.alive(x1)
        bad = st["bad"]
        if not alive.all() or bad.any():
            st["bad"] = bad | ~alive
        st["x"] = x1
        if last:
            self._set_truth(ctx, pose)
            self._log(ctx, pose)
            if self.plant is not None:
                self._publish(ctx)
        elif st["bad"].any():
            self._set_truth(ctx)

    # inputs -----------------------------------------------------------------------------------
    def _commands(self, ctx: Any, inbox: Any, motion: MotionModel, x: Any, h: float) -> F64:
        """The model's own inputs held from the bus (columns of ``motion.inputs``)."""
        st = ctx.state
        cmd = st["cmd"]
        new = cmd
        col = 0
        for topic, _kind, w in motion.inputs if inbox.messages else ():
            view = cmd[:, col : col + w]
            part = _rows_value(inbox, topic, view)
            if part is not view:
                if new is cmd:
                    new = cmd.copy()
                new[:, col : col + w] = part
                got = np.zeros(ctx.n, dtype=bool)
                for m in inbox.topic(topic):
                    got[m.rows] = True
                st["commanded"] = st["commanded"] | got
            col += w
        st["cmd"] = new
        if "onboard" not in st:
            return new
        eta, nu = motion.eta_nu(x)
        u, st["onboard"] = self._onboard_fn(st["onboard"], ctx.t, eta, nu, h)
        return np.where(st["commanded"][:, None], new, u)

    def _uuv_actuators(self, ctx: Any, inbox: Any, h: float, motion: MotionModel, x: Any) -> F64:
        """UUV Simulator thruster chain and fins over one substep; their body wrench (N, 6)."""
        st = ctx.state
        n = ctx.n
        tau = np.zeros((n, 6))
        if self.thruster_bank is not None:
            st["uuv_cmd"] = _rows_value(inbox, "thrusters/cmd", st["uuv_cmd"])
            ts = thruster_model.step(self.thruster_bank, st["uuv"], st["uuv_cmd"], {"t": ctx.t}, h)
            st["uuv"] = ts
            tau = tau + thruster_model.wrench(self.thruster_bank, ts.thrust)
        if self.fin_bank is not None:
            st["fin_cmd"] = _rows_value(inbox, "fins/cmd", st["fin_cmd"])
            pos = motion.pose(x)[0]
            cur_ned = np.zeros((n, 3))
            cur_ned[:, :2] = ctx.env.current(pos[:, 0], pos[:, 1])
            rot = motion.rotation(x)
            cur_body = np.einsum("nji,nj->ni", rot, cur_ned)  # Rᵀ v_c
            nu = motion.eta_nu(x)[1]
            fs = fin_model.step(
                self.fin_bank, st["fins"], st["fin_cmd"], {"current_body": cur_body}, h, nu
            )
            st["fins"] = fs
            tau = tau + fs.wrench()
        st["wrench"] = tau
        return tau

    def _thrusters(self, ctx: Any, inbox: Any, h: float) -> F64:
        """T200 plant (:func:`marinesim.actuators.plant.step`) and battery; the body wrench."""
        st = ctx.state
        tp: ThrusterPlantParams = self.params.thrusters  # type: ignore[attr-defined]
        plant = self.plant
        assert plant is not None
        k = plant.k
        st["cmd"] = _rows_value(inbox, "thrusters/cmd", st["cmd"])
        for m in inbox.topic("thrusters/fail"):
            idx = np.asarray(m.value, dtype=float)
            for row, kk in zip(m.rows.tolist(), idx.tolist(), strict=True):
                ki = int(kk)
                if float(kk) != ki or not 0 <= ki < k:
                    ctx.events.emit(
                        "thruster_fail",
                        f"thrusters/fail: ignored invalid thruster index {kk!r} (0..{k - 1})",
                        severity="warning",
                        rows=[row],
                    )
                    continue
                if st["enabled"][row, ki]:
                    en = st["enabled"].copy()
                    en[row, ki] = False
                    st["enabled"] = en
                    ctx.events.emit(
                        "thruster_fail",
                        # numbered from 1 as in the figures and `alloc report --failed`
                        # (the topic carries the 0-based index)
                        f"thruster {ki + 1} ({self.names[ki]}, index {ki}) failed "
                        f"at t = {ctx.t:g} s",
                        severity="warning",
                        rows=[row],
                    )
        empty = battery_model.cut_off(tp.battery, st["battery"])
        out = plant_model.step(
            plant, st["rotor"], st["cmd"], st["voltage"], st["enabled"] & ~empty[:, None], h
        )
        clamped = out.voltage_clamped & ~st["v_clamped"]
        if np.any(clamped):
            ctx.events.emit(
                "battery",
                f"battery voltage outside the T200 data range {V_MIN:g}-{V_MAX:g} V; the "
                "thruster model clamps it",
                severity="warning",
                rows=np.flatnonzero(clamped),
            )
            st["v_clamped"] = st["v_clamped"] | clamped
        newly = empty & ~st.get("b_cut", np.zeros_like(empty))
        if np.any(newly):
            ctx.events.emit(
                "battery",
                f"battery empty at t = {ctx.t:g} s: cut off, the thrusters stop",
                severity="warning",
                rows=np.flatnonzero(newly),
            )
        st["b_cut"] = empty
        st["rotor"] = out.rotor
        st["thrust"] = out.thrust
        st["current"] = out.current
        total = out.current.sum(axis=1)
        st["battery"] = battery_model.step(tp.battery, st["battery"], total, h)
        st["voltage"] = battery_model.voltage(tp.battery, st["battery"], total)
        st["wrench"] = out.wrench
        return out.wrench

    # helpers ----------------------------------------------------------------------------------
    def _diverged(self, ctx: Any, text: str, t: float) -> None:
        """Report a model-stopped vehicle by entity name (index in the model's text)."""
        try:
            i = int(text.split("vehicle[", 1)[1].split("]", 1)[0])
        except (IndexError, ValueError):
            ctx.events.emit("NumericalError", f"t={t:.6g} s: {text}", severity="error")
            return
        name = ctx.names[i] if 0 <= i < ctx.n else f"row {i}"
        ctx.events.emit(
            "NumericalError",
            f"{name}: t={t:.6g} s: {text.replace(f'vehicle[{i}]', name)}",
            severity="error",
            rows=[i],
        )

    def _set_truth(self, ctx: Any, pose: Any = None) -> None:
        st = ctx.state
        pos, quat, vel, ang = st["motion"].pose(st["x"]) if pose is None else pose
        bad = st["bad"]
        accel = st["accel"]
        if np.any(bad):
            b = bad[:, None]
            pos = np.where(b, np.nan, pos)
            quat = np.where(b, np.nan, quat)
            vel = np.where(b, np.nan, vel)
            ang = np.where(b, np.nan, ang)
        ctx.set_truth(
            VehicleState(pos.copy(), quat.copy(), vel.copy(), ang.copy(), accel.copy(), ctx.t)
        )

    def _log(self, ctx: Any, pose: Any = None) -> None:
        st = ctx.state
        motion: MotionModel = st["motion"]
        pos, quat, vel, ang = motion.pose(st["x"]) if pose is None else pose
        eul = np.degrees(euler_from_quat(quat))
        ctx.log("euler", eul, "deg", ("roll", "pitch", "yaw"))
        ctx.log("nu", np.concatenate([vel, ang], axis=1), "m/s, m/s, m/s, rad/s, rad/s, rad/s", ("u", "v", "w", "p", "q", "r"))
        act = motion.actuator_log(st["x"])
        if act is not None:
            ctx.log("actuators", act[0], act[1], act[2])
            if "onboard" in st:
                self._log_onboard(ctx, act[2])
            return
        if self.plant is not None:
            labels = tuple(f"t{i}" for i in range(self.plant.k))
            ctx.log("thrust", st["thrust"], "N", labels)
            ctx.log("rotor", st["rotor"], "", labels)
            ctx.log("current", st["current"], "A", labels)
            ctx.log("current_total", st["current"].sum(axis=1), "A")
            ctx.log("voltage", st["voltage"], "V")
            ctx.log("soc", st["battery"].soc, "")
            ctx.log("enabled", st["enabled"].astype(float), "", labels)
            ctx.log("wrench", st["wrench"], "N, N, N, N m, N m, N m", ("X", "Y", "Z", "K", "M", "N"))
        else:
            ctx.log("wrench", st["wrench"], "N, N, N, N m, N m, N m", ("X", "Y", "Z", "K", "M", "N"))
            if self.thruster_bank is not None:
                ctx.log("thrust", st["uuv"].thrust, "N")
                ctx.log("rotor", st["uuv"].rotor, "")
            if self.fin_bank is not None:
                ctx.log("fin_angle", np.degrees(st["fins"].angle), "deg")

    def _log_onboard(self, ctx: Any, labels: tuple[str, ...]) -> None:
        """The command and the states of the vehicle's own control system (SI, angles rad)."""
        st = ctx.state
        ctx.log("command", st["cmd"], "", labels)
        keys = sorted(
            k for k, v in st["onboard"].items() if not k.startswith("_") and np.shape(v) == (ctx.n,)
        )
        if keys:
            vals = np.stack([np.asarray(st["onboard"][k], dtype=float) for k in keys], axis=1)
            ctx.log("autopilot", vals, "SI", tuple(keys))

    def _publish(self, ctx: Any) -> None:
        st = ctx.state
        if ctx.wants("battery/voltage"):
            ctx.publish("battery/voltage", st["voltage"])
        if ctx.wants("thrusters/current"):
            ctx.publish("thrusters/current", st["current"])
        if ctx.wants("thrusters/thrust"):
            ctx.publish("thrusters/thrust", st["thrust"])
