"""A marinesim scenario as SITL's physics: one engine tick per servo frame.

:class:`EnginePlant` wraps a :class:`~marinesim.engine.simulation.Simulation` whose vehicle
has a ``fossen6dof`` motion with a thruster plant (``thrusters: {input: pwm}``: ESC, rotor lag,
T200 at the battery's voltage), the ``sitl_servo`` controller and, optionally, a
``rangefinder`` sensor.  :meth:`EnginePlant.step` writes the motor pulses into the servo
plugin, advances the engine by one tick (dt = the scenario's ``time.dt``, normally 1/1200 s,
ArduSub SITL's rate) and reads the reply from the truth: body rates, the body specific force
that the motion plugin computes over the tick (not a constant −g), Euler attitude, NED
position and NED velocity (the body velocity rotated by the attitude), and ``rng_1``.

Rangefinder → ``rng_1`` [m]: absent before the first reading; then the newest reading,
sample-and-hold; a dropout, or a reading whose signal quality is known (≥ 0) and below
``sq_min`` (a Ping sonar's invalid reading, which ArduSub's ``RNGFND_SQ_MIN`` would reject),
is sent as NaN (SITL: status NoData, last distance kept), never as a stale "Good" value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, NumericalError
from marinesim.core.frames import euler_from_quat, euler_from_quat_c, rotation_quat_c
from marinesim.interop.sitl.frame import ServoMap
from marinesim.interop.sitl.plugin import SitlServo
from marinesim.interop.sitl.protocol import SensorReply

__all__ = ["TRUTH_COLUMNS", "EnginePlant", "ScenarioEnded"]

#: Columns of :meth:`EnginePlant.truth_row` (the backend's streamed truth log).
TRUTH_COLUMNS = (
    "t", "sitl_time_us", "frame_count", "x", "y", "z", "roll", "pitch", "yaw",
    "u", "v", "w", "p", "q", "r", "fx", "fy", "fz", "floor_z", "true_alt", "rng_1",
    *(f"pwm{i}" for i in range(1, 9)),
)  # fmt: skip


class ScenarioEnded(Exception):  # noqa: N818 - a normal end, not an error
    """The scenario reached an end condition: the backend stops serving."""


class EnginePlant:
    """SIM_JSON plant backed by a marinesim simulation (one vehicle).

    Parameters
    ----------
    sim : Simulation
        Built scenario (not started); its first entity block's first row is the vehicle.
    servo_map : ServoMap, optional
        Servo channel → motor mapping and motor directions (default: motor n on SERVOn).
    sq_min : float
        Readings with a known signal quality below this [%] are sent as NaN (0 = keep all).
    faults : sequence of SonarFault
        Scripted sonar faults: while the reply time is in a window, a reading that would be
        sent is replaced by NaN (``nan``), 0.0 (``zero``) or ``out_of_range`` [m].
    stream_dir : path, optional
        Stream the engine's log there (:meth:`Simulation.stream_to`; memory stays flat over
        hours of SITL); after a SITL restart the next run goes to ``<stream_dir>-1``, ...
    fmt : str
        Log format of :meth:`Simulation.stream_to` (``parquet``, ``csv``, ``both``, ``mcap``).
    on_stream : callable, optional
        ``on_stream(sim)`` after each ``stream_to`` (e.g. to serve the run live).
    """

    def __init__(
        self,
        sim: Any,
        servo_map: ServoMap | None = None,
        sq_min: float = 90.0,
        stream_dir: str | Path | None = None,
        faults: Sequence[Any] = (),
        out_of_range: float = 99.0,
        fmt: str = "parquet",
        on_stream: Any = None,
    ) -> None:
        self.sim = sim
        #: scripted sonar faults ``(kind, t0, t1)`` on the reply time (SonarFault objects)
        self.faults = [(f.kind, float(f.t0), float(f.t1)) for f in faults]
        self.out_of_range = float(out_of_range)
        self.fmt = fmt
        self.on_stream = on_stream
        self.stream_dir = None if stream_dir is None else Path(stream_dir)
        self.stream_dirs: list[Path] = []
        self._bind()
        motors = self.servo.pwm.shape[0]
        self.servo_map = servo_map or ServoMap.default(motors)
        if self.servo_map.motors != motors:
            raise ConfigError(
                f"the servo map drives {self.servo_map.motors} motors but the vehicle has "
                f"{motors} (sitl_servo.motors)",
                param="FRAME_CONFIG",
            )
        self.sq_min = float(sq_min)
        self.dt = float(sim.clock.dt)
        self.rate_hz = 1.0 / self.dt
        self.steps = 0
        self._rng: float | None = None
        self._pwm = np.zeros(16)
        self._stream()

    def _bind(self) -> None:
        """(Re)attach to the simulation's runtime objects: :meth:`Simulation.reset` builds new
        entity blocks and plugin slots, so the vehicle and its servo plugin are looked up
        again after every reset (the old ones hold the previous run's final state)."""
        sim = self.sim
        if not sim.blocks:
            raise ConfigError("the scenario has no vehicle", param="entities")
        self.block = sim.blocks[0]
        servo = [
            s.plugin for s in sim.slots if isinstance(s.plugin, SitlServo) and s.block is self.block
        ]
        if not servo:
            raise ConfigError(
                f"entity {self.block.name!r} needs the 'sitl_servo' controller to be driven by "
                "SITL (controllers: [{plugin: sitl_servo}])",
                param=f"entities.{self.block.name}.controllers",
            )
        self.servo: SitlServo = servo[0]

    def _stream(self) -> None:
        if self.stream_dir is None:
            return
        n = len(self.stream_dirs)
        d = self.stream_dir if n == 0 else self.stream_dir.with_name(f"{self.stream_dir.name}-{n}")
        self.stream_dirs.append(Path(self.sim.stream_to(d, self.fmt)))
        if self.on_stream is not None:
            self.on_stream(self.sim)

    def finish(self, reason: str = "SITL stopped") -> Any:
        """Finalise the engine run (log, manifest: status ``interrupted``, ``ended_by`` =
        ``reason``); returns its RunResult (None before the first frame)."""
        if self.steps == 0:
            return None
        self.sim.interrupt(reason)
        return self.sim.run()

    def reset(self) -> None:
        """Start the scenario over (SITL restarted); the previous run is finalised first."""
        self.finish("SITL restarted")
        self.sim.reset()
        self._bind()
        self.steps = 0
        self._rng = None
        self._stream()

    @property
    def t(self) -> float:
        """Physics time of the newest state [s]."""
        return float(self.sim.clock.t)

    def step(self, pwm: Any) -> SensorReply:
        """Advance one physics frame with these servo outputs (µs, 16 or 32); return the reply.

        The motor pulses go into the servo plugin's array in place (the compiled tick's
        ``sitl_servo`` law reads them from there: no bus message per frame).
        """
        self._pwm = np.asarray(pwm, dtype=float)
        self.servo.pwm[:] = self.servo_map.motor_pwm(self._pwm)
        done = self.sim.step(1)
        if done != 1:
            if self.sim.status == "diverged":
                raise NumericalError(
                    "the vehicle's state became non-finite; see the run events",
                    entity=self.block.names[0],
                    t=self.t,
                )
            raise ScenarioEnded(f"scenario ended at t = {self.t:g} s ({self.sim.ended_by})")
        self.steps += 1
        return self.reply()

    def _rng_value(self) -> float | None:
        r = self.servo.reading
        if r is None:
            return None
        dist, sq = r
        if not math.isfinite(dist) or (0.0 <= sq < self.sq_min):
            return float("nan")
        return dist

    def reply(self) -> SensorReply:
        """The reply describing the current truth."""
        st = self.block.truth
        q0, q1, q2, q3 = st.quat[0].tolist()
        r = rotation_quat_c(q0, q1, q2, q3)  # one vehicle: scalar arithmetic, no arrays
        u, v, w = st.vel[0].tolist()
        vel_ned = [r[0] * u + r[1] * v + r[2] * w, r[3] * u + r[4] * v + r[5] * w,
                   r[6] * u + r[7] * v + r[8] * w]  # fmt: skip
        rng = self._rng_value()
        if rng is not None and self.faults:
            t = self.t
            for kind, t0, t1 in self.faults:
                if t0 <= t < t1:
                    rng = {"nan": float("nan"), "zero": 0.0}.get(kind, self.out_of_range)
        self._rng = rng
        return SensorReply(
            timestamp=self.t,
            gyro=st.ang_vel[0].tolist(),
            accel_body=st.accel[0].tolist(),
            position=st.pos[0].tolist(),
            velocity=vel_ned,
            attitude=list(euler_from_quat_c(q0, q1, q2, q3)),
            rng={} if rng is None else {1: rng},
        )

    def floor_depth(self) -> float:
        """Seafloor depth under the vehicle now [m, down +] (NaN when the scenario has none).

        From ``environment.terrain``, else from the ``rangefinder`` sensor's shipped profile
        (replayed along time, SURFTRAK spec §11.1).
        """
        env = self.sim.env
        st = self.block.truth
        if getattr(env, "has_terrain", False):
            return float(env.seafloor_depth(st.pos[:1, 0], st.pos[:1, 1])[0])
        for slot in self.sim.slots:
            prof = slot.state.get("profile") if slot.block is self.block else None
            if prof is not None and "attrib0" in slot.state:
                j = max(int(np.floor((self.t - slot.state["attrib0"]) / prof.interval + 1e-9)), 0)
                return -float(prof.heights[j % len(prof.heights)])
        return float("nan")

    def truth_row(self, sitl_time_us: int, frame_count: int) -> list[float]:
        """One row of the truth log (:data:`TRUTH_COLUMNS`)."""
        st = self.block.truth
        eul = euler_from_quat(st.quat[:1])[0]
        floor = self.floor_depth()
        pwm = np.zeros(8)
        k = min(8, self._pwm.shape[0])
        pwm[:k] = self._pwm[:k]
        rng = float("nan") if self._rng is None else self._rng
        return [
            self.t, sitl_time_us, frame_count, *st.pos[0], *eul, *st.vel[0], *st.ang_vel[0],
            *st.accel[0], -floor, floor - float(st.pos[0, 2]), rng, *pwm,
        ]  # fmt: skip
