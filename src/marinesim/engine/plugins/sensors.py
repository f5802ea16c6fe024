"""Engine plugins of the navigation sensors, belief writers and contacts (engine spec §6, §7).

Each plugin wraps a pure, batched function of :mod:`marinesim.sensors` and draws its noise from
the per-entity streams handed to its hooks (fixed consumption per sample).  Topics (entity
``local`` scope; payload rows = publishing vehicles):

========================  ==========================================================  =========
topic                     payload columns                                             publisher
========================  ==========================================================  =========
``gps/fix``               north, east [m]                                             ``gps``
``depth/depth``           depth [m]                                                   ``depth_sensor``
``imu/data``              f_x, f_y, f_z [m/s²], p, q, r [rad/s]                       ``imu``
``ahrs/quat``             q_w, q_x, q_y, q_z                                          ``ahrs``
``dvl/velocity``          u, v, w [m/s], mode (1 bottom lock, 2 water track)          ``dvl``
``nav/state``             pos (3) [m], body vel (3) [m/s], quat (4), P diagonal (9)   belief writers
``nav/cep``               CEP50 [m]                                                   ``simple_ins``, ``nav_ekf``
``nav/gps_fix``           1 when a GPS fix is held                                    ``simple_ins``
``contacts``              contact id, north, east, down [m], covariance (9) [m²],     ``contacts``
                          range [m], azimuth, elevation [rad], false alarm (0/1),
                          v_n, v_e, v_d [m/s] (NaN without ``vel_std``)
========================  ==========================================================  =========

Belief writers (``noisy_state``, ``simple_ins``, ``nav_ekf``) sample what they need from truth
in ``sense`` (or in ``start`` for the EKF's launch fix) and write the belief in ``estimate``,
which may not read truth (access matrix of engine spec §2.3).
"""

from __future__ import annotations

from collections import deque
from typing import Any, ClassVar

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.core.frames import rotation_from_quat, rotation_quat_c
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin
from marinesim.sensors import ahrs, contacts, depth, dvl, gps, imu, nav
from marinesim.sensors.estimation import EkfParams, NavEkf
from marinesim.sensors.pipeline import DelayLine

__all__ = [
    "AhrsSensor",
    "ContactSensor",
    "DepthSensor",
    "DvlSensor",
    "GpsSensor",
    "ImuSensor",
    "NavEkfEstimator",
    "NoisyStateSensor",
    "SimpleInsSensor",
]


def _rotations(q: Any) -> np.ndarray:
    """Rotations (N, 3, 3) of quaternions (N, 4): :func:`rotation_from_quat`'s entries, bit for
    bit (the same law, :func:`rotation_quat_c`), written into one array without its stacks."""
    q = np.asarray(q, dtype=float)
    e = rotation_quat_c(q[:, 0], q[:, 1], q[:, 2], q[:, 3])
    out = np.empty((q.shape[0], 9))
    for k in range(9):
        out[:, k] = e[k]
    return out.reshape(-1, 3, 3)


#: The last truth attitude rotated by :func:`_truth_rotations` (its bytes) and its rotations
#: (one tuple, replaced whole: a reader never pairs one attitude with another's rotations).
_TRUTH_ROT: list[tuple[bytes, Any]] = [(b"", None)]


def _truth_rotations(q: Any) -> np.ndarray:
    """:func:`_rotations` of a truth attitude, read-only, shared while the attitude is the same.

    The IMU, the DVL and the contact sensor sample the same truth at the same tick: the first
    rotates it, the others find the same quaternion bytes and reuse the (read-only) result.
    """
    q = np.ascontiguousarray(q, dtype=float)
    key = q.tobytes()
    last, rot = _TRUTH_ROT[0]
    if key != last:
        rot = _rotations(q)
        rot.flags.writeable = False
        _TRUTH_ROT[0] = (key, rot)
    return rot


#: The order in which ``nav_ekf`` fuses the messages of one time stamp: the attitude, then
#: the IMU (its sample was taken with that attitude), then the aiding sensors.  A fixed order:
#: a vehicle's estimate does not depend on which other rows of its block (or which stacked
#: worlds) had a message, as an order taken from the bus's delivery would.
FUSION_ORDER = ("ahrs/quat", "imu/data", "depth/depth", "gps/fix", "dvl/velocity")
_FUSION_RANK = {topic: i for i, topic in enumerate(FUSION_ORDER)}
#: The aiding topics: the filter predicts to their time before it updates.
_AIDING = frozenset(FUSION_ORDER[2:])


