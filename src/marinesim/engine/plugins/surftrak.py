"""SURFTRAK inside the engine: the ``surftrak`` controller, the ``sitl_vertical`` motion and the
``baro`` belief.

* ``surftrak`` (controller) wraps :class:`marinesim.control.surftrak.ArduSubVertical`:
  DISTANCE_SENSOR messages from the ``rangefinder`` sensor (local topics), the 20 Hz
  rangefinder cycle on ticks k mod 20 = 0, ALT_HOLD until the ``switch_after``-th reading,
  then ``mode``; a scripted pilot stick; publishes ``thrust`` (−1…1) and the GCS texts on
  ``gcs/statustext`` (also as run events).  Reads belief (z = −depth, vz, az).  Needs
  dt = 2.5 ms (ArduSub's 400 Hz loop).  Logs ArduSub's CTUN quantities at 10 Hz (ticks
  k mod 40 = 0) and, with ``trace: true``, a 400 Hz trace of the vertical controller.
* ``sitl_vertical`` (motion) wraps :mod:`marinesim.models.heave`: 1-DOF heave with the hard
  seafloor of the same terrain profile.
* ``baro`` (sensor, belief writer): belief = truth with the z of a noisy barometer
  (``sitl_vertical``'s ``baro_noise_m``: SITL fused a baro, σ ≈ 0.01 m), or with ``estimator:
  ekf3`` the height and climb rate ArduSub's EKF3 reports from that reading
  (:mod:`marinesim.sensors.ekf3_height`).

With a block named ``vehicle`` and a sensor instance named ``rangefinder`` the noise streams
are those of :func:`marinesim.interop.surftrak_runner.run_surftrak` (which runs this
scenario).  ``surftrak``, ``sitl_vertical`` and ``rangefinder`` declare their laws
(:mod:`marinesim.engine.plugins.surftrak_laws`): a block of the three runs in the generated
compiled tick when numba is installed.

Python hooks (set on the plugin instances before the run; not scenario keys):
``SurftrakController.events`` — ``[(t, fn(autopilot)), …]`` called at the first tick with
time ≥ t; ``SurftrakController.scripts`` — ``[(period_ticks, fn(autopilot)), …]`` called on
ticks k mod period = 0; ``SitlVerticalMotion.thrust_override`` — ``fn(t, thrust) -> thrust``;
``profile`` (both terrain users) — a :class:`~marinesim.environment.terrain.TerrainProfile`
instead of a shipped name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from marinesim.control.pilot import PilotScript
from marinesim.control.surftrak import SURFTRAK, ArduSubVertical, SurftrakParams
from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin
from marinesim.engine.plugins.rangefinder import terrain_schedule
from marinesim.models.heave import HeaveParams, step_zv
from marinesim.sensors.ekf3_height import Ekf3Height, Ekf3HeightParams

__all__ = [
    "TRACE_SIGNALS",
    "BaroBelief",
    "BaroParams",
    "SitlVerticalMotion",
    "SitlVerticalParams",
    "SurftrakController",
    "SurftrakControllerParams",
]

_TICK_US = 2500
#: CTUN quantities the controller logs at 10 Hz: (signal, unit).
CTUN_SIGNALS = (
    ("ThI", ""), ("ThO", ""), ("DAlt", "m"), ("Alt", "m"), ("DSAlt", "m"),
    ("SAlt", "m"), ("TAlt", "m"), ("DCRt", "cm/s"), ("CRt", "cm/s"), ("healthy", ""),
    ("mode_state", ""),
)  # fmt: skip
#: 400 Hz trace signals (``trace: true``; cm units as in ArduSub).
TRACE_SIGNALS = (
    "pos_target", "off_target", "z", "vz", "target", "limit", "at_bottom", "at_surface",
    "healthy", "filt", "dist", "stick",
)  # fmt: skip


class SurftrakControllerParams(ParamsBase):
    """ArduSub vertical autopilot in the engine."""

    ardusub: SurftrakParams = Field(default_factory=SurftrakParams)
    mode: int = field(SURFTRAK, description="mode after the switch (21 SURFTRAK, 2 ALT_HOLD)")
    switch_after: int = field(
        10, description="readings (dropouts count) before the switch; 0: never", ge=0
    )
    pilot: list[tuple[float, str, float]] = field(
        default_factory=list, description="stick timeline: [t, throttle|climb, value]"
    )
    trace: bool = field(False, description="log the 400 Hz controller trace (trace.*)")


class SurftrakController(Plugin):
    """ArduSub ALT_HOLD / SURFTRAK (range hold) with the MAVLink rangefinder backend."""

    kind: ClassVar[str] = "controller"
    Params = SurftrakControllerParams
    subscribes: ClassVar[dict[str, str]] = {
        "rangefinder/distance_cm": "double",
        "rangefinder/signal_quality": "double",
    }
    publishes: ClassVar[dict[str, str]] = {"thrust": "double", "gcs/statustext": "string"}

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        super().__init__(name, params)
        self.events: list[tuple[float, Callable[[ArduSubVertical], None]]] = []
        self.scripts: list[tuple[int, Callable[[ArduSubVertical], None]]] = []
        self.pilot_script: PilotScript | None = None

    @staticmethod
    def _num(x: Any, n: int) -> Any:
        return float(x[0]) if n == 1 else np.asarray(x, dtype=float).copy()

    def start(self, ctx: Any, rng: Any) -> None:
        """Initialise the autopilot at the belief (trimmed throttle), in ALT_HOLD."""
        if abs(ctx.dt - 0.0025) > 1e-12:
            raise ConfigError(
                "the surftrak controller needs time.dt = 0.0025 (400 Hz)", param="time.dt"
            )
        p: Any = self.params
        n = ctx.n
        z = self._num(-ctx.belief.pos[:, 2] * 100.0, n)
        thr = 0.5 + HeaveParams().hover_thrust / 2.0
        ap = ArduSubVertical(p.ardusub, z, z * 0.0, z * 0.0, z * 0.0 + thr, ctx.dt)
        st = ctx.state
        st["ap"] = ap
        st["readings"] = 0
        st["sent_msgs"] = 0
        pilot = self.pilot_script
        if pilot is None and p.pilot:
            pilot = PilotScript.from_steps(p.pilot, p.ardusub.stick())
        st["pilot"] = pilot
        st["events"] = sorted(self.events, key=lambda e: e[0])
        st["ev_i"] = 0
        for every, fn in self.scripts:
            if int(every) < 1:
                raise ConfigError(f"script {fn!r} needs a period of at least one tick")

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The generated tick's declaration (:mod:`~marinesim.engine.plugins.surftrak_laws`)."""
        from marinesim.engine.plugins.surftrak_laws import controller_laws

        return controller_laws(self, slot, sim)

    def control(self, ctx: Any, rng: Any) -> None:
        """One 400 Hz loop."""
        st = ctx.state
        ap: ArduSubVertical = st["ap"]
        p: Any = self.params
        n = ctx.n
        b = ctx.belief
        zc = self._num(-b.pos[:, 2] * 100.0, n)
        # 0 − x rather than −x: at rest the climb rate is +0.0 (ArduSub's CRt), not −0.0
        vc = self._num(0.0 - b.vel[:, 2] * 100.0, n)
        ac = self._num(0.0 - b.accel[:, 2] * 100.0, n)
        k = ctx.tick
        t = ctx.t
        ap.now_us = float(k * _TICK_US)
        dist, got = ctx.inbox.latest("rangefinder/distance_cm", default=-1.0)
        switch = False
        if got.any():
            sq, _ = ctx.inbox.latest("rangefinder/signal_quality", default=-1.0)
            sent = got & (dist >= 0)
            st["readings"] += 1
            switch = st["readings"] == p.switch_after
            if sent.any():
                if n == 1:
                    ap.handle_distance_sensor(True, float(dist[0]), 50.0, 5000.0, float(sq[0]))
                else:
                    ap.handle_distance_sensor(sent, dist, 50.0, 5000.0, sq)
        if k % 20 == 0:
            ap.z = zc
            ap.rangefinder_cycle()
        if switch:
            ap.z, ap.vz, ap.az = zc, vc, ac
            ap.set_mode(p.mode)
        ev = st["events"]
        while st["ev_i"] < len(ev) and ev[st["ev_i"]][0] <= t + 1e-9:
            ap.z, ap.vz, ap.az = zc, vc, ac
            ev[st["ev_i"]][1](ap)
            st["ev_i"] += 1
        for every, fn in self.scripts:
            if k % every == 0:
                ap.z, ap.vz, ap.az = zc, vc, ac
                fn(ap)
        pilot = st["pilot"]
        stick = 500.0 if pilot is None else float(pilot.sample(np.array([t]))[0])
        thrust = ap.run(stick, zc, vc, ac) if pilot is not None else ap.run_climb(0.0, zc, vc, ac)
        ap.detect(
            -b.pos[:, 2] if n > 1 else float(-b.pos[0, 2]),
            -b.vel[:, 2] if n > 1 else float(-b.vel[0, 2]),
        )
        ctx.publish("thrust", thrust)
        for m in ap.messages[st["sent_msgs"] :]:
            ctx.events.emit("statustext", m.text, severity=m.severity.lower(), rows=[m.vehicle])
            ctx.publish("gcs/statustext", m.text, rows=[m.vehicle])
        st["sent_msgs"] = len(ap.messages)
        if k % 40 == 0:
            self._log_ctun(ctx, ap, zc, vc)
        if p.trace:
            self._log_trace(ctx, ap, zc, vc, stick)

    @staticmethod
    def _log_ctun(ctx: Any, ap: ArduSubVertical, zc: Any, vc: Any) -> None:
        """The CTUN row of this tick (ArduSub units; DCRt/CRt truncated as int16 fields; BAlt
        is the truth the frame records)."""
        n = ctx.n
        h = ap.health
        tgt = ap.target_cm
        if ap.mode == SURFTRAK:
            ms = 1.0 + (tgt > 0) + 1.0 * ap.pilot_in_control
        else:
            ms = 0.0
        vals = (
            ap.zctl.throttle, ap.motors.throttle, ap.zctl.pos_target * 0.01, zc * 0.01,
            tgt * 0.01, h.distance_cm * 0.01, h.terrain_offset_cm * 0.01,
            np.trunc(ap.zctl.vel_target), np.trunc(vc), 1.0 * ap.rangefinder_alt_ok(), ms,
        )  # fmt: skip
        for (name, unit), v in zip(CTUN_SIGNALS, vals, strict=True):
            ctx.log(name, np.broadcast_to(np.asarray(v, dtype=float), (n,)), unit)

    @staticmethod
    def _log_trace(ctx: Any, ap: ArduSubVertical, zc: Any, vc: Any, stick: float) -> None:
        n = ctx.n
        vals = (
            ap.zctl.pos_target, ap.zctl.off_target, zc, vc, ap.target_cm, ap.motors.limit,
            ap.detector.at_bottom, ap.detector.at_surface, ap.rangefinder_alt_ok(),
            ap.health.filt_cm, ap.health.distance_cm, stick,
        )  # fmt: skip
        for name, v in zip(TRACE_SIGNALS, vals, strict=True):
            ctx.log(f"trace.{name}", np.broadcast_to(np.asarray(v, dtype=float), (n,)), "")


