"""``marinesim/SurftrakAltitude-v0``: steer ArduSub's SURFTRAK to a commanded altitude.

The agent is the pilot of an ArduSub vehicle in SURFTRAK (range hold, mode 21): its action is
the pilot's climb-rate demand.  With the demand centred SURFTRAK holds the rangefinder distance
over the terrain; climbing or descending moves the held distance (ArduSub's pilot override and
re-target on release).  The goal is to fly at a commanded altitude above a moving seafloor.

Chain (the project's batched code, N environments at once): the vertical autopilot
:class:`marinesim.control.surftrak.ArduSubVertical` at 400 Hz (40 loops per 0.1 s step,
rangefinder cycle every 20th loop) → vertical thrust → the ``sitl_vertical`` heave model
(:func:`marinesim.models.heave.step_zv_raw`, BlueROV2 Heavy as ArduSub SITL) over a shipped
terrain profile (:mod:`marinesim.environment.terrain`, replayed in time as the SITL harness
does, hard seafloor) → the harness's down-facing rangefinder
(:func:`marinesim.sensors.rangefinder.inject`: 0.3 s delay, 5 cm noise, dropouts and
low-quality rows of the profile, substitutes) delivered to the autopilot as DISTANCE_SENSOR
at 10 Hz.  ArduSub's own z estimate is taken as the truth (its EKF is not simulated); the
agent sees the rangefinder and a pressure depth sensor
(:func:`marinesim.sensors.depth.depth_measure`, 2 cm) and the autopilot's state.

ArduSub parameters are the SITL harness's (``sitl.params``: RNGFND1 0.5–50 m, SURFTRAK_DEPTH
−1 m, PSC_JERK_Z 8, PILOT_ACCEL_Z 500).  Episode: a random terrain phase, the vehicle at rest
2–6 m above the seafloor, already in SURFTRAK; the goal altitude is 1.5–6 m.  Terminated when
the vehicle touches the seafloor or rises above 1 m depth; truncated after 600 steps (60 s).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from marinesim.control.surftrak import SURFTRAK, ArduSubVertical, SurftrakParams
from marinesim.environment.terrain import BUILTIN_PROFILES, builtin_profile
from marinesim.gym._streams import RowStreams
from marinesim.gym.base import Act, BatchTask, MarineEnv, MarineVectorEnv, Obs, View
from marinesim.models.heave import HeaveParams, step_zv_raw
from marinesim.sensors.depth import DepthParams, depth_measure
from marinesim.sensors.noise import corrupt
from marinesim.sensors.rangefinder import RangefinderParams, inject

__all__ = ["SurftrakAltitudeEnv", "SurftrakAltitudeTask", "SurftrakAltitudeVectorEnv"]

F64 = NDArray[np.float64]

LOOP = 0.0025  # s, ArduSub's 400 Hz loop
MAX_CLIMB = 50.0  # cm/s per unit action
SITL_PARAMS = {
    "RNGFND1_TYPE": 10, "RNGFND1_MIN_CM": 50, "RNGFND1_MAX_CM": 5000, "SURFTRAK_DEPTH": -100,
    "PSC_JERK_Z": 8.0, "PILOT_ACCEL_Z": 500, "WPNAV_ACCEL_Z": 500.0,
}  # fmt: skip


_SHARED = ("p", "g", "gains", "stick")  # parameters and gains: shared by the batch


def _splice_obj(big: Any, fresh: Any, rows: NDArray[np.intp], n: int) -> None:
    """Set ``rows`` of every (N,) array attribute of ``big`` and of its controller parts
    (z controller, motors, detector, rangefinder health) from ``fresh`` (len(rows) vehicles)."""
    names = getattr(type(big), "__slots__", None) or list(vars(big))
    for name in names:
        if name in _SHARED:
            continue
        old = getattr(big, name, None)
        if isinstance(old, np.ndarray) and old.shape == (n,):
            arr = old.copy()  # attributes may share one array: never write in place
            arr[rows] = getattr(fresh, name)
            setattr(big, name, arr)
        elif type(old).__module__.startswith("marinesim.control."):
            _splice_obj(old, getattr(fresh, name), rows, n)


class SurftrakAltitudeTask(BatchTask):
    """N ArduSub vehicles in SURFTRAK over their own phases of one terrain profile.

    Parameters
    ----------
    n : int
        Environments.
    terrain : str
        Shipped terrain profile (``sawtooth``, ``trapezoid``, ``square``, ``zeros``, ...).
    """

    env_id: ClassVar[str] = "marinesim/SurftrakAltitude-v0"
    name: ClassVar[str] = "surftrak_altitude"
    dt = 0.1
    max_steps = 600
    observations: ClassVar[tuple[Obs, ...]] = (
        Obs("goal_altitude", "m", 0.0, 10.0, "commanded altitude above the seafloor"),
        Obs("range", "m", 0.0, 60.0, "last rangefinder distance delivered (0 before the first)"),
        Obs("range_ok", "-", 0.0, 1.0, "1 when the last message was a valid reading (quality ≥ 90 %)"),
        Obs("held_range", "m", 0.0, 60.0, "SURFTRAK's held rangefinder target (0 = none yet)"),
        Obs("depth", "m", -1.0, 100.0, "pressure depth sensor"),
        Obs("climb_rate", "m/s", -5.0, 5.0, "climb rate (+ up), 2 cm/s noise"),
    )  # fmt: skip
    actions: ClassVar[tuple[Act, ...]] = (
        Act(
            "climb",
            "cm/s",
            "pilot climb-rate demand 50 a (+ up); below 0.05 cm/s in magnitude = centred: hold range",
        ),
    )
    reward_doc: ClassVar[str] = (
        "−|true altitude − goal altitude| [m] − 0.1 |a| per step; −20 when the vehicle touches "
        "the seafloor or rises above 1 m depth"
    )

    def __init__(self, n: int, terrain: str = "sawtooth") -> None:
        super().__init__(n)
        if terrain not in BUILTIN_PROFILES:
            from marinesim.core.errors import UnknownNameError

            raise UnknownNameError("terrain profile", terrain, BUILTIN_PROFILES, param="terrain")
        self.profile = builtin_profile(terrain)
        self.params = SurftrakParams(**SITL_PARAMS)
        self.heave = HeaveParams()
        self.coef = self.heave.coefficients
        self.rf = RangefinderParams()
        self.depth_sensor = DepthParams(noise_std=0.02)
        self.lag = round(self.rf.delay / self.dt)  # env steps of rangefinder delay
        self.ticks = round(self.dt / LOOP)
        self.tick = 0  # global loop counter (ArduSub's clock)
        zeros = np.zeros(self.n)
        self.z = zeros - 15.0  # m, up
        self.v = zeros.copy()
        self.a = zeros.copy()
        self.phase = zeros.copy()  # s, terrain time at the episode start
        self.t = zeros.copy()  # s, episode time
        self.goal = zeros + 3.0
        self.hist = np.zeros((self.n, self.lag + 1))  # z at the last steps, newest last
        self.reading = (np.zeros(self.n, bool), zeros - 1.0, zeros - 1.0)  # sent, cm, quality
        self.ap = self._autopilot(self.z)

    def _autopilot(self, z: F64) -> ArduSubVertical:
        thr = 0.5 + self.heave.hover_thrust / 2.0
        zc = z * 100.0
        ap = ArduSubVertical(self.params, zc, zc * 0.0, zc * 0.0, zc * 0.0 + thr, LOOP)
        ap.now_us = float(self.tick * 2500)
        ap.set_mode(SURFTRAK)
        ap.zctl.reset_filters = False  # at rest and trimmed: the error filters start at 0
        ap.messages.clear()
        return ap

    def _floor(self) -> F64:
        return self.profile.height_at(self.phase + self.t)

    def reset_rows(self, rows: NDArray[np.intp], setup: list[np.random.Generator]) -> None:
        """Random terrain phase, start 2–6 m above the seafloor at rest; goal 1.5–6 m."""
        k = rows.size
        u = np.array([g.uniform(size=3) for g in setup]).reshape(k, 3)
        self.phase[rows] = self.profile.period * u[:, 0]
        self.t[rows] = 0.0
        z0 = self.profile.height_at(self.phase[rows]) + 2.0 + 4.0 * u[:, 1]
        self.goal[rows] = 1.5 + 4.5 * u[:, 2]
        self.z[rows], self.v[rows], self.a[rows] = z0, 0.0, 0.0
        self.hist[rows] = z0[:, None]
        sent, cm, q = (x.copy() for x in self.reading)
        sent[rows], cm[rows], q[rows] = False, -1.0, -1.0
        self.reading = (sent, cm, q)
        _splice_obj(self.ap, self._autopilot(z0), rows, self.n)

    def step(self, action: F64) -> tuple[F64, NDArray[np.bool_], dict[str, F64]]:
        """40 autopilot loops and heave steps with the climb demand held."""
        ap = self.ap
        climb = MAX_CLIMB * action[:, 0]
        sent, cm, q = self.reading
        for i in range(self.ticks):  # ArduSub's 400 Hz loop inside one 10 Hz step
            ap.now_us = float(self.tick * 2500)
            if i == 0 and sent.any():
                ap.handle_distance_sensor(sent, cm, self.rf.msg_min_cm, self.rf.msg_max_cm, q)
            zc, vc, ac = self.z * 100.0, self.v * 100.0, self.a * 100.0
            if self.tick % 20 == 0:
                ap.z = zc
                ap.rangefinder_cycle()
            thrust = ap.run_climb(climb, zc, vc, ac)
            ap.detect(self.z, self.v)
            self.t += LOOP
            self.z, self.v, self.a = step_zv_raw(
                self.coef, self.z, self.v, thrust, self._floor(), LOOP
            )
            self.tick += 1
        ap.messages.clear()  # GCS texts are not kept (memory stays flat)
        self.hist = np.concatenate([self.hist[:, 1:], self.z[:, None]], axis=1)
        floor = self._floor()
        alt = self.z - floor
        bad = (alt < 0.05) | (self.z > -1.0)
        reward = -np.abs(alt - self.goal) - 0.1 * np.abs(action[:, 0]) - 20.0 * bad
        return reward, bad, {"altitude": alt, "altitude_error": np.abs(alt - self.goal)}

    def view(self, row: int) -> View:
        """Side view (the vehicle moves vertically): height over time, seafloor, held goal."""
        floor = float(self._floor()[row])
        t = float(self.t[row])
        return View("side", np.array([[t, self.z[row]]]), None,
                    np.array([[t, floor + self.goal[row]]]), None, np.array([floor]))  # fmt: skip

    def observe(self, streams: RowStreams) -> F64:
        """Rangefinder reading (delivered to the autopilot next step), depth, autopilot state.

        The reading describes t − 0.3 s: the vehicle's z then and the profile row then (the
        seafloor under the vehicle at that time), as the SITL harness injects it.
        """
        nz = streams.normal(3)
        row = self.profile.rows[self.profile.row_index(
            np.floor((self.phase + self.t - self.rf.delay) / self.profile.interval + 1e-9).astype(int)
        )]  # fmt: skip
        r = inject(self.rf, row, self.hist[:, 0], nz[:, 0])
        self.reading = (r.sent, r.distance_cm, r.quality)
        valid = r.sent & (r.quality >= self.params.RNGFND_SQ_MIN)
        ones = np.ones(self.n)
        depth, _ok = depth_measure(-self.z, nz[:, 1], ones, self.depth_sensor, 1000.0, 9.81)
        held = np.maximum(np.asarray(self.ap.target_cm, dtype=float), 0.0) / 100.0
        last = np.where(r.sent, r.distance_cm / 100.0, 0.0)
        climb = corrupt(self.v, nz[:, 2], 0.02)
        return np.stack([self.goal, last, valid.astype(float), held, depth, climb], axis=1)


class SurftrakAltitudeEnv(MarineEnv):
    """Single environment of :class:`SurftrakAltitudeTask`."""

    task_cls = SurftrakAltitudeTask


class SurftrakAltitudeVectorEnv(MarineVectorEnv):
    """Native vector environment of :class:`SurftrakAltitudeTask`."""

    task_cls = SurftrakAltitudeTask