def _laws(kind: str) -> Any:
    """``compiled_laws`` of a navigation sensor (:mod:`~marinesim.engine.plugins.sensor_laws`)."""

    def compiled_laws(self: Plugin, slot: Any, sim: Any) -> Any:
        from marinesim.engine.plugins.sensor_laws import declare

        return declare(self, slot, sim, kind)

    compiled_laws.sensor_kind = kind  # type: ignore[attr-defined]
    return compiled_laws


def _period(ctx: Any) -> float:
    """Sensor period [s] from the engine schedule (``ctx.period``: ticks between calls × dt)."""
    return float(ctx.period)


def _delayed(ctx: Any, key: str, value: np.ndarray, delay: float) -> np.ndarray:
    """Push ``value`` (N, k) into the plugin's delay line and read it ``delay`` seconds back."""
    if delay <= 0:
        return value
    line = ctx.state.get(key)
    if line is None:
        line = ctx.state[key] = DelayLine(value.shape[0], value.shape[1], _period(ctx), delay)
    line.push(value)
    return line.read(delay)


def _buffer(ctx: Any, t_stamp: float, value: np.ndarray, ok: np.ndarray) -> None:
    """Keep the last ``buffer_size`` samples (t_stamp, values (N, k), delivered mask (N,))."""
    buf = ctx.state.get("buffer")
    if buf is None:
        buf = ctx.state["buffer"] = deque(maxlen=int(ctx.params.buffer_size))
    # the sensors' sample arrays are fresh every call and never changed: kept without a copy
    val = np.asarray(value, dtype=float).reshape(ok.shape[0], -1)
    buf.append((float(t_stamp), val, ok))


def _deliver(ctx: Any, topic: str, value: np.ndarray, ok: np.ndarray, delay: float) -> None:
    """Buffer a sample of t − ``delay`` and publish the rows delivered on ``topic``.

    Parameters
    ----------
    value : ndarray, shape (N, k)
        The sample of every vehicle.
    ok : ndarray of bool, shape (N,)
        Delivered (inactive vehicles never are).
    delay : float
        Sensor delay [s]: the sample describes t − delay.
    """
    ok = ok & np.asarray(ctx.active)
    _buffer(ctx, ctx.t - delay, value, ok)
    if ok.all():  # every row: the message rows=flatnonzero(ok) gives, without the copy
        ctx.publish(topic, value, t_stamp=ctx.t - delay)
        return
    rows = np.flatnonzero(ok)
    if rows.size:
        ctx.publish(topic, value[rows], rows=rows, t_stamp=ctx.t - delay)


def _log_position_quality(ctx: Any, cep: np.ndarray, cov: np.ndarray) -> None:
    """Log CEP50 [m] (N,) and the position standard deviations of the covariance (N, 9, 9)."""
    ctx.log("cep", cep, "m")
    ctx.log(
        "pos_std",
        np.sqrt(np.diagonal(cov, axis1=1, axis2=2)[:, 0:3]),
        "m",
        ("north", "east", "down"),
    )


def _nav_payload(pos: np.ndarray, vel: np.ndarray, quat: np.ndarray, cov: np.ndarray) -> np.ndarray:
    return np.concatenate([pos, vel, quat, np.diagonal(cov, axis1=1, axis2=2)], axis=1)


def _write_belief(ctx: Any) -> VehicleState | None:
    """Write the belief that ``sense`` sampled and publish it on ``nav/state``.

    Returns it, or None before the first sample (nothing written).
    """
    b: VehicleState | None = ctx.state.get("belief")
    if b is not None:
        ctx.set_belief(b)
        ctx.publish("nav/state", _nav_payload(b.pos, b.vel, b.quat, b.cov))
    return b


