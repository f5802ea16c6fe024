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
from time import perf_counter as _perf
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, NumericalError
from marinesim.core.frames import euler_from_quat, euler_from_quat_c, rotation_quat_c
from marinesim.core.jitable import register_jitable
from marinesim.interop.sitl.frame import ServoMap
from marinesim.interop.sitl.plugin import SitlServo
from marinesim.interop.sitl.protocol import SensorReply, decode_servo, encode_reply
from marinesim.models.sixdof.motion import FossenMotion

__all__ = ["TRUTH_COLUMNS", "EnginePlant", "ScenarioEnded", "sent_range"]

#: Codes of the sonar fault kinds in :func:`sent_range`'s table.
_FAULT_CODES = {"nan": 0.0, "zero": 1.0}  # anything else: out_of_range (2)

# The reply as ``encode_reply`` writes it (compact JSON, floats as ``repr``); ``%r`` of a
# Python float is its ``repr``, NaN / ±inf written as JSON's NaN / ±Infinity afterwards.
_KEYS = (
    '\n{"timestamp":%r,"imu":{"gyro":[%r,%r,%r],"accel_body":[%r,%r,%r]},'
    '"position":[%r,%r,%r],"attitude":[%r,%r,%r],"velocity":[%r,%r,%r]'
)
_FMT_NORNG = _KEYS + "}\n"
_FMT_RNG = _KEYS + ',"rng_1":%r}\n'


