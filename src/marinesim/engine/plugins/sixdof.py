"""``fossen6dof`` motion plugin: a 6-DOF vehicle and its actuators inside the engine.

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
  (:mod:`marinesim.models.pvs`).

Published every tick (last substep): ``battery/voltage`` (N,) [V], ``thrusters/current``
(N, k) [A] and ``thrusters/thrust`` (N, k) [N] (vehicles with thrusters).

Truth: pos = η position, quat = attitude (body FRD → NED), vel/ang_vel = ν, accel = body
specific force (finite difference over the substep).  The environment's current (uniform and
field, sampled at each substep start at the vehicles' positions) enters the 6-DOF model as
the relative velocity ν_r = ν − ν_c.  A vehicle the model stops (non-finite state or beyond
``max_speed``/``max_rate``) gets a non-finite truth so that the engine's ``on_nonfinite``
policy applies, with an event naming the entity, the time and the model's reason.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import model_validator

from marinesim.actuators import fins as fin_model
from marinesim.actuators import thruster as thruster_model
from marinesim.actuators import thruster_dynamics
from marinesim.actuators.actuator_set import ActuatorSet
from marinesim.actuators.t200 import V_MAX, V_MIN, T200Cubic, u_from_pwm
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.frames import euler_from_quat, quat_from_euler, rotation_from_quat
from marinesim.core.params import ParamsBase, field
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin
from marinesim.models import battery as battery_model
from marinesim.models import fossen6dof, presets, pvs

__all__ = ["SixDofMotion", "SixDofParams", "ThrusterPlantParams"]

F64 = NDArray[np.float64]


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
        0.1, unit="s", ge=0, description="first-order lag of the ESC output (0 = none)"
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

    @model_validator(mode="after")
    def _one_vehicle(self) -> SixDofParams:
        if (self.preset is None) == (self.model is None):
            raise ValueError("give exactly one of 'preset' or 'model'")
        if self.thrusters is not None and self.actuators is not None:
            raise ValueError("give either 'thrusters' (T200 + battery) or 'actuators', not both")
        if self.preset is not None:
            try:
                p = presets.get(self.preset)
            except ConfigError as exc:
                raise ValueError(exc.message) from None
            if p.model == "pvs":
                if p.name != "remus100":
                    raise ValueError(
                        f"preset {p.name!r} (PythonVehicleSimulator {p.name}) is not supported "
                        "yet by fossen6dof; use remus100 or a fossen6dof preset"
                    )
                if self.integrator is not None:
                    raise ValueError(
                        "preset 'remus100' is PythonVehicleSimulator-exact: its integrator is "
                        "PVS's semi-implicit Euler; remove 'integrator'"
                    )
                if self.thrusters is not None or self.actuators is not None:
                    raise ValueError(
                        "preset 'remus100' has its own propeller and fins (fins/cmd, "
                        "propeller/cmd); remove 'thrusters'"
                    )
        return self


def _fossen_params(p: SixDofParams) -> fossen6dof.Params | None:
    """Effective fossen6dof Params (None for the PVS REMUS 100)."""
    if p.model is not None:
        base = p.model
    else:
        assert p.preset is not None
        pre = presets.get(p.preset)
        if pre.model == "pvs":
            return None
        base = fossen6dof.Params.model_validate(pre.params)
    changes: dict[str, Any] = {}
    if p.integrator is not None:
        changes["integrator"] = p.integrator
    if p.max_speed is not None:
        changes["max_speed"] = p.max_speed
    return base.model_copy(update=changes) if changes else base


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
    """Fossen 6-DOF vehicle (or PVS REMUS 100) with thrusters, fins and battery in the substep."""

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
        fp = _fossen_params(p)
        self.is_pvs = fp is None
        self.model = fossen6dof.build(fp) if fp is not None else None
        subs: dict[str, str] = {}
        pubs: dict[str, str] = {}
        self.geometry: Geometry | None = None
        self.thruster_bank: thruster_model.ThrusterBankParams | None = None
        self.fin_bank: fin_model.FinBankParams | None = None
        self.t200: T200Cubic | None = None
        if self.is_pvs:
            subs.update({"fins/cmd": "array", "propeller/cmd": "double"})
        elif p.actuators is not None:
            self.thruster_bank = p.actuators.thruster_bank() if p.actuators.thrusters else None
            self.fin_bank = p.actuators.fin_bank() if p.actuators.fins else None
            if self.thruster_bank is not None:
                subs["thrusters/cmd"] = "array"
            if self.fin_bank is not None:
                subs["fins/cmd"] = "array"
        elif p.thrusters is not None:
            tp = p.thrusters
            self.geometry = Geometry(get_layout(tp.layout, tp.bound_set))
            self.t200 = T200Cubic(profile=tp.t200_profile)
            subs.update({"thrusters/cmd": "array", "thrusters/fail": "double"})
            pubs.update(
                {
                    "battery/voltage": "double",
                    "thrusters/current": "array",
                    "thrusters/thrust": "array",
                }
            )
        else:
            subs["wrench/cmd"] = "array"
        self.subscribes = subs
        self.publishes = pubs

    # hooks ------------------------------------------------------------------------------------
    def start(self, ctx: Any, rng: Any) -> None:
        """Initialise the model at the spawn poses and the actuators at rest."""
        truth = ctx.truth
        n = ctx.n
        st = ctx.state
        env = ctx.env
        if self.is_pvs:
            cn, ce = env.current_north, env.current_east
            if env.current_field is not None:
                ctx.events.emit(
                    "fossen6dof",
                    "the REMUS 100 (PVS) model takes a uniform current only; the current field "
                    "is ignored",
                    severity="warning",
                )
            speed = math.hypot(cn, ce)
            beta = math.degrees(math.atan2(ce, cn)) if speed > 0 else 0.0
            st["pvs"] = pvs.remus100("stepInput", V_current=speed, beta_current=beta)
            euler = euler_from_quat(truth.quat)
            eta = np.concatenate([truth.pos, euler], axis=1)
            nu = np.concatenate([truth.vel, truth.ang_vel], axis=1)
            st["eta"] = eta
            st["nu"] = nu
            st["act"] = np.zeros((n, 3))
            st["cmd"] = np.zeros((n, 3))
            st["alive"] = np.ones(n, dtype=bool)
        else:
            model = self.model
            assert model is not None
            if model.attitude == "quaternion":
                att = truth.quat.copy()
            else:
                att = euler_from_quat(truth.quat)
            nu = np.concatenate([truth.vel, truth.ang_vel], axis=1)
            st["x"] = fossen6dof.State(
                pos=truth.pos.copy(), att=att, nu=nu, alive=np.ones(n, dtype=bool), t=ctx.t
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConfigWarning)
                fossen6dof.check_environment(
                    model, fossen6dof.Env(density=env.density, gravity=env.gravity)
                )
            for w in caught:
                ctx.events.emit("fossen6dof", str(w.message), severity="warning")
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
                assert self.geometry is not None
                k = self.geometry.n
                enabled = np.ones((n, k), dtype=bool)
                enabled[:, list(tp.failed)] = False
                st["enabled"] = enabled
                neutral = 1500.0 if tp.input == "pwm" else 0.0
                st["cmd"] = np.full((n, k), neutral)
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
        if self.is_pvs:
            self._substep_pvs(ctx, inbox, h, last)
        else:
            self._substep_fossen(ctx, inbox, h, last)
        if last:
            self._set_truth(ctx)
            self._log(ctx)
            if self.geometry is not None:
                self._publish(ctx)
        elif np.any(st["bad"]):
            self._set_truth(ctx)

    # fossen -------------------------------------------------------------------------------
    def _substep_fossen(self, ctx: Any, inbox: Any, h: float, last: bool) -> None:
        st = ctx.state
        model = self.model
        assert model is not None
        x: fossen6dof.State = st["x"]
        n = x.n
        cur = ctx.env.current(x.pos[:, 0], x.pos[:, 1])
        cur3 = np.zeros((n, 3))
        cur3[:, :2] = cur
        if self.geometry is not None:
            tau = self._thrusters(ctx, inbox, h)
        elif self.thruster_bank is not None or self.fin_bank is not None:
            tau = self._uuv_actuators(ctx, inbox, h, x, cur3)
        else:
            st["wrench"] = _rows_value(inbox, "wrench/cmd", st["wrench"])
            tau = st["wrench"]
        env = fossen6dof.Env(current=cur3, density=ctx.env.density, gravity=ctx.env.gravity)
        x1 = fossen6dof.step(model, x, tau, env, h)
        if last:  # the truth's specific force describes t_{k+1}: only the last substep's
            st["accel"] = self._specific_force(x.nu, x1.nu, x1.att, h, ctx.env.gravity, model)
        for text in x1.events:
            self._diverged(ctx, text, ctx.t + h)
        st["bad"] = st["bad"] | ~x1.alive
        st["x"] = fossen6dof.State(
            pos=x1.pos, att=x1.att, nu=x1.nu, alive=x1.alive, t=x1.t, events=()
        )

    def _uuv_actuators(self, ctx: Any, inbox: Any, h: float, x: Any, cur_ned: F64) -> F64:
        """UUV Simulator thruster chain and fins over one substep; their body wrench (N, 6)."""
        st = ctx.state
        tau = np.zeros((x.n, 6))
        if self.thruster_bank is not None:
            st["uuv_cmd"] = _rows_value(inbox, "thrusters/cmd", st["uuv_cmd"])
            ts = thruster_model.step(self.thruster_bank, st["uuv"], st["uuv_cmd"], {"t": ctx.t}, h)
            st["uuv"] = ts
            tau = tau + thruster_model.wrench(self.thruster_bank, ts.thrust)
        if self.fin_bank is not None:
            st["fin_cmd"] = _rows_value(inbox, "fins/cmd", st["fin_cmd"])
            pos, quat, _v, _w = self._pose(ctx)
            rot = rotation_from_quat(quat)
            cur_body = np.einsum("nji,nj->ni", rot, cur_ned)  # Rᵀ v_c
            fs = fin_model.step(
                self.fin_bank, st["fins"], st["fin_cmd"], {"current_body": cur_body}, h, x.nu
            )
            st["fins"] = fs
            tau = tau + fs.wrench()
        st["wrench"] = tau
        return tau

    def _thrusters(self, ctx: Any, inbox: Any, h: float) -> F64:
        st = ctx.state
        tp: ThrusterPlantParams = self.params.thrusters  # type: ignore[attr-defined]
        g = self.geometry
        t200 = self.t200
        assert g is not None and t200 is not None
        st["cmd"] = _rows_value(inbox, "thrusters/cmd", st["cmd"])
        for m in inbox.topic("thrusters/fail"):
            idx = np.asarray(m.value, dtype=float)
            for row, k in zip(m.rows.tolist(), idx.tolist(), strict=True):
                ki = int(k)
                if float(k) != ki or not 0 <= ki < g.n:
                    ctx.events.emit(
                        "thruster_fail",
                        f"thrusters/fail: ignored invalid thruster index {k!r} (0..{g.n - 1})",
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
                        f"thruster {ki} ({g.names[ki]}) failed at t = {ctx.t:g} s",
                        severity="warning",
                        rows=[row],
                    )
        v_raw = st["voltage"]
        v = np.clip(v_raw, V_MIN, V_MAX)
        clamped = (v != v_raw) & ~st["v_clamped"]
        if np.any(clamped):
            ctx.events.emit(
                "battery",
                f"battery voltage outside the T200 data range {V_MIN:g}-{V_MAX:g} V; the "
                "thruster model clamps it",
                severity="warning",
                rows=np.flatnonzero(clamped),
            )
            st["v_clamped"] = st["v_clamped"] | clamped
        sig = g.sigma[None, :]
        cmd = st["cmd"]
        if tp.input == "pwm":
            u_esc = u_from_pwm(cmd)
            u_cmd = np.where(g.signal_inverted[None, :], -u_esc, u_esc)
        else:
            u_cmd = t200.force_to_u(cmd * sig, v[:, None])
        u_cmd = np.where(st["enabled"], np.clip(u_cmd, -1.0, 1.0), 0.0)
        if tp.rotor_time_constant > 0:
            rotor = thruster_dynamics.update(
                {"time_constant": tp.rotor_time_constant}, st["rotor"], u_cmd, h, "first_order"
            )
        else:
            rotor = u_cmd
        st["rotor"] = rotor
        f_t200 = t200.u_to_force(rotor, v[:, None])
        f_t200 = np.where(rotor > 0, np.maximum(f_t200, 0.0), np.minimum(f_t200, 0.0))
        current = t200.u_to_current(rotor, v[:, None])
        force = f_t200 * sig
        st["thrust"] = force
        st["current"] = current
        total = current.sum(axis=1)
        st["battery"] = battery_model.step(tp.battery, st["battery"], total, h)
        st["voltage"] = battery_model.voltage(tp.battery, st["battery"], total)
        return force @ g.b.T

    @staticmethod
    def _specific_force(nu0: F64, nu1: F64, att: F64, h: float, gravity: float, model: Any) -> F64:
        """Body specific force [m/s²]: v̇ + ω × v − Rᵀ g (finite difference over the step)."""
        v1 = nu1[:, :3]
        w1 = nu1[:, 3:]
        a = (v1 - nu0[:, :3]) / h + np.cross(w1, v1)
        if model is not None and model.attitude == "quaternion":
            rot = rotation_from_quat(att)
        else:
            e = att if att.shape[1] == 3 else euler_from_quat(att)
            rot = rotation_from_quat(quat_from_euler(e[:, 0], e[:, 1], e[:, 2]))
        g_body = gravity * rot[:, 2, :]  # Rᵀ [0, 0, g]
        return a - g_body

    # PVS REMUS 100 --------------------------------------------------------------------------
    def _substep_pvs(self, ctx: Any, inbox: Any, h: float, last: bool) -> None:
        st = ctx.state
        cmd = st["cmd"]
        fins = _rows_value(inbox, "fins/cmd", cmd[:, :2])
        prop = _rows_value(inbox, "propeller/cmd", cmd[:, 2:3])
        if fins is not cmd[:, :2] or prop is not cmd[:, 2:3]:
            cmd = np.concatenate([fins, prop], axis=1)
            st["cmd"] = cmd
        p = st["pvs"]
        eta, nu, act = st["eta"], st["nu"], st["act"]
        n = eta.shape[0]
        state = (
            tuple(eta[:, i] for i in range(6)),
            tuple(nu[:, i] for i in range(6)),
            tuple(act[:, i] for i in range(3)),
        )
        t1 = ctx.t + h
        new, alive, events = pvs.step_batch(
            p, state, tuple(cmd[:, i] for i in range(3)), h, st["alive"], t1
        )
        eta1 = np.stack([np.broadcast_to(c, (n,)) for c in new[0]], axis=1)
        nu1 = np.stack([np.broadcast_to(c, (n,)) for c in new[1]], axis=1)
        act1 = np.stack([np.broadcast_to(c, (n,)) for c in new[2]], axis=1)
        if last:
            st["accel"] = self._specific_force(nu, nu1, eta1[:, 3:], h, 9.81, None)
        for text in events:
            self._diverged(ctx, text, t1)
        st["bad"] = st["bad"] | ~alive
        st["eta"], st["nu"], st["act"], st["alive"] = eta1, nu1, act1, alive

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

    def _pose(self, ctx: Any) -> tuple[F64, F64, F64, F64]:
        st = ctx.state
        if self.is_pvs:
            eta, nu = st["eta"], st["nu"]
            quat = quat_from_euler(eta[:, 3], eta[:, 4], eta[:, 5])
            return eta[:, :3], quat, nu[:, :3], nu[:, 3:]
        x: fossen6dof.State = st["x"]
        if x.att.shape[1] == 4:
            quat = x.att
        else:
            quat = quat_from_euler(x.att[:, 0], x.att[:, 1], x.att[:, 2])
        return x.pos, quat, x.nu[:, :3], x.nu[:, 3:]

    def _set_truth(self, ctx: Any) -> None:
        pos, quat, vel, ang = self._pose(ctx)
        st = ctx.state
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

    def _log(self, ctx: Any) -> None:
        pos, quat, vel, ang = self._pose(ctx)
        eul = np.degrees(euler_from_quat(quat))
        ctx.log("euler", eul, "deg", ("roll", "pitch", "yaw"))
        ctx.log("nu", np.concatenate([vel, ang], axis=1), "SI", ("u", "v", "w", "p", "q", "r"))
        st = ctx.state
        if self.is_pvs:
            act = st["act"]
            ctx.log(
                "actuators",
                np.stack([np.degrees(act[:, 0]), np.degrees(act[:, 1]), act[:, 2]], axis=1),
                "deg, deg, rpm",
                ("rudder_deg", "stern_deg", "propeller_rpm"),
            )
            return
        labels = None
        if self.geometry is not None:
            labels = tuple(f"t{i}" for i in range(self.geometry.n))
            ctx.log("thrust", st["thrust"], "N", labels)
            ctx.log("rotor", st["rotor"], "", labels)
            ctx.log("current", st["current"], "A", labels)
            ctx.log("current_total", st["current"].sum(axis=1), "A")
            ctx.log("voltage", st["voltage"], "V")
            ctx.log("soc", st["battery"].soc, "")
            ctx.log("enabled", st["enabled"].astype(float), "", labels)
            g = self.geometry
            ctx.log("wrench", st["thrust"] @ g.b.T, "N, N m", ("X", "Y", "Z", "K", "M", "N"))
        else:
            ctx.log("wrench", st["wrench"], "N, N m", ("X", "Y", "Z", "K", "M", "N"))
            if self.thruster_bank is not None:
                ctx.log("thrust", st["uuv"].thrust, "N")
                ctx.log("rotor", st["uuv"].rotor, "")
            if self.fin_bank is not None:
                ctx.log("fin_angle", np.degrees(st["fins"].angle), "deg")

    def _publish(self, ctx: Any) -> None:
        st = ctx.state
        if ctx.wants("battery/voltage"):
            ctx.publish("battery/voltage", st["voltage"])
        if ctx.wants("thrusters/current"):
            ctx.publish("thrusters/current", st["current"])
        if ctx.wants("thrusters/thrust"):
            ctx.publish("thrusters/thrust", st["thrust"])