class GpsSensor(Plugin):
    """GPS fixes (north, east) with noise, only at the surface."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {"noise_std": 2.0}
    kind: ClassVar[str] = "sensor"
    compiled_laws = _laws("gps")
    Params = gps.GpsParams
    publishes: ClassVar[dict[str, str]] = {"gps/fix": "array"}

    def sense(self, ctx: Any, rng: Any) -> None:
        """Sample truth, publish delivered fixes on ``gps/fix``."""
        p: gps.GpsParams = ctx.params
        pos = _delayed(ctx, "line", np.asarray(ctx.truth.pos), p.delay)
        ne, fix = gps.gps_measure(pos, rng.normal(size=2), rng.uniform(size=1)[:, 0], p)
        fix &= np.asarray(ctx.active)
        ctx.log("fix", fix.astype(float), "")
        ctx.log("ne", np.where(fix[:, None], ne, np.nan), "m", ("north", "east"))
        _deliver(ctx, "gps/fix", ne, fix, p.delay)


class DepthSensor(Plugin):
    """Pressure depth sensor."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {"noise_std": 0.05}
    kind: ClassVar[str] = "sensor"
    compiled_laws = _laws("depth")
    Params = depth.DepthParams
    publishes: ClassVar[dict[str, str]] = {"depth/depth": "array"}

    def sense(self, ctx: Any, rng: Any) -> None:
        """Sample truth depth, publish on ``depth/depth``."""
        p: depth.DepthParams = ctx.params
        d_true = _delayed(ctx, "line", np.asarray(ctx.truth.pos)[:, 2:3], p.delay)[:, 0]
        d, ok = depth.depth_measure(
            d_true,
            rng.normal(size=1)[:, 0],
            rng.uniform(size=1)[:, 0],
            p,
            ctx.env.density,
            ctx.env.gravity,
        )
        ctx.log("depth", np.where(ok & np.asarray(ctx.active), d, np.nan), "m")
        _deliver(ctx, "depth/depth", d[:, None], ok, p.delay)


class ImuSensor(Plugin):
    """IMU: specific force (from the truth position track) and angular rate, biases as walks."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "accel_noise_std": 0.02,
        "gyro_noise_std": 0.001,
        "accel_bias_walk": 0.0002,
        "gyro_bias_walk": 1e-05,
    }
    kind: ClassVar[str] = "sensor"
    compiled_laws = _laws("imu")
    Params = imu.ImuParams
    publishes: ClassVar[dict[str, str]] = {"imu/data": "array"}

    def start(self, ctx: Any, rng: Any) -> None:
        """Draw the initial biases (6 normals per vehicle)."""
        p: imu.ImuParams = ctx.params
        b = rng.normal(size=6)
        ctx.state["bias_a"] = p.accel_bias_init_std * b[:, 0:3]
        ctx.state["bias_g"] = p.gyro_bias_init_std * b[:, 3:6]
        ctx.state["p_hist"] = []

    def sense(self, ctx: Any, rng: Any) -> None:
        """One sample: f = Rᵀ(a − g), a the second difference of the truth positions at the
        sensor period (consistent with the trajectory whatever the motion model stores as
        velocity); white noise and bias walks; publish ``imu/data``."""
        p: imu.ImuParams = ctx.params
        tr = ctx.truth
        dt = _period(ctx)
        hist = ctx.state["p_hist"]
        hist.append(np.array(tr.pos))
        if len(hist) > 3:
            del hist[0]
        if len(hist) == 3:
            acc = (hist[2] - 2.0 * hist[1] + hist[0]) / (dt * dt)
        else:
            acc = np.zeros_like(hist[-1])
        rot = _truth_rotations(tr.quat)
        f_true = imu.specific_force(acc, rot, ctx.env.gravity)
        f, w, ba, bg = imu.imu_measure(
            f_true,
            np.asarray(tr.ang_vel),
            ctx.state["bias_a"],
            ctx.state["bias_g"],
            rng.normal(size=12),
            dt,
            p,
        )
        ctx.state["bias_a"], ctx.state["bias_g"] = ba, bg
        ok = (rng.uniform(size=1)[:, 0] >= p.dropout_probability) & np.asarray(ctx.active)
        ctx.log("accel_bias", ba, "m/s^2", ("x", "y", "z"))
        sample = np.concatenate([f, w, ok[:, None].astype(float)], axis=1)
        sample = _delayed(ctx, "line", sample, p.delay)  # (f, ω, delivered) of t − delay
        got = (sample[:, 6] > 0.5)[:, None] & np.asarray(ctx.active)[:, None]
        ctx.log("accel", np.where(got, sample[:, 0:3], np.nan), "m/s^2", ("x", "y", "z"))
        ctx.log("gyro", np.where(got, sample[:, 3:6], np.nan), "rad/s", ("x", "y", "z"))
        _deliver(ctx, "imu/data", sample[:, 0:6], sample[:, 6] > 0.5, p.delay)


class AhrsSensor(Plugin):
    """Compass / AHRS attitude with body-frame roll, pitch, yaw noise."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "roll_std_deg": 0.1,
        "pitch_std_deg": 0.1,
        "yaw_std_deg": 0.5,
    }
    kind: ClassVar[str] = "sensor"
    compiled_laws = _laws("ahrs")
    Params = ahrs.AhrsParams
    publishes: ClassVar[dict[str, str]] = {"ahrs/quat": "array"}

    def sense(self, ctx: Any, rng: Any) -> None:
        """Sample truth attitude, publish ``ahrs/quat``."""
        p: ahrs.AhrsParams = ctx.params
        q_true = _delayed(ctx, "line", np.asarray(ctx.truth.quat), p.delay)
        q_true = q_true / np.linalg.norm(q_true, axis=1, keepdims=True)
        q, ok = ahrs.ahrs_measure(q_true, rng.normal(size=3), rng.uniform(size=1)[:, 0], p)
        _deliver(ctx, "ahrs/quat", q, ok, p.delay)


