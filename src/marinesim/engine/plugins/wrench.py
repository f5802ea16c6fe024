"""Controllers for 6-DOF vehicles: station keeping, REMUS autopilot, thruster allocation.

* ``station_keeping_pid`` — holds a position, depth and heading (and level attitude): the
  control law :func:`marinesim.control.station_keeping.station_keeping_pid` (a PID per NED
  axis and on yaw, a PD on roll and pitch, anti-windup from ``wrench/unmet``) on the belief,
  publishing a body wrench on ``wrench/cmd`` (N, 6) [N, N·m]; this plugin only holds the
  set-points (parameters, DESIRED_*) and the integrals between ticks.
* ``depth_heading_autopilot`` — PythonVehicleSimulator's REMUS 100 depth/heading autopilot
  (:func:`marinesim.control.autopilots.remus_depth_heading_autopilot`), with set-points from
  DESIRED_DEPTH / DESIRED_HEADING / DESIRED_SPEED (e.g. the ``waypoints`` autonomy) or its
  parameters; publishes ``fins/cmd`` (N, 2) [rad] and ``propeller/cmd`` (N,) [rpm].
* ``thruster_allocator`` — ``wrench/cmd`` → per-thruster commands ``thrusters/cmd`` (PWM [µs]
  by default) with :class:`marinesim.allocation.solve.Allocator` (``pinv`` with the exact
  uniform scale, or the constrained ``qp`` / ``redistributed_pinv``), at the battery voltage
  the motion plugin publishes (``battery/voltage``); publishes ``wrench/achieved`` and
  ``wrench/unmet`` (anti-windup for the wrench controller) and logs PWM, force and model
  current per thruster and the total current against its limit.  ``fault_aware: true`` makes
  it listen to ``thrusters/fail`` and re-allocate without the failed thruster (bounds [0, 0]).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import model_validator

from marinesim.actuators.t200 import V_MAX, V_MIN
from marinesim.allocation.solve import Allocator, AllocatorLimits
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.control.autopilots import (
    RemusDepthHeadingGains,
    RemusDepthHeadingState,
    remus_depth_heading_autopilot,
)
from marinesim.control.station_keeping import StationKeepingState, station_keeping_pid
from marinesim.core.errors import ConfigError
from marinesim.core.frames import wrap_pi
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin

__all__ = [
    "DepthHeadingAutopilot",
    "DepthHeadingAutopilotParams",
    "StationKeepingPid",
    "StationKeepingPidParams",
    "ThrusterAllocator",
    "ThrusterAllocatorParams",
]

F64 = NDArray[np.float64]


def _interval(ctx: Any) -> float:
    """Time since this controller last ran [s] (dt on the first call)."""
    st = ctx.state
    t_prev = st.get("t_prev", math.nan)
    h = ctx.dt if not math.isfinite(t_prev) else max(ctx.t - t_prev, 1e-12)
    st["t_prev"] = ctx.t
    return h


def _latest_rows(inbox: Any, topic: str, out: F64) -> tuple[F64, NDArray[np.bool_]]:
    """``out`` updated by the rows of every message on ``topic``; and which rows got one."""
    res = out.copy()
    got = np.zeros(out.shape[0], dtype=bool)
    for m in inbox.topic(topic):
        res[m.rows] = np.asarray(m.value, dtype=float).reshape((len(m.rows), *out.shape[1:]))
        got[m.rows] = True
    return res, got


# ------------------------------------------------------------------------------------------
# station keeping
# ------------------------------------------------------------------------------------------


class StationKeepingPidParams(ParamsBase):
    """Target pose (None = hold the pose at start) and gains (SI units)."""

    north: float | None = field(None, unit="m", description="target north (None: start pose)")
    east: float | None = field(None, unit="m", description="target east (None: start pose)")
    depth: float | None = field(None, unit="m", description="target depth (None: start pose)")
    heading_deg: float | None = field(
        None, unit="deg", description="target heading, marine (None: start heading)"
    )
    kp_pos: float = field(60.0, unit="N/m", ge=0, description="horizontal position gain")
    ki_pos: float = field(12.0, unit="N/(m s)", ge=0, description="horizontal integral gain")
    kd_pos: float = field(20.0, unit="N s/m", ge=0, description="horizontal velocity gain")
    kp_depth: float = field(30.0, unit="N/m", ge=0, description="depth gain")
    ki_depth: float = field(6.0, unit="N/(m s)", ge=0, description="depth integral gain")
    kd_depth: float = field(60.0, unit="N s/m", ge=0, description="vertical velocity gain")
    kp_yaw: float = field(2.0, unit="N m/rad", ge=0, description="heading gain")
    ki_yaw: float = field(0.4, unit="N m/(rad s)", ge=0, description="heading integral gain")
    kd_yaw: float = field(2.0, unit="N m s/rad", ge=0, description="yaw-rate gain")
    kp_att: float = field(4.0, unit="N m/rad", ge=0, description="roll/pitch levelling gain")
    kd_att: float = field(1.0, unit="N m s/rad", ge=0, description="roll/pitch rate gain")
    integral_limit_force: float = field(
        40.0, unit="N", ge=0, description="bound of each force integral term"
    )
    integral_limit_moment: float = field(
        5.0, unit="N m", ge=0, description="bound of the yaw integral term"
    )
    max_force: float = field(150.0, unit="N", gt=0, description="bound of each force component")
    max_moment: float = field(30.0, unit="N m", gt=0, description="bound of each moment")
    unmet_tolerance: float = field(
        0.5, unit="N or N m", ge=0, description="unmet wrench above this freezes the integral"
    )


class StationKeepingPid(Plugin):
    """Position/depth/heading hold → body wrench (PID with anti-windup) on ``wrench/cmd``."""

    kind: ClassVar[str] = "controller"
    Params = StationKeepingPidParams
    subscribes: ClassVar[dict[str, str]] = {
        "wrench/unmet": "array",
        "DESIRED_NORTH": "double",
        "DESIRED_EAST": "double",
        "DESIRED_DEPTH": "double",
        "DESIRED_HEADING": "double",
    }
    publishes: ClassVar[dict[str, str]] = {"wrench/cmd": "array"}

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """Its law in the generated tick (:mod:`marinesim.engine.plugins.sixdof_laws`)."""
        from marinesim.engine.plugins.sixdof_laws import hold_laws

        return hold_laws(self, slot, sim)

    def start(self, ctx: Any, rng: Any) -> None:
        """Targets from the parameters or the start pose; integrals at zero."""
        p: Any = self.params
        b = ctx.belief
        n = ctx.n
        tgt = np.empty((n, 4))
        tgt[:, 0] = b.pos[:, 0] if p.north is None else p.north
        tgt[:, 1] = b.pos[:, 1] if p.east is None else p.east
        tgt[:, 2] = b.pos[:, 2] if p.depth is None else p.depth
        tgt[:, 3] = b.heading_deg if p.heading_deg is None else p.heading_deg
        ctx.state["target"] = tgt
        ctx.state["int_ned"] = np.zeros((n, 3))
        ctx.state["int_yaw"] = np.zeros(n)
        ctx.state["unmet"] = np.zeros((n, 6))
        ctx.state["t_prev"] = math.nan

    def control(self, ctx: Any, rng: Any) -> None:
        """One PID update from the belief; publish the body wrench."""
        p: Any = self.params
        st = ctx.state
        h = _interval(ctx)
        inbox = ctx.inbox
        tgt = st["target"]
        for j, topic in enumerate(
            ("DESIRED_NORTH", "DESIRED_EAST", "DESIRED_DEPTH", "DESIRED_HEADING")
        ):
            val, got = inbox.latest(topic)
            if np.any(got):
                tgt = tgt.copy()
                tgt[:, j] = np.where(got, val, tgt[:, j])
        st["target"] = tgt
        st["unmet"], _ = _latest_rows(inbox, "wrench/unmet", st["unmet"])
        b = ctx.belief
        out, sk = station_keeping_pid(
            p,
            StationKeepingState(st["int_ned"], st["int_yaw"]),
            tgt,
            b.pos,
            b.quat,
            b.euler,
            b.vel_ned,
            b.ang_vel,
            st["unmet"],
            ctx.active,
            h,
        )
        st["int_ned"], st["int_yaw"] = sk.int_ned, sk.int_yaw
        wrench, e_ned, e_yaw = out.wrench, out.error_ned, out.error_yaw
        ctx.publish("wrench/cmd", wrench)
        ctx.log("wrench", wrench, "N, N, N, N m, N m, N m", ("X", "Y", "Z", "K", "M", "N"))
        ctx.log("error", e_ned, "m", ("north", "east", "down"))
        ctx.log("heading_error", np.degrees(e_yaw), "deg")
        ctx.log("target", tgt, "m, m, m, deg", ("north", "east", "depth", "heading"))


# ------------------------------------------------------------------------------------------
# REMUS 100 depth / heading autopilot
# ------------------------------------------------------------------------------------------

_G = RemusDepthHeadingGains()


class DepthHeadingAutopilotParams(ParamsBase):
    """Set-points (used until DESIRED_* arrive) and the PVS autopilot gains (upstream defaults)."""

    depth: float | None = field(
        None, unit="m", ge=0, le=100, description="depth set-point (None: start depth)"
    )
    heading_deg: float | None = field(
        None, unit="deg", description="heading set-point (None: start heading)"
    )
    rpm: float = field(1525.0, unit="rpm", ge=0, le=1525, description="propeller set-point")
    rpm_per_speed: float = field(
        0.0,
        unit="rpm/(m/s)",
        ge=0,
        description="DESIRED_SPEED → propeller rpm (0 = ignore DESIRED_SPEED, use rpm)",
    )
    wn_d: float = field(_G.wn_d, unit="rad/s", gt=0, description="heading reference frequency")
    zeta_d: float = field(_G.zeta_d, unit="", gt=0, description="heading reference damping")
    r_max_deg: float = field(
        math.degrees(_G.r_max), unit="deg/s", gt=0, description="reference yaw-rate limit"
    )
    lam: float = field(_G.lam, unit="1/s", gt=0, description="SMC λ")
    phi_b: float = field(_G.phi_b, unit="", gt=0, description="SMC boundary layer")
    K_d: float = field(_G.K_d, unit="", ge=0, description="SMC damping gain")
    K_sigma: float = field(_G.K_sigma, unit="", ge=0, description="SMC switching gain")
    wn_d_z: float = field(_G.wn_d_z, unit="rad/s", gt=0, description="depth reference filter")
    Kp_z: float = field(_G.Kp_z, unit="rad/m", description="depth → pitch gain")
    T_z: float = field(_G.T_z, unit="s", gt=0, description="depth integral time")
    Kp_theta: float = field(_G.Kp_theta, unit="", description="pitch gain")
    Kd_theta: float = field(_G.Kd_theta, unit="s", description="pitch-rate gain")
    Ki_theta: float = field(_G.Ki_theta, unit="1/s", description="pitch integral gain")
    K_w: float = field(_G.K_w, unit="s/m", description="heave-velocity gain")


def autopilot_gains(p: Any, ref_z: Any, ref_psi_deg: Any, ref_n: Any) -> RemusDepthHeadingGains:
    """The autopilot's gains from its parameters ``p`` and set-points (depth [m], yaw [deg],
    propeller [rpm]; floats or (N,) arrays)."""
    return RemusDepthHeadingGains(
        ref_z=ref_z,
        ref_psi=ref_psi_deg,
        ref_n=ref_n,
        wn_d=p.wn_d,
        zeta_d=p.zeta_d,
        r_max=math.radians(p.r_max_deg),
        lam=p.lam,
        phi_b=p.phi_b,
        K_d=p.K_d,
        K_sigma=p.K_sigma,
        wn_d_z=p.wn_d_z,
        Kp_z=p.Kp_z,
        T_z=p.T_z,
        Kp_theta=p.Kp_theta,
        Kd_theta=p.Kd_theta,
        Ki_theta=p.Ki_theta,
        K_w=p.K_w,
    )


class DepthHeadingAutopilot(Plugin):
    """REMUS 100 depth/heading autopilot (PythonVehicleSimulator) → fins/cmd, propeller/cmd."""

    kind: ClassVar[str] = "controller"
    Params = DepthHeadingAutopilotParams
    subscribes: ClassVar[dict[str, str]] = {
        "DESIRED_DEPTH": "double",
        "DESIRED_HEADING": "double",
        "DESIRED_SPEED": "double",
    }
    publishes: ClassVar[dict[str, str]] = {"fins/cmd": "array", "propeller/cmd": "double"}

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """Its law in the generated tick (:mod:`marinesim.engine.plugins.remus_laws`)."""
        from marinesim.engine.plugins.remus_laws import autopilot_laws

        return autopilot_laws(self, slot, sim)

    def start(self, ctx: Any, rng: Any) -> None:
        """Set-points from parameters or the start pose; reference models at the start pose."""
        p: Any = self.params
        b = ctx.belief
        n = ctx.n
        eul = b.euler
        st = ctx.state
        st["depth"] = np.full(n, p.depth) if p.depth is not None else np.clip(b.depth, 0, 100)
        st["heading"] = np.full(n, p.heading_deg) if p.heading_deg is not None else b.heading_deg
        st["rpm"] = np.full(n, p.rpm)
        ap = RemusDepthHeadingState.zeros(n)
        # start the reference models at the vehicle (upstream starts them at 0)
        st["ap"] = dataclasses.replace(ap, z_d=b.depth.copy(), psi_d=eul[:, 2].copy())
        st["t_prev"] = math.nan

    def control(self, ctx: Any, rng: Any) -> None:
        """One autopilot step; publish fin angles and propeller speed."""
        p: Any = self.params
        st = ctx.state
        h = _interval(ctx)
        inbox = ctx.inbox
        if inbox.messages:  # (no message: every set-point is held as it is)
            val, got = inbox.latest("DESIRED_DEPTH")
            st["depth"] = np.where(got, np.clip(val, 0.0, 100.0), st["depth"])
            val, got = inbox.latest("DESIRED_HEADING")
            st["heading"] = np.where(got, val, st["heading"])
            if p.rpm_per_speed > 0:
                val, got = inbox.latest("DESIRED_SPEED")
                st["rpm"] = np.where(got, np.clip(p.rpm_per_speed * val, 0.0, 1525.0), st["rpm"])
        b = ctx.belief
        eta = np.concatenate([b.pos, b.euler], axis=1)
        nu = np.concatenate([b.vel, b.ang_vel], axis=1)
        ap: RemusDepthHeadingState = st["ap"]
        # the shortest turn: the yaw set-point unwrapped next to the reference model's ψ_d
        psi_ref = ap.psi_d + wrap_pi(np.radians(st["heading"]) - ap.psi_d)
        gains = autopilot_gains(p, st["depth"], np.degrees(psi_ref), st["rpm"])
        u, ap_new = remus_depth_heading_autopilot(gains, ap, eta, nu, h)
        act = ctx.active
        if act.all():  # every row advances (np.where would copy the same values)
            st["ap"] = ap_new
        else:
            st["ap"] = RemusDepthHeadingState(
                *(
                    np.where(act, getattr(ap_new, f.name), getattr(ap, f.name))
                    for f in dataclasses.fields(ap)
                )
            )
            u = np.where(act[:, None], u, 0.0)
        ctx.publish("fins/cmd", u[:, :2])
        ctx.publish("propeller/cmd", u[:, 2])
        command = np.empty((u.shape[0], 3))
        command[:, :2] = np.degrees(u[:, :2])
        command[:, 2] = u[:, 2]
        ctx.log("command", command, "deg, deg, rpm", ("rudder_deg", "stern_deg", "propeller_rpm"))
        desired = np.empty((u.shape[0], 2))
        desired[:, 0] = st["depth"]
        desired[:, 1] = st["heading"]
        ctx.log("desired", desired, "m, deg", ("depth", "heading"))


# ------------------------------------------------------------------------------------------
# thruster allocation
# ------------------------------------------------------------------------------------------


class ThrusterAllocatorParams(ParamsBase):
    """Layout, mode, limits and which voltage to allocate at."""

    layout: str = field("bluerov2_heavy", description="thruster layout (allocation.vehicles)")
    bound_set: Literal["ardusub_positive_forward", "flipped", "symmetric"] = field(
        "ardusub_positive_forward", description="T200 side along each positive direction"
    )
    mode: Literal["pinv", "qp", "redistributed_pinv", "constrained"] = field(
        "qp", description="pinv (uniform scale), qp / constrained (bounded LSQ), redistributed_pinv"
    )
    output: Literal["pwm", "force"] = field(
        "pwm", description="thrusters/cmd unit: ESC pulse [µs] or force [N]"
    )
    voltage: float | None = field(
        None,
        unit="V",
        ge=V_MIN,
        le=V_MAX,
        description="fixed allocator voltage; None: the battery/voltage on the bus",
    )
    voltage_resolution: float = field(
        0.01, unit="V", gt=0, le=1, description="battery voltage rounded to this for allocation"
    )
    nominal_voltage: float = field(
        16.0, unit="V", ge=V_MIN, le=V_MAX, description="voltage before the first battery message"
    )
    max_current_per_thruster: float | None = field(15.0, unit="A", gt=0, description="per motor")
    max_current_total: float | None = field(50.0, unit="A", gt=0, description="all thrusters")
    t200_profile: Literal["default", "mrobosub"] = field(
        "default", description="allocator's T200 cubic coefficient set"
    )
    dof_weights: tuple[float, float, float, float, float, float] | None = field(
        None, description="W_τ of qp (default: the layout's)"
    )
    max_force_rate: float | None = field(
        None, unit="N/s", gt=0, description="qp: per-thruster rate limit (null = none)"
    )
    fault_aware: bool = field(
        True, description="re-allocate without a thruster reported on thrusters/fail"
    )
    failed: list[int] = field(default_factory=list, description="thrusters known failed at start")

    @model_validator(mode="after")
    def _known_layout(self) -> ThrusterAllocatorParams:
        try:
            get_layout(self.layout, self.bound_set)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        if self.max_force_rate is not None and self.mode not in ("qp", "constrained"):
            raise ValueError("max_force_rate applies to mode qp (constrained) only")
        return self


class ThrusterAllocator(Plugin):
    """Wrench → per-thruster PWM (pinv or constrained) at the battery voltage; unmet wrench out."""

    kind: ClassVar[str] = "controller"
    Params = ThrusterAllocatorParams
    subscribes: ClassVar[dict[str, str]] = {
        "wrench/cmd": "array",
        "battery/voltage": "double",
        "thrusters/fail": "double",
    }
    publishes: ClassVar[dict[str, str]] = {
        "thrusters/cmd": "array",
        "wrench/achieved": "array",
        "wrench/unmet": "array",
    }

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        super().__init__(name, params)
        p: Any = self.params
        self.layout = get_layout(p.layout, p.bound_set)
        self.limits = AllocatorLimits(
            voltage=p.nominal_voltage,
            max_current_per_thruster=p.max_current_per_thruster,
            max_current_total=p.max_current_total,
            t200_profile=p.t200_profile,
            max_force_rate=p.max_force_rate,
        )
        k = len(self.layout.thrusters)
        bad = [i for i in p.failed if not 0 <= i < k]
        if bad:
            raise ConfigError(f"failed thruster index {bad[0]} outside 0..{k - 1}", param="failed")
        self._allocators: dict[tuple[bool, ...], Allocator] = {}
        self._allocator(tuple(i not in p.failed for i in range(k)))  # rank check at build time
        if not p.fault_aware:
            self.subscribes = {kk: v for kk, v in self.subscribes.items() if kk != "thrusters/fail"}

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """Its law in the generated tick, any mode (``pinv``, ``qp`` / ``constrained``,
        ``redistributed_pinv``; :mod:`marinesim.engine.plugins.alloc_laws`)."""
        from marinesim.engine.plugins.alloc_laws import alloc_laws

        return alloc_laws(self, slot, sim)

    def _allocator(self, enabled: tuple[bool, ...]) -> Allocator:
        a = self._allocators.get(enabled)
        if a is None:
            failed = [i for i, e in enumerate(enabled) if not e]
            a = Allocator(
                Geometry(self.layout, failed),
                self.limits,
                dof_weights=self.params.dof_weights,  # type: ignore[attr-defined]
            )
            self._allocators[enabled] = a
        return a

    def start(self, ctx: Any, rng: Any) -> None:
        """Zero demand, nominal voltage, the known failed thrusters."""
        p: Any = self.params
        n = ctx.n
        k = len(self.layout.thrusters)
        en = np.ones((n, k), dtype=bool)
        en[:, list(p.failed)] = False
        st = ctx.state
        st["enabled"] = en
        st["tau"] = np.zeros((n, 6))
        st["force"] = np.zeros((n, k))
        st["t_prev"] = math.nan
        st["voltage"] = np.full(n, p.voltage if p.voltage is not None else p.nominal_voltage)
        ctx.log(
            "current_limit",
            np.full(n, np.nan if p.max_current_total is None else p.max_current_total),
            "A",
        )

    def control(self, ctx: Any, rng: Any) -> None:
        """Allocate the latest wrench demand; publish the commands and the unmet wrench."""
        p: Any = self.params
        st = ctx.state
        inbox = ctx.inbox
        h = _interval(ctx)
        st["tau"], _ = _latest_rows(inbox, "wrench/cmd", st["tau"])
        if p.voltage is None:
            v, got = inbox.latest("battery/voltage")
            st["voltage"] = np.where(got, v, st["voltage"])
        if p.fault_aware:
            for m in inbox.topic("thrusters/fail"):
                en = st["enabled"].copy()
                for row, kk in zip(
                    m.rows.tolist(), np.asarray(m.value, float).tolist(), strict=True
                ):
                    if float(kk).is_integer() and 0 <= int(kk) < en.shape[1]:
                        en[row, int(kk)] = False
                st["enabled"] = en
        # rounded to voltage_resolution so the allocator's per-voltage force bounds are cached
        res_v = p.voltage_resolution
        v = np.clip(np.round(st["voltage"] / res_v) * res_v, V_MIN, V_MAX)
        tau = np.where(ctx.active[:, None], st["tau"], 0.0)
        n = ctx.n
        k = len(self.layout.thrusters)
        force = np.zeros((n, k))
        pwm = np.full((n, k), 1500.0)
        current = np.zeros((n, k))
        achieved = np.zeros((n, 6))
        scale = np.ones(n)
        status = np.zeros(n)
        saturated = np.zeros((n, k))
        enabled = st["enabled"]
        if np.all(enabled == enabled[:1]):
            patterns, inverse = enabled[:1], np.zeros(n, dtype=np.int64)
        else:
            patterns, inverse = np.unique(enabled, axis=0, return_inverse=True)
            inverse = np.asarray(inverse).reshape(-1)
        for j, pat in enumerate(patterns):  # distinct failure patterns (usually one)
            rows = np.flatnonzero(inverse == j)
            alloc = self._allocator(tuple(bool(x) for x in pat))
            mode = "qp" if p.mode == "constrained" else p.mode
            if mode == "pinv":
                res = alloc.pinv(tau[rows], v[rows])
            elif mode == "qp":
                if p.max_force_rate is not None:
                    res = alloc.qp(tau[rows], v[rows], f_prev=st["force"][rows], dt=h)
                else:
                    res = alloc.qp(tau[rows], v[rows])
            else:
                res = alloc.redistributed_pinv(tau[rows], v[rows])
            force[rows] = res.force
            pwm[rows] = res.pwm
            current[rows] = res.current
            achieved[rows] = res.achieved
            scale[rows] = res.scale
            status[rows] = res.status_code
            saturated[rows] = res.saturated
        unmet = tau - achieved
        st["force"] = force
        ctx.publish("thrusters/cmd", pwm if p.output == "pwm" else force)
        ctx.publish("wrench/achieved", achieved)
        ctx.publish("wrench/unmet", unmet)
        labels = tuple(f"t{i}" for i in range(k))
        ctx.log("pwm", pwm, "us", labels)
        ctx.log("force", force, "N", labels)
        ctx.log("current", current, "A", labels)
        ctx.log("current_total", current.sum(axis=1), "A")
        ctx.log("voltage", v, "V")
        ctx.log("scale", scale, "")
        ctx.log("status", status, "")  # index into marinesim.allocation.solve.STATUS
        ctx.log("saturated", saturated, "", labels)
        ctx.log("unmet", unmet, "N, N, N, N m, N m, N m", ("X", "Y", "Z", "K", "M", "N"))

