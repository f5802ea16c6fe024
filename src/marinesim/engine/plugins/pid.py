"""``heading_speed_depth_pid``: DESIRED_HEADING/SPEED/DEPTH → DESIRED_RUDDER/THRUST/ELEVATOR.

Like MOOS-IvP's pMarinePID: the heading error is wrapped to ±180 deg; each loop is a PID with
an integral limit and an output limit (``marinesim.control.pid``); the thrust is a feed-forward
``speed_factor · desired_speed`` (the inverse of uSimMarine's default thrust map, 20 %/(m/s))
plus a PID on the speed error.  Reads belief (heading, forward speed, depth).  A vehicle that
has received no DESIRED_* value yet gets no command for that loop.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from marinesim.control.pid import PidGains, heading_error, pid_init, pid_update
from marinesim.core.frames import rotation_quat_c
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin
from marinesim.engine.tick import heading_deg

__all__ = ["HeadingSpeedDepthPid", "HeadingSpeedDepthPidParams"]

#: ``np.clip`` on float arrays without its Python dispatch (the same ufunc, the same bits).
_clip = getattr(getattr(np, "_core", None) and np._core.umath, "clip", np.clip)

#: Setpoint topic → its column in the ``desired`` state (heading, speed, depth).
_SETPOINT_COLUMN = {"DESIRED_HEADING": 0, "DESIRED_SPEED": 1, "DESIRED_DEPTH": 2}


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

    def _gains(self) -> PidGains:
        """The three loops' gains as one block: columns heading, speed, depth (built once)."""
        p: Any = self.params
        cached = self.__dict__.get("_gains_cache")
        if cached is not None and cached[0] is p:
            return cached[1]
        cols = (
            (p.heading_kp, p.heading_ki, p.heading_kd, p.heading_integral_limit, p.max_rudder),
            (p.speed_kp, p.speed_ki, p.speed_kd, p.speed_integral_limit, p.max_thrust),
            (p.depth_kp, p.depth_ki, p.depth_kd, p.depth_integral_limit, p.max_elevator),
        )
        gains = PidGains(*(np.array(v, dtype=float) for v in zip(*cols, strict=True)))
        self.__dict__["_gains_cache"] = (p, gains)
        return gains

    def start(self, ctx: Any, rng: Any) -> None:
        """Reset the loop memories and setpoints."""
        n = ctx.n
        # the three loops side by side, columns (heading, speed, depth): one batched update
        ctx.state["pid"] = pid_init((n, 3))
        ctx.state["desired"] = np.full((n, 3), np.nan)
        ctx.state["t_prev"] = np.nan

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.usm_laws`)."""
        from marinesim.engine.plugins.usm_laws import pid_laws

        return pid_laws(self, slot, sim)

    def control(self, ctx: Any, rng: Any) -> None:
        """One update of the three loops from the latest setpoints and the belief."""
        st = ctx.state
        desired = st["desired"]
        msgs = ctx.inbox.messages
        if msgs:  # the latest numeric local value of each setpoint, per row (Inbox.latest)
            desired = desired.copy()
            for m in msgs:
                col = _SETPOINT_COLUMN.get(m.topic)
                if col is None or m.scope != "local":
                    continue
                vals = np.asarray(m.value)
                if vals.dtype == object:
                    continue
                desired[m.rows, col] = vals.reshape(len(m.rows), -1)[:, 0]
            st["desired"] = desired
        t_prev = st["t_prev"]
        dt = ctx.dt if not math.isfinite(t_prev) else max(ctx.t - t_prev, 1e-12)
        st["t_prev"] = ctx.t
        belief = ctx.belief
        gains = self._gains()
        active = ctx.active
        p: Any = self.params

        des_heading = desired[:, 0]
        des_speed = desired[:, 1]
        des_depth = desired[:, 2]
        err = np.empty(desired.shape)
        err[:, 0] = heading_error(des_heading, heading_deg(belief.quat))
        err[:, 1] = des_speed - belief.vel[:, 0]
        err[:, 2] = des_depth - belief.pos[:, 2]
        out, st["pid"] = pid_update(gains, st["pid"], err, dt, active=active[:, None])
        rudder = out[:, 0]
        thrust = _clip(p.speed_factor * des_speed + out[:, 1], -p.max_thrust, p.max_thrust)
        elevator = out[:, 2]
        finite = np.isfinite(desired)
        if p.depth_rate_kd > 0:
            w_down = _down_velocity(belief)
            damped = _clip(elevator - p.depth_rate_kd * w_down, -p.max_elevator, p.max_elevator)
            elevator = np.where(finite[:, 2], damped, 0.0)

        ok = finite & active[:, None]
        every = bool(ok.all())
        for col, topic, value in (
            (0, "DESIRED_RUDDER", rudder),
            (1, "DESIRED_THRUST", thrust),
            (2, "DESIRED_ELEVATOR", elevator),
        ):
            if every:
                ctx.publish(topic, value)
                continue
            rows = np.flatnonzero(ok[:, col])
            if rows.size:
                ctx.publish(topic, value[rows], rows=rows)
        ctx.log("rudder", rudder, "%")
        ctx.log("thrust", np.where(finite[:, 1], thrust, np.nan), "%")
        ctx.log("elevator", elevator, "%")
        ctx.log("desired_heading", des_heading, "deg")
        ctx.log("desired_speed", des_speed, "m/s")
        ctx.log("desired_depth", des_depth, "m")


def _down_velocity(state: Any) -> Any:
    """(N,) down component of the NED velocity, exactly ``state.vel_ned[:, 2]`` (its bits).

    The same rotation entries (:func:`~marinesim.core.frames.rotation_quat_c`) and the same
    ``einsum`` contraction as :attr:`VehicleState.vel_ned`, on the matrices' last row only.
    For one vehicle the entries are computed on Python floats: they use only +, − and ×,
    which round the same on floats and on arrays, so the bits are those of the array path.
    """
    q = state.quat
    n = q.shape[0]
    if n == 1:
        r = rotation_quat_c(*q[0].tolist())
        row = np.array(r[6:9], dtype=float).reshape(1, 1, 3)
    else:
        r = rotation_quat_c(q[:, 0], q[:, 1], q[:, 2], q[:, 3])
        row = np.empty((n, 1, 3))
        row[:, 0, 0] = r[6]
        row[:, 0, 1] = r[7]
        row[:, 0, 2] = r[8]
    return np.einsum("nij,nj->ni", row, state.vel)[:, 0]