class DvlSensor(Plugin):
    """DVL: bottom lock within [min_altitude, max_altitude], water track otherwise, dropouts."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "noise_std": 0.03,
        "min_altitude": 0.5,
        "max_altitude": 35.0,
        "lever_arm": [0.0, 0.0, 0.0],
        "seafloor_depth": 40.0,
    }
    kind: ClassVar[str] = "sensor"
    compiled_laws = _laws("dvl")
    Params = dvl.DvlParams
    publishes: ClassVar[dict[str, str]] = {"dvl/velocity": "array"}

    def start(self, ctx: Any, rng: Any) -> None:
        """Check that a seafloor depth is known (the param, else the environment's terrain)."""
        p: dvl.DvlParams = ctx.params
        if p.seafloor_depth is None and not getattr(ctx.env, "has_terrain", False):
            raise ConfigError(
                f"dvl {self.name!r}: the environment has no terrain; add environment.terrain "
                "({model: flat, depth: D} or {model: grid, file: bathy.csv}) or set "
                "params.seafloor_depth (m)",
                param="seafloor_depth",
            )

    def sense(self, ctx: Any, rng: Any) -> None:
        """Sample truth body velocity and altitude, publish ``dvl/velocity`` when tracking."""
        p: dvl.DvlParams = ctx.params
        tr = ctx.truth
        pos = np.asarray(tr.pos)
        if p.seafloor_depth is not None:  # explicit override of the environment's terrain
            floor = np.full(pos.shape[0], p.seafloor_depth)
        else:  # the scenario's environment.terrain under each vehicle
            floor = ctx.env.seafloor_depth(pos[:, 0], pos[:, 1])
        alt = floor - pos[:, 2]
        rot = _truth_rotations(tr.quat)
        cur = np.zeros((pos.shape[0], 3))
        cur[:, :2] = ctx.env.current(pos[:, 0], pos[:, 1])
        cur_b = np.einsum("nji,nj->ni", rot, cur)
        prev = ctx.state.get("p_prev")
        ctx.state["p_prev"] = pos.copy()
        if prev is None:
            v_body = np.asarray(tr.vel)
        else:  # velocity over ground from the truth track (consistent with any motion model)
            v_body = np.einsum("nji,nj->ni", rot, (pos - prev) / _period(ctx))
        v, mode = dvl.dvl_measure(
            v_body,
            np.asarray(tr.ang_vel),
            cur_b,
            alt,
            rng.normal(size=3),
            rng.uniform(size=1)[:, 0],
            p,
        )
        ctx.log("mode", mode.astype(float), "")
        ctx.log("altitude", alt, "m")
        val = np.concatenate([v, mode[:, None].astype(float)], axis=1)
        val = _delayed(ctx, "line", val, p.delay)
        got = (val[:, 3] > 0.5)[:, None] & np.asarray(ctx.active)[:, None]
        ctx.log("vel", np.where(got, val[:, 0:3], np.nan), "m/s", ("u", "v", "w"))
        _deliver(ctx, "dvl/velocity", val, val[:, 3] > 0.5, p.delay)


class NoisyStateSensor(Plugin):
    """Belief = truth with Gaussian noise on position, velocity and attitude (SCRIMMAGE fixed)."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "pos_std": [1.0, 1.0, 0.2],
        "pos_mean": [0.0, 0.0, 0.0],
        "vel_std": [0.1, 0.1, 0.1],
        "vel_mean": [0.0, 0.0, 0.0],
        "att_std_deg": [0.5, 0.5, 1.0],
        "att_mean_deg": [0.0, 0.0, 0.0],
    }
    kind: ClassVar[str] = "sensor"
    Params = nav.NoisyStateParams
    publishes: ClassVar[dict[str, str]] = {"nav/state": "array"}
    writes_belief: ClassVar[bool] = True

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.belief_laws`)."""
        from marinesim.engine.plugins.belief_laws import declare_noisy_state

        return declare_noisy_state(self, slot, sim)

    compiled_laws.sensor_kind = "noisy_state"  # type: ignore[attr-defined]

    def sense(self, ctx: Any, rng: Any) -> None:
        """Perturb the truth (9 normals per vehicle)."""
        tr = ctx.truth
        pos, quat, vel, cov = nav.noisy_state(
            np.asarray(tr.pos),
            np.asarray(tr.quat),
            np.asarray(tr.vel),
            rng.normal(size=9),
            ctx.params,
        )
        ctx.state["belief"] = VehicleState(
            pos, quat, vel, np.array(tr.ang_vel), np.array(tr.accel), ctx.t, cov
        )

    def estimate(self, ctx: Any, rng: Any) -> None:
        """Write the belief, publish ``nav/state``."""
        _write_belief(ctx)


class SimpleInsSensor(Plugin):
    """SCRIMMAGE SimpleINS, dt-correct and seeded: drifting position, GPS resets at the surface."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "q_distance": 0.01,
        "q_time": 0.01,
        "vel_std": 0.05,
        "roll_std_deg": 0.1,
        "pitch_std_deg": 0.1,
        "yaw_std_deg": 0.5,
        "gps_std": 2.0,
        "surface_time_choices_s": [15.0, 30.0, 45.0, 60.0],
    }
    kind: ClassVar[str] = "sensor"
    Params = nav.SimpleInsParams
    publishes: ClassVar[dict[str, str]] = {
        "nav/state": "array",
        "nav/cep": "array",
        "nav/gps_fix": "array",
    }
    writes_belief: ClassVar[bool] = True

    def start(self, ctx: Any, rng: Any) -> None:
        """Initial position error (3 normals per vehicle)."""
        ctx.state["ins"] = nav.simple_ins_init(rng.normal(size=3), ctx.params)
        ctx.state["t_last"] = None

    def sense(self, ctx: Any, rng: Any) -> None:
        """Advance the error model over the time since the previous update (12 normals, 1 uniform)."""
        p: nav.SimpleInsParams = ctx.params
        tr = ctx.truth
        t_last = ctx.state["t_last"]
        dt = 0.0 if t_last is None else ctx.t - t_last
        ctx.state["t_last"] = ctx.t
        nz = rng.normal(size=12)
        u = rng.uniform(size=1)[:, 0]
        speed = np.linalg.norm(tr.vel_ned, axis=1)
        st, fix, reset = nav.simple_ins_step(
            ctx.state["ins"], speed, np.asarray(tr.pos)[:, 2], dt, nz[:, 0:6], u, p
        )
        ctx.state["ins"] = st
        ang = np.deg2rad([p.roll_std_deg, p.pitch_std_deg, p.yaw_std_deg]) * nz[:, 9:12]
        from marinesim.sensors.attitude import perturb_body

        n = speed.shape[0]
        cov = np.zeros((n, 9, 9))
        idx = np.arange(3)
        cov[:, idx, idx] = st.var[:, None]
        cov[:, idx + 3, idx + 3] = p.vel_std**2
        cov[:, idx + 6, idx + 6] = np.deg2rad([p.roll_std_deg, p.pitch_std_deg, p.yaw_std_deg]) ** 2
        ctx.state["belief"] = VehicleState(
            np.asarray(tr.pos) + st.err,
            perturb_body(np.asarray(tr.quat), ang),
            np.asarray(tr.vel) + p.vel_std * nz[:, 6:9],
            np.array(tr.ang_vel),
            np.array(tr.accel),
            ctx.t,
            cov,
        )
        ctx.state["fix"] = fix
        ctx.state["cep"] = nav.cep50(cov[:, 0:2, 0:2])

    def estimate(self, ctx: Any, rng: Any) -> None:
        """Write the belief; publish ``nav/state``, ``nav/cep``, ``nav/gps_fix``."""
        b = _write_belief(ctx)
        if b is None:
            return
        ctx.publish("nav/cep", ctx.state["cep"])
        ctx.publish("nav/gps_fix", ctx.state["fix"].astype(float))
        _log_position_quality(ctx, ctx.state["cep"], b.cov)


class NavEkfEstimator(Plugin):
    """INS/EKF fusing IMU, AHRS, depth, GPS and DVL bottom lock into the belief (engine spec §7)."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "accel_noise_std": 0.02,
        "accel_bias_walk": 0.0002,
        "depth_std": 0.05,
        "gps_std": 2.0,
        "dvl_std": 0.2,
        "initial_pos_std": 1.0,
        "initial_vel_std": 0.1,
        "initial_bias_std": 0.005,
        "dvl_lever_arm": [0.0, 0.0, 0.0],
    }
    kind: ClassVar[str] = "sensor"
    Params = EkfParams
    publishes: ClassVar[dict[str, str]] = {"nav/state": "array", "nav/cep": "array"}
    subscribes: ClassVar[dict[str, str]] = {
        "imu/data": "array",
        "ahrs/quat": "array",
        "depth/depth": "array",
        "gps/fix": "array",
        "dvl/velocity": "array",
    }
    writes_belief: ClassVar[bool] = True

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.ekf_laws`)."""
        from marinesim.engine.plugins.ekf_laws import declare_ekf

        return declare_ekf(self, slot, sim)

    def start(self, ctx: Any, rng: Any) -> None:
        """Launch fix: truth + N(0, σ₀²) (9 normals per vehicle), covariance diag(σ₀²).

        With ``initialisation: first_gps`` the filter is created at the first ``estimate``
        from the GPS fixes delivered by then (the 9 normals are drawn all the same).
        """
        p: EkfParams = ctx.params
        tr = ctx.truth
        n = tr.n
        sig = np.repeat([p.initial_pos_std, p.initial_vel_std, p.initial_bias_std], 3)
        z0 = rng.normal(size=9)  # fixed consumption in both modes
        rot0 = rotation_from_quat(tr.quat)  # the launch attitude; the AHRS takes over at once
        if p.initialisation == "first_gps":
            ctx.state["ekf"] = None
        else:
            x0 = np.concatenate([np.asarray(tr.pos), tr.vel_ned, np.zeros((n, 3))], axis=1)
            P0 = np.broadcast_to(np.diag(sig**2), (n, 9, 9)).copy()
            ctx.state["ekf"] = NavEkf(p, x0 + sig * z0, P0, rot0, ctx.t)
        ctx.state["quat"] = np.array(tr.quat)
        ctx.state["f"] = imu.specific_force(np.zeros((n, 3)), rot0, p.gravity)
        ctx.state["w"] = np.zeros((n, 3))

    def _init_from_gps(self, ctx: Any, msgs: list[Any]) -> tuple[NavEkf, set[int]]:
        """Create the filter from the first GPS fixes (and depth readings) in ``msgs``."""
        p: EkfParams = ctx.params
        n = ctx.n
        ne = np.full((n, 2), np.nan)
        d = np.full(n, np.nan)
        used: set[int] = set()
        for m in msgs:
            val = np.asarray(m.value, dtype=float).reshape(len(m.rows), -1)
            if m.topic == "gps/fix":
                ne[m.rows] = val[:, 0:2]
                used.add(id(m))
            elif m.topic == "depth/depth":
                d[m.rows] = val[:, 0]
                used.add(id(m))  # initialises the depth: not applied again as an update
        missing = [ctx.names[i] for i in np.flatnonzero(np.isnan(ne[:, 0]) & ctx.active)]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(
                f"nav_ekf {self.name!r}: initialisation 'first_gps' needs a GPS fix at the first "
                f"estimate (t = {ctx.t:g} s) but {shown} had none; start them at the surface "
                "with a 'gps' sensor (rate and offset so that it samples at the start), or use "
                "initialisation: launch_fix",
                param="initialisation",
            )
        # without a depth reading: at the surface (a fix means depth ≤ the GPS max depth)
        d_std = np.where(np.isnan(d), 0.5, p.depth_std)
        x0 = np.zeros((n, 9))
        x0[:, 0:2] = np.nan_to_num(ne)
        x0[:, 2] = np.nan_to_num(d)
        var = np.zeros((n, 9))
        var[:, 0:2] = p.gps_std**2
        var[:, 2] = d_std**2
        var[:, 3:6] = p.initial_vel_std**2
        var[:, 6:9] = p.initial_bias_std**2
        P0 = np.zeros((n, 9, 9))
        P0[:, np.arange(9), np.arange(9)] = var
        ekf = NavEkf(p, x0, P0, rotation_from_quat(ctx.state["quat"]), ctx.t)
        ctx.events.emit("nav_ekf", f"{self.name}: initialised from the first GPS fix", "info")
        return ekf, used

    def estimate(self, ctx: Any, rng: Any) -> None:
        """Fuse the delivered measurements in time order, write the belief, publish ``nav/state``."""
        # at one stamp: attitude first (the IMU sample was taken with it), then the IMU, then aiding
        msgs = sorted(ctx.inbox, key=lambda m: (m.t_stamp, _FUSION_RANK[m.topic]))
        used: set[int] = set()
        if ctx.state["ekf"] is None:  # initialisation: first_gps
            for m in msgs:  # the latest attitude before the fix
                if m.topic == "ahrs/quat":
                    q = ctx.state["quat"].copy()
                    q[m.rows] = np.asarray(m.value, dtype=float).reshape(len(m.rows), 4)
                    ctx.state["quat"] = q
            ctx.state["ekf"], used = self._init_from_gps(ctx, msgs)
        ekf: NavEkf = ctx.state["ekf"]
        n = ekf.n
        every = np.arange(n)
        for m in msgs:
            if id(m) in used:  # the fixes that initialised the filter
                continue
            got = np.asarray(m.value, dtype=float).reshape(len(m.rows), -1)
            if len(m.rows) == n and np.array_equal(m.rows, every):  # rows 0..n-1 in order
                mask = np.ones(n, dtype=bool)
                val = got
            else:
                mask = np.zeros(n, dtype=bool)
                mask[m.rows] = True
                val = np.zeros((n, got.shape[1]))
                val[m.rows] = got
            if m.topic == "ahrs/quat":
                q = np.where(mask[:, None], val, ctx.state["quat"])
                ctx.state["quat"] = q
                ekf.set_attitude(_rotations(q))
            elif m.topic == "imu/data":
                ctx.state["f"] = np.where(mask[:, None], val[:, 0:3], ctx.state["f"])
                ctx.state["w"] = np.where(mask[:, None], val[:, 3:6], ctx.state["w"])
                ekf.predict(ctx.state["f"], m.t_stamp)
            elif m.topic in _AIDING:
                # first to the measurement's time with the specific force held (no IMU sample
                # at it: a dropout, a slower IMU), so that a vehicle's update does not depend
                # on whether another row, or another stacked world, had an IMU message
                ekf.predict(ctx.state["f"], m.t_stamp)
            if m.topic == "depth/depth":
                ekf.update("depth", val[:, 0:1], mask, m.t_stamp)
            elif m.topic == "gps/fix":
                ekf.update("gps", val[:, 0:2], mask, m.t_stamp)
            elif m.topic == "dvl/velocity":
                lock = mask & (np.abs(val[:, 3] - dvl.BOTTOM) < 0.5)
                ekf.update("dvl", val[:, 0:3], lock, m.t_stamp, omega=ctx.state["w"])
        if ekf.t < ctx.t - 1e-9:  # no IMU sample this tick: hold the last specific force
            ekf.predict(ctx.state["f"], ctx.t)
        cov = ekf.P.copy()
        belief = VehicleState(
            ekf.x[:, 0:3].copy(),
            ctx.state["quat"].copy(),
            ekf.belief_velocity_body(),
            ctx.state["w"].copy(),
            np.zeros((n, 3)),
            ctx.t,
            cov,
        )
        ctx.set_belief(belief)
        cep = nav.cep50(cov[:, 0:2, 0:2])
        ctx.publish("nav/state", _nav_payload(belief.pos, belief.vel, belief.quat, cov))
        ctx.publish("nav/cep", cep)
        _log_position_quality(ctx, cep, cov)
        ctx.log("cov_ne", cov[:, 0:2, 0:2].reshape(n, 4), "m^2", ("nn", "ne", "en", "ee"))
        ctx.log("rejected", sum(ekf.rejected.values()).astype(float), "")


def _target_layout(views: list[Any], own: str) -> tuple[Any, Any, Any, tuple[Any, Any]]:
    """Target order, target ids, the sensing block's ids and the replica groups of a scan.

    Targets are sorted by entity name.  With stacked replicas they are sorted by replica,
    then by the name the entity has in its replica's own run (``name[i]``), they carry the id
    they have in that run, and the groups (sensor rows, targets) restrict every sensor to its
    own replica; otherwise the groups are None.
    """
    names = [nm for v in views for nm in v.names]
    if not any(v.stacked for v in views):
        order = np.argsort(np.asarray(names, dtype=object), kind="stable")
        own_ids = next(v.ids for v in views if v.name == own)
        return (
            order,
            np.concatenate([v.ids for v in views])[order],
            np.asarray(own_ids),
            (None, None),
        )
    ids, first = [], 0  # first: the id of a block's member 0 in a replica's own run
    own_ids: Any = None
    own_rep: Any = None
    for v in views:
        r = np.asarray(v.replica)
        count = int(np.count_nonzero(r == r[0])) if v.n else 0
        ids.append(first + np.arange(v.n, dtype=np.int64) % max(count, 1))
        first += count
        if v.name == own:
            own_ids, own_rep = ids[-1], r
    base = np.asarray([nm.rsplit("@", 1)[0] for nm in names], dtype=object)
    rank = np.argsort(np.argsort(base, kind="stable"), kind="stable")
    rep = np.concatenate([v.replica for v in views])
    order = np.lexsort((rank, rep))
    return order, np.concatenate(ids)[order], own_ids, (own_rep, rep[order])


class ContactSensor(Plugin):
    """Noisy contacts of other active entities honouring FOV, range and P_d (engine spec §6.5)."""

    #: Working parameters for ``--example``-style use and contract checks.
    example_params: ClassVar[dict[str, Any]] = {
        "max_range": 150.0,
        "fov_az_deg": 120.0,
        "fov_el_deg": 40.0,
        "range_std": 1.0,
        "az_std_deg": 1.0,
        "el_std_deg": 1.0,
        "mount_offset": [0.0, 0.0, 0.0],
        "mount_rpy_deg": [0.0, 0.0, 0.0],
    }
    kind: ClassVar[str] = "sensor"
    Params = contacts.ContactParams
    publishes: ClassVar[dict[str, str]] = {"contacts": "array"}
    reads_all_truth: ClassVar[bool] = True
    #: Stacked replicas (§10.5) see only the entities of their own replica, with the ids and
    #: target order of their own run, so a replica's scans do not depend on the stack.
    replica_aware: ClassVar[bool] = True
    #: Couples entities only within a world (docs/guide/worlds.md).
    world_aware: ClassVar[bool] = True

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.contact_laws`)."""
        from marinesim.engine.plugins.contact_laws import declare_contacts

        return declare_contacts(self, slot, sim)

    compiled_laws.sensor_kind = "contacts"  # type: ignore[attr-defined]

    def sense(self, ctx: Any, rng: Any) -> None:
        """One scan over every other active entity of the run (targets sorted by entity name).

        With stacked replicas a vehicle scans the entities of its own replica only; targets
        are reported by the id they have in that replica's own run.
        """
        p: contacts.ContactParams = ctx.params
        tr = ctx.truth
        views = ctx.world_truth  # read-only truth of every block (reads_all_truth)
        key = tuple((v.name, v.n) for v in views)
        lay = ctx.state.get("layout")
        if lay is None or lay[0] != key:  # names, ids and replicas are fixed for the run
            lay = ctx.state["layout"] = (key, *_target_layout(views, ctx.block_name))
        _, order, tids, sids, groups = lay
        pos = [v.truth.pos for v in views]
        vel = [v.truth.vel_ned if p.vel_std is not None else np.zeros((v.n, 3)) for v in views]
        tpos = np.concatenate(pos)[order]
        tok = np.concatenate([v.active for v in views])[order]
        tteam = np.concatenate([v.team for v in views])[order]
        tvel = np.concatenate(vel)[order]
        nu, nn = contacts.draws_per_scan(p, len(tids))
        u = rng.uniform(size=nu)
        z = rng.normal(size=nn)
        act = np.asarray(ctx.active)
        det = contacts.detect_contacts(
            np.asarray(tr.pos),
            _truth_rotations(tr.quat),
            sids,
            tpos,
            tids,
            tok,
            u,
            z,
            p,
            tteam,
            tvel,
            sensor_group=groups[0],
            target_group=groups[1],
        )
        keep = act[det.row]
        counts = np.bincount(det.row[keep & ~det.false_alarm], minlength=tr.n)
        ctx.log("detections", counts.astype(float), "")
        first = np.full((tr.n, 3), np.nan)
        real = np.flatnonzero(keep & ~det.false_alarm)
        first[det.row[real[::-1]]] = det.pos[real[::-1]]  # the first detection of each vehicle
        ctx.log("contact_pos", first, "m", ("north", "east", "down"))
        if np.any(det.overflow):
            ctx.events.emit(
                "contacts",
                f"{int(det.overflow.sum())} targets in view beyond max_contacts = {p.max_contacts} "
                "were not reported this scan",
                "warning",
                rows=np.flatnonzero(det.overflow),
            )
        ctx.log("overflow", det.overflow.astype(float), "")
        ctx.state["last"] = det
        if np.any(keep):
            d = len(det.row)
            payload = np.concatenate(
                [
                    det.contact_id[:, None].astype(float),
                    det.pos,
                    det.cov.reshape(d, 9),
                    det.rae,
                    det.false_alarm[:, None].astype(float),
                    det.vel,
                ],
                axis=1,
            )[keep]
            ctx.publish("contacts", payload, rows=det.row[keep], delay=p.delay)
