"""``heading_speed_depth_pid``: DESIRED_HEADING/SPEED/DEPTH → DESIRED_RUDDER/THRUST/ELEVATOR.

Like MOOS-IvP's pMarinePID: the heading error is wrapped to ±180 deg; each loop is a PID with
an integral limit and an output limit (``marinesim.control.pid``); the thrust is a feed-forward
``speed_factor · desired_speed`` (the inverse of uSimMarine's default thrust map, 20 %/(m/s))
plus a PID on the speed error.  Reads belief (heading, forward speed, depth).  A vehicle that
has received no DESIRED_* value yet gets no command for that loop.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from marinesim.control.pid import PidGains, heading_error, pid_init, pid_update
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin

__all__ = ["HeadingSpeedDepthPid", "HeadingSpeedDepthPidParams"]


class HeadingSpeedDepthPidParams(ParamsBase):
    """Gains and limits of the three loops."""

    heading_kp: float = field(1.2, unit="%/deg", description="rudder per degree of heading error")
    heading_ki: float = field(0.0, unit="%/(deg*s)", description="heading integral gain")
    heading_kd: float = field(0.1, unit="%*s/deg", description="heading derivative gain")
    heading_integral_limit: float = field(
        10.0, unit="%", ge=0, description="bound of the integral term"
    )
    max_rudder: float = field(100.0, unit="%", gt=0, le=100, description="rudder limit")
    speed_factor: float = field(
        20.0,
        unit="%/(m/s)",
        ge=0,
        description="feed-forward thrust per m/s of desired speed (0 = off)",
    )
    speed_kp: float = field(0.0, unit="%/(m/s)", description="thrust per m/s of speed error")
    speed_ki: float = field(0.0, unit="%/m", description="speed integral gain")
    speed_kd: float = field(0.0, unit="%*s^2/m", description="speed derivative gain")
    speed_integral_limit: float = field(
        20.0, unit="%", ge=0, description="bound of the integral term"
    )
    max_thrust: float = field(100.0, unit="%", gt=0, description="thrust limit")
    depth_kp: float = field(
        40.0, unit="%/m", description="elevator per metre of depth error (positive = dive)"
    )
    depth_ki: float = field(0.0, unit="%/(m*s)", description="depth integral gain")
    depth_kd: float = field(0.0, unit="%*s/m", description="depth derivative gain")
    depth_integral_limit: float = field(
        20.0, unit="%", ge=0, description="bound of the integral term"
    )
    depth_rate_kd: float = field(
        50.0,
        unit="%*s/m",
        ge=0,
        description="elevator per m/s of measured depth rate (damping; derivative on measurement)",
    )
    max_elevator: float = field(100.0, unit="%", gt=0, le=100, description="elevator limit")


class HeadingSpeedDepthPid(Plugin):
    """Heading/speed/depth PID autopilot (pMarinePID-like) producing rudder, thrust, elevator."""

    kind: ClassVar[str] = "controller"
    Params = HeadingSpeedDepthPidParams
    subscribes: ClassVar[dict[str, str]] = {
        "DESIRED_HEADING": "double",
        "DESIRED_SPEED": "double",
        "DESIRED_DEPTH": "double",
    }
    publishes: ClassVar[dict[str, str]] = {
        "DESIRED_RUDDER": "double",
        "DESIRED_THRUST": "double",
        "DESIRED_ELEVATOR": "double",
    }

    @classmethod
    def topic_docs(cls) -> dict[str, tuple[str, str]]:
        """Units and meaning of the setpoints read and the commands written."""
        return {
            "DESIRED_HEADING": ("deg", "heading setpoint (marine heading)"),
            "DESIRED_SPEED": ("m/s", "speed setpoint"),
            "DESIRED_DEPTH": ("m", "depth setpoint (positive down)"),
            "DESIRED_RUDDER": ("%", "rudder command, ±max_rudder"),
            "DESIRED_THRUST": ("%", "thrust command, ±max_thrust"),
            "DESIRED_ELEVATOR": ("%", "elevator command, ±max_elevator"),
        }

    def _gains(self) -> tuple[PidGains, PidGains, PidGains]:
        p: Any = self.params
        return (
            PidGains(
                p.heading_kp, p.heading_ki, p.heading_kd, p.heading_integral_limit, p.max_rudder
            ),
            PidGains(p.speed_kp, p.speed_ki, p.speed_kd, p.speed_integral_limit, p.max_thrust),
            PidGains(p.depth_kp, p.depth_ki, p.depth_kd, p.depth_integral_limit, p.max_elevator),
        )

    def start(self, ctx: Any, rng: Any) -> None:
        """Reset the loop memories and setpoints."""
        n = ctx.n
        for loop in ("heading", "speed", "depth"):
            ctx.state[f"{loop}_pid"] = pid_init(n)
            ctx.state[f"desired_{loop}"] = np.full(n, np.nan)
        ctx.state["t_prev"] = np.nan

    def control(self, ctx: Any, rng: Any) -> None:
        """One update of the three loops from the latest setpoints and the belief."""
        st = ctx.state
        for loop in ("heading", "speed", "depth"):
            val, got = ctx.inbox.latest(f"DESIRED_{loop.upper()}")
            st[f"desired_{loop}"] = np.where(got, val, st[f"desired_{loop}"])
        t_prev = st["t_prev"]
        dt = ctx.dt if not np.isfinite(t_prev) else max(ctx.t - t_prev, 1e-12)
        st["t_prev"] = ctx.t
        belief = ctx.belief
        gh, gs, gd = self._gains()
        active = ctx.active
        p: Any = self.params

        e_h = heading_error(st["desired_heading"], belief.heading_deg)
        rudder, st["heading_pid"] = pid_update(gh, st["heading_pid"], e_h, dt, active=active)
        des_speed = st["desired_speed"]
        e_s = des_speed - belief.vel[:, 0]
        corr, st["speed_pid"] = pid_update(gs, st["speed_pid"], e_s, dt, active=active)
        thrust = np.clip(p.speed_factor * des_speed + corr, -p.max_thrust, p.max_thrust)
        e_d = st["desired_depth"] - belief.depth
        elevator, st["depth_pid"] = pid_update(gd, st["depth_pid"], e_d, dt, active=active)
        if p.depth_rate_kd > 0:
            w_down = belief.vel_ned[:, 2]
            damped = np.clip(elevator - p.depth_rate_kd * w_down, -p.max_elevator, p.max_elevator)
            elevator = np.where(np.isfinite(st["desired_depth"]), damped, 0.0)

        for topic, value, desired in (
            ("DESIRED_RUDDER", rudder, st["desired_heading"]),
            ("DESIRED_THRUST", thrust, des_speed),
            ("DESIRED_ELEVATOR", elevator, st["desired_depth"]),
        ):
            rows = np.flatnonzero(np.isfinite(desired) & active)
            if rows.size:
                ctx.publish(topic, np.asarray(value)[rows], rows=rows)
        ctx.log("rudder", rudder, "%")
        ctx.log("thrust", np.where(np.isfinite(des_speed), thrust, np.nan), "%")
        ctx.log("elevator", elevator, "%")
        ctx.log("desired_heading", st["desired_heading"], "deg")
        ctx.log("desired_speed", des_speed, "m/s")
        ctx.log("desired_depth", st["desired_depth"], "m")