class SitlVerticalParams(HeaveParams):
    """``sitl_vertical`` vehicle over a shipped terrain profile or the scenario's
    ``environment.terrain`` (hard seafloor), optionally on a straight horizontal track."""

    terrain: str = field(
        "sawtooth", description="shipped terrain profile name, or 'environment' (scenario terrain)"
    )
    track_heading_deg: float = field(
        0.0, unit="deg", description="course of the prescribed horizontal track (marine)"
    )
    track_speed: float = field(
        0.0, unit="m/s", description="ground speed of the prescribed horizontal track", ge=0
    )
    delay: float = field(0.3, unit="s", description="rangefinder delay (terrain time origin)")
    t_inject0: float | None = field(None, unit="s", description="first reading (default: delay)")
    contact_floor: float | None = field(None, unit="m", description="hard floor above the terrain")


class SitlVerticalMotion(Plugin):
    """1-DOF vertical BlueROV2 Heavy as ArduSub SITL's SIM_Submarine (``sitl_vertical``)."""

    kind: ClassVar[str] = "motion"
    Params = SitlVerticalParams
    subscribes: ClassVar[dict[str, str]] = {"thrust": "double"}

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        super().__init__(name, params)
        self.thrust_override: Callable[[float, Any], Any] | None = None
        self.profile: Any = None

    def start(self, ctx: Any, rng: Any) -> None:
        """Start at the spawn depth, at rest, trimmed."""
        p: Any = self.params
        prof, k0, _ = terrain_schedule(p.terrain, p.delay, p.t_inject0, ctx.dt, profile=self.profile)
        ctx.state["profile"] = prof
        if prof is None:
            if not getattr(ctx.env, "has_terrain", False):
                raise ConfigError(
                    "sitl_vertical terrain 'environment' needs environment.terrain in the scenario",
                    param="terrain",
                )
        else:
            ctx.state["heights"] = prof.heights.tolist()
            ctx.state["interval"] = prof.interval
        ctx.state["attrib0"] = k0 * ctx.dt - p.delay
        h = math.radians(p.track_heading_deg)
        ctx.state["track_v"] = (p.track_speed * math.cos(h), p.track_speed * math.sin(h))
        ctx.state["ne0"] = ctx.truth.pos[:, :2].copy()
        ctx.state["thrust"] = np.full(ctx.n, p.hover_thrust)
        n = ctx.n
        z = -ctx.truth.pos[:, 2]
        if prof is not None and float(np.min(z)) < float(prof.heights[0]):
            raise ConfigError(
                f"start z {float(np.min(z))} m is below the seafloor ({prof.heights[0]} m)",
                param="spawn.depth",
            )
        ctx.state["zva"] = (
            (z.copy(), np.zeros(n), np.zeros(n)) if n > 1 else (float(z[0]), 0.0, 0.0)
        )

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The generated tick's declaration (:mod:`~marinesim.engine.plugins.surftrak_laws`)."""
        from marinesim.engine.plugins.surftrak_laws import motion_laws

        return motion_laws(self, slot, sim)

    def substep(self, ctx: Any, rng: Any) -> None:
        """Integrate one step with the latest thrust command."""
        st = ctx.state
        p: Any = self.params
        val, got = ctx.inbox.latest("thrust")
        if got.any():
            st["thrust"] = np.where(got, val, st["thrust"])
        n = ctx.n
        t1 = ctx.t + ctx.h
        vn, ve = st["track_v"]
        ne = st["ne0"] + np.array([vn, ve]) * t1  # prescribed horizontal track (N, 2)
        if st["profile"] is None:
            floor = -np.asarray(ctx.env.seafloor_depth(ne[:, 0], ne[:, 1]), float)
            floor = float(floor[0]) if n == 1 else floor
        else:
            floor = floor_at(st["heights"], st["interval"], st["attrib0"], t1)
        if p.contact_floor is not None:
            floor = max(floor, p.contact_floor) if n == 1 else np.maximum(floor, p.contact_floor)
        z, v, _ = st["zva"]
        thrust = float(st["thrust"][0]) if n == 1 else st["thrust"]
        if self.thrust_override is not None:
            thrust = self.thrust_override(ctx.t, thrust)
        z, v, a = step_zv(p, z, v, thrust, floor, ctx.h)
        st["zva"] = (z, v, a)
        old: VehicleState = ctx.truth
        pos = old.pos.copy()
        pos[:, 2] = -z
        vel = np.zeros((n, 3))
        vel[:, 2] = -v
        if vn != 0.0 or ve != 0.0:
            pos[:, :2] = ne
            vel[:, 0], vel[:, 1] = vn, ve
        acc = np.zeros((n, 3))
        acc[:, 2] = -a
        ctx.set_truth(old.replace(pos=pos, vel=vel, accel=acc))