@register_jitable
def sent_range(dist, sq, sq_min, t, faults, out_of_range):  # noqa: ANN001, ANN201
    """``rng_1`` sent for the newest reading (``dist`` [m], NaN for a dropout; signal quality
    ``sq`` [%], −1 unknown) at reply time ``t``: NaN for a dropout or a known quality below
    ``sq_min``; then the scripted faults whose window holds ``t`` (rows ``t0, t1, kind``:
    0 NaN, 1 zero, 2 ``out_of_range``; the last one wins)."""
    rng = dist
    if not math.isfinite(dist) or (0.0 <= sq < sq_min):
        rng = math.nan
    for i in range(faults.shape[0]):
        if faults[i, 0] <= t < faults[i, 1]:
            kind = int(faults[i, 2])
            rng = math.nan if kind == 0 else (0.0 if kind == 1 else out_of_range)
    return rng

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
        self._faults = np.array(
            [(t0, t1, _FAULT_CODES.get(kind, 2.0)) for kind, t0, t1 in self.faults], dtype=float
        ).reshape(-1, 3)
        self.out_of_range = float(out_of_range)
        #: direct frames (:meth:`step_raw`): off with False (e.g. to compare with the plain
        #: route); the tick before which they may go on, their arguments
        self.direct = True
        self._wend = -1
        self._dx: tuple[Any, ...] = ()  # their arrays (see _bind_direct)
        self._dframes = 0  # direct frames since the plugins' state was last brought in
        self.direct_frames = 0  # frames made direct (all runs)
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
        self._wend = -1  # a new run: no direct frames until a step has been made
        self._dframes = 0
        self._dx = ()  # (the arrays of the previous run's route)

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
        self._sync()
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
        """Physics time of the newest state [s] (the clock's ``time_of(k)``, inline)."""
        c = self.sim.clock
        return float(c.start + c.k * c.dt)

    # ------------------------------------------------------------------ direct frames
    def _sync(self) -> None:
        """The plugins' state (truth, servo reading) after the direct frames since the last
        call (their commit waits until something reads it)."""
        if self._dframes:
            self._dframes = 0
            self.sim._span.sync()
            o = self._dx[11]  # engine_reply's numbers of the last direct frame
            self._rng = float(o[16]) if o[17] else None

    def _open(self) -> None:
        """After a plain step: the frames that may go direct from here (``_wend``), and their
        arguments; none when the compiled route does not run deferred (e.g. an end
        condition other than time, a Python-only plugin, numba absent) or the scenario is
        not the one the reply builder reads (a Fossen motion law with ``x``/``xq`` rows)."""
        self._wend = -1
        sim = self.sim
        route = sim._span
        if not self.direct or not hasattr(route, "direct_window") or sim.status == "diverged":
            return
        clock = sim.clock
        if sim._stop_request is not None or sim._worlds.frozen.any() or clock.k < sim._span_next:
            return
        if sim._end_reason() is not None:
            return
        if not self._dx and not self._bind_direct(route):
            self.direct = False
            return
        end = sim._end_tick() if clock.end is not None else 1 << 62
        wend = min(route.direct_window(end), end)
        if wend <= clock.k:
            return
        fn, args = route.direct()
        x, xq, reading, cnt, cfg, faults, out, pieces, starts, buf = self._dx[-10:]
        from marinesim.interop.sitl.fastframe import engine_reply, entry

        n = engine_reply(x, xq, reading, cnt, cfg, self.t, faults, out, pieces, starts, buf)
        plain = encode_reply(self.reply())
        if self._encode(out) != plain or (n >= 0 and buf[:n].tobytes() != plain):
            self.direct = False  # (the builder reads what it should: a check per window)
            return
        self._wend = wend
        self._tick = fn
        self._targs = args
        self._dec, self._rep = entry(self._decf), entry(engine_reply)

    def _bind_direct(self, route: Any) -> bool:
        """The arrays of the direct frames (False: this scenario has no direct frames)."""
        from marinesim.interop.sitl.fastframe import motor_pulses, reply_pieces

        sim = self.sim
        servo = motion = None
        for slot, laws in route.entries:
            if slot.plugin is self.servo:
                servo = laws
            elif slot.plugin.kind == "motion" and isinstance(
                getattr(slot.plugin, "motion", None), FossenMotion
            ):
                motion = (slot, laws)
            elif laws.inputs is not type(laws).inputs:
                return False  # another array an outside program sets: the plain route
        if servo is None or motion is None:
            return False
        mslot, mlaws = motion
        x, xq = mlaws.arrays.get("x"), mlaws.arrays.get("xq")
        if x is None or xq is None or x.shape[1] != 13 or xq.shape != x.shape:
            return False
        g = float(mslot.ctx.state["motion"].gravity(sim.env.gravity))
        sm = self.servo_map
        self._decf = motor_pulses
        self._raw32 = np.zeros(32)
        self._dx = (
            self._raw32, np.asarray(sm.channels, dtype=np.int64),
            np.asarray(sm.directions, dtype=float), servo.arrays["pwm"], self.servo.pwm,
            x, xq, servo.arrays["reading"], servo.arrays["cnt"],
            np.array([float(sim.clock.h), g, self.sq_min, self.out_of_range]), self._faults, np.zeros(18), *reply_pieces(), np.zeros(1024, dtype=np.uint8),
        )  # fmt: skip
        return True

    @staticmethod
    def _encode(out: Any) -> bytes:
        """The reply text of :func:`engine_reply`'s numbers (``encode_reply``'s bytes)."""
        o = out.tolist()
        text = _FMT_RNG % tuple(o[:17]) if o[17] else _FMT_NORNG % tuple(o[:16])
        if "nan" in text or "inf" in text:
            text = text.replace("nan", "NaN").replace("inf", "Infinity")
        return text.encode("ascii")

    def step_raw(self, data: bytes) -> bytes:
        """One frame from a validated servo datagram (16 or 32 pulses); the encoded reply.

        The fast path of :class:`~marinesim.interop.sitl.lockstep.Lockstep`: while the
        compiled route runs deferred (``Simulation.step``), a frame is three compiled calls
        and no Python per field (*direct frames*: the pulses into the servo law's array, one
        tick of the generated tick through its packed arguments, the reply's numbers from the
        motion law's state), the plugins' ``commit`` waiting until their state is read.
        Otherwise (the first frame, the end of a recorder chunk, a hand-back, an end
        condition) a plain :meth:`step`.  The replies are the same bytes either way.
        """
        sim = self.sim
        clock = sim.clock
        k = clock.k
        if k < self._wend and sim._stop_request is None:
            t0 = _perf()
            route = sim._span
            (raw, chan, dirs, apwm, spwm, x, xq, reading, cnt, cfg, faults, out, pieces,
             starts, buf) = self._dx  # fmt: skip
            if type(data) is not bytes:
                data = bytes(data)
            self._dec(data, raw, chan, dirs, apwm, spwm)
            k1 = abs(self._tick(k, k + 1, *self._targs, route._dn))  # (−: STOP_AFTER, done)
            if k1 == k + 1:
                route._dn += 1
                route._dc += 1
                clock.k = k1
                self.steps += 1
                self._dframes += 1
                self.direct_frames += 1
                self._pwm = raw
                t = clock.start + k1 * clock.dt
                n = self._rep(x, xq, reading, cnt, cfg, t, faults, out, pieces, starts, buf)
                data = buf[:n].tobytes() if n >= 0 else self._encode(out)
                sim._wall += _perf() - t0
                return data
            self._wend = -1  # handed back (nothing done): the plain step
        reply = self.step(decode_servo(data).pwm)
        out_bytes = encode_reply(reply)
        self._open()
        return out_bytes

    def step(self, pwm: Any) -> SensorReply:
        """Advance one physics frame with these servo outputs (µs, 16 or 32); return the reply.

        The motor pulses go into the servo plugin's array in place (the compiled tick's
        ``sitl_servo`` law reads them from there: no bus message per frame).
        """
        self._sync()
        self._wend = -1
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

    def reply(self) -> SensorReply:
        """The reply describing the current truth."""
        self._sync()
        st = self.block.truth
        q0, q1, q2, q3 = st.quat[0].tolist()
        r = rotation_quat_c(q0, q1, q2, q3)  # one vehicle: scalar arithmetic, no arrays
        u, v, w = st.vel[0].tolist()
        vel_ned = [r[0] * u + r[1] * v + r[2] * w, r[3] * u + r[4] * v + r[5] * w,
                   r[6] * u + r[7] * v + r[8] * w]  # fmt: skip
        r = self.servo.reading
        rng = None
        if r is not None:
            rng = float(sent_range(r[0], r[1], self.sq_min, self.t, self._faults, self.out_of_range))
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
        self._sync()
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
        self._sync()
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
