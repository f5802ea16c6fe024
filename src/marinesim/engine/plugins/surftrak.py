"""SURFTRAK inside the engine: the ``surftrak`` controller and the ``sitl_vertical`` motion.

* ``surftrak`` (controller) wraps :class:`marinesim.control.surftrak.ArduSubVertical`:
  DISTANCE_SENSOR messages from the ``rangefinder`` sensor (local topics), the 20 Hz
  rangefinder cycle on ticks k mod 20 = 0, ALT_HOLD until the ``switch_after``-th reading,
  then ``mode``; a scripted pilot stick; publishes ``thrust`` (−1…1) and the GCS texts on
  ``gcs/statustext`` (also as run events).  Reads belief (z = −depth, vz, az).  Needs
  dt = 2.5 ms (ArduSub's 400 Hz loop).  Logs the CTUN quantities in ArduSub units.
* ``sitl_vertical`` (motion) wraps :mod:`marinesim.models.heave`: 1-DOF heave with the hard
  seafloor of the same shipped terrain profile.

With a block named ``vehicle`` and a sensor instance named ``rangefinder`` the noise streams
are those of ``marinesim surftrak run``, so both give the same numbers.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

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

__all__ = [
    "SitlVerticalMotion",
    "SitlVerticalParams",
    "SurftrakController",
    "SurftrakControllerParams",
]

_TICK_US = 2500


class SurftrakControllerParams(ParamsBase):
    """ArduSub vertical autopilot in the engine."""

    ardusub: SurftrakParams = Field(default_factory=SurftrakParams)
    mode: int = field(SURFTRAK, description="mode after the switch (21 SURFTRAK, 2 ALT_HOLD)")
    switch_after: int = field(10, description="readings (dropouts count) before the switch", ge=1)
    pilot: list[tuple[float, str, float]] = field(
        default_factory=list, description="stick timeline: [t, throttle|climb, value]"
    )


class SurftrakController(Plugin):
    """ArduSub ALT_HOLD / SURFTRAK (range hold) with the MAVLink rangefinder backend."""

    kind: ClassVar[str] = "controller"
    Params = SurftrakControllerParams
    subscribes: ClassVar[dict[str, str]] = {
        "rangefinder/distance_cm": "double",
        "rangefinder/signal_quality": "double",
    }
    publishes: ClassVar[dict[str, str]] = {"thrust": "double", "gcs/statustext": "string"}

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
        b = ctx.belief
        z = self._num(-b.pos[:, 2] * 100.0, n)
        thr = 0.5 + HeaveParams().hover_thrust / 2.0
        ap = ArduSubVertical(p.ardusub, z, z * 0.0, z * 0.0, z * 0.0 + thr, ctx.dt)
        ctx.state["ap"] = ap
        ctx.state["readings"] = 0
        ctx.state["sent_msgs"] = 0
        ctx.state["pilot"] = PilotScript.from_steps(p.pilot, p.ardusub.stick()) if p.pilot else None

    def control(self, ctx: Any, rng: Any) -> None:
        """One 400 Hz loop."""
        st = ctx.state
        ap: ArduSubVertical = st["ap"]
        n = ctx.n
        b = ctx.belief
        zc = self._num(-b.pos[:, 2] * 100.0, n)
        vc = self._num(-b.vel[:, 2] * 100.0, n)
        ac = self._num(-b.accel[:, 2] * 100.0, n)
        k = ctx.tick
        ap.now_us = float(k * _TICK_US)
        dist, got = ctx.inbox.latest("rangefinder/distance_cm", default=-1.0)
        switch = False
        if got.any():
            sq, _ = ctx.inbox.latest("rangefinder/signal_quality", default=-1.0)
            sent = got & (dist >= 0)
            st["readings"] += 1
            switch = st["readings"] == self.params.switch_after  # type: ignore[attr-defined]
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
            ap.set_mode(self.params.mode)  # type: ignore[attr-defined]
        pilot = st["pilot"]
        stick = 500.0 if pilot is None else float(pilot.sample(np.array([ctx.t]))[0])
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
            h = ap.health
            ctx.log("DAlt", np.broadcast_to(ap.zctl.pos_target * 0.01, (n,)), "m")
            ctx.log("Alt", np.broadcast_to(zc * 0.01, (n,)), "m")
            ctx.log("DSAlt", np.broadcast_to(ap.target_cm * 0.01, (n,)), "m")
            ctx.log("SAlt", np.broadcast_to(h.distance_cm * 0.01, (n,)), "m")
            ctx.log("TAlt", np.broadcast_to(h.terrain_offset_cm * 0.01, (n,)), "m")
            ctx.log("DCRt", np.broadcast_to(np.trunc(ap.zctl.vel_target), (n,)), "cm/s")
            ctx.log("CRt", np.broadcast_to(np.trunc(vc), (n,)), "cm/s")


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

    def start(self, ctx: Any, rng: Any) -> None:
        """Start at the spawn depth, at rest, trimmed."""
        p: Any = self.params
        prof, k0, _ = terrain_schedule(p.terrain, p.delay, p.t_inject0, ctx.dt)
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
        ctx.state["zva"] = (
            (z.copy(), np.zeros(n), np.zeros(n)) if n > 1 else (float(z[0]), 0.0, 0.0)
        )

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
            floor = _floor_at(st, t1)
        if p.contact_floor is not None:
            floor = max(floor, p.contact_floor) if n == 1 else np.maximum(floor, p.contact_floor)
        z, v, _ = st["zva"]
        thrust = float(st["thrust"][0]) if n == 1 else st["thrust"]
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


def _floor_at(st: dict[str, Any], t: float) -> float:
    """Seafloor z (m) at time ``t`` from the profile rows (row j covers [t0 + jΔ, +Δ))."""
    j = max(int(math.floor((t - st["attrib0"]) / st["interval"] + 1e-9)), 0)
    heights = st["heights"]
    return heights[j % len(heights)]