def floor_at(heights: list[float], interval: float, attrib0: float, t: float) -> float:
    """Seafloor z (m, up) at time ``t`` [s] from the profile rows (row j covers [t0 + jΔ, +Δ))."""
    j = max(int(math.floor((t - attrib0) / interval + 1e-9)), 0)
    return heights[j % len(heights)]


class BaroParams(ParamsBase):
    """The depth the autopilot sees: a noisy barometer, alone or through EKF3's height model."""

    noise_std: float = field(0.01, unit="m", description="z noise σ of the reading", ge=0)
    estimator: Literal["noise", "ekf3"] = Field(
        "noise",
        description="'noise': belief z = the reading; 'ekf3': height and climb rate as "
        "ArduSub's EKF3 reports them from the reading and the heave acceleration (the "
        "EKF3 height model)",
    )
    ekf3: Ekf3HeightParams = Field(
        default_factory=Ekf3HeightParams, description="EKF3 vertical channel (estimator ekf3)"
    )


class BaroBelief(Plugin):
    """Belief = truth with the z (and, through EKF3, the climb rate) the autopilot sees.

    ``estimator: noise``: z + σ·N(0, 1), one draw per tick and vehicle.  ``estimator:
    ekf3``: that reading and the heave acceleration go through
    :class:`~marinesim.sensors.ekf3_height.Ekf3Height` once per tick (the tick must be the
    EKF3 model's ``loop_dt``, ArduSub's 400 Hz loop); belief z and vertical velocity are its
    reported height and climb rate, as ArduSub's controllers read ``inertial_nav``.
    """

    kind: ClassVar[str] = "sensor"
    Params = BaroParams
    writes_belief: ClassVar[bool] = True

    def start(self, ctx: Any, rng: Any) -> None:
        """EKF3: check the tick against the model's loop and start it at the truth."""
        p: Any = self.params
        if p.estimator != "ekf3":
            return
        if abs(ctx.dt - p.ekf3.loop_dt) > 1e-12:
            raise ConfigError(
                f"the baro belief's EKF3 model steps once per tick: time.dt must be its "
                f"loop_dt ({p.ekf3.loop_dt:g} s), got {ctx.dt:g}",
                param="ekf3.loop_dt",
            )
        tr: VehicleState = ctx.truth
        ctx.state["ekf3"] = Ekf3Height(p.ekf3, -tr.pos[:, 2], -tr.vel[:, 2])

    def sense(self, ctx: Any, rng: Any) -> None:
        """Measure at t: the truth with z + σ·N(0, 1) (through EKF3 with ``ekf3``)."""
        p: Any = self.params
        tr: VehicleState = ctx.truth
        pos = tr.pos.copy()
        pos[:, 2] = pos[:, 2] - p.noise_std * rng.normal(size=1)[:, 0]  # type: ignore[attr-defined]
        est: Ekf3Height | None = ctx.state.get("ekf3")
        if est is None:
            ctx.state["obs"] = tr.replace(pos=pos)
            return
        est.step(-tr.accel[:, 2], -pos[:, 2])  # acceleration and height, up
        pos[:, 2] = -est.out[0]
        vel = tr.vel.copy()
        vel[:, 2] = -est.out[1]
        ctx.state["obs"] = tr.replace(pos=pos, vel=vel)

    def estimate(self, ctx: Any, rng: Any) -> None:
        """Belief at t: the measurement of this tick."""
        ctx.set_belief(ctx.state["obs"])
