"""``marinesim/Remus100DepthHeading-v0``: fly a REMUS 100 to a depth and a heading.

Model: the REMUS 100 6-DOF model exactly as PythonVehicleSimulator builds it (Fossen 2021,
§8.4.2; :mod:`marinesim.models.sixdof.pvs`), the same batched code the engine's ``fossen6dof`` plugin
runs for ``preset: remus100``: :func:`marinesim.models.sixdof.pvs.step_batch`, five 0.02 s steps (the
PVS sample time) per 0.1 s environment step, rudder and stern-plane lags (0.1 s) and the
propeller lag (1 s) inside the model, in a uniform current (default 0.2 m/s towards 30°).
Sensors: pressure depth (:func:`marinesim.sensors.depth.depth_measure`, 5 cm), AHRS
(:func:`marinesim.sensors.ahrs.ahrs_measure`, roll/pitch 0.2°, heading 1°), gyro and speed
log (:func:`marinesim.sensors.noise.corrupt`, 0.005 rad/s, 0.02 m/s).

Episode: the vehicle starts at 1–5 m depth, random heading, surging at 1.5 m/s with the
propeller at the commanded rpm (default 1200); the goal is a depth of 5–30 m and a heading
within ±90° of the start.  Terminated when the true depth leaves 0–100 m or the model stops
the vehicle (diverged); truncated after 600 steps (60 s).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from marinesim.core.frames import euler_from_quat, quat_from_euler, wrap_pi
from marinesim.gym._streams import RowStreams
from marinesim.gym.base import Act, BatchTask, MarineEnv, MarineVectorEnv, Obs, View
from marinesim.models.sixdof import pvs
from marinesim.sensors.ahrs import AhrsParams, ahrs_measure
from marinesim.sensors.depth import DepthParams, depth_measure
from marinesim.sensors.noise import corrupt

__all__ = ["Remus100DepthHeadingEnv", "Remus100DepthHeadingTask", "Remus100DepthHeadingVectorEnv"]

F64 = NDArray[np.float64]

FIN_MAX = np.deg2rad(15.0)  # rad, rudder and stern-plane limit of the model
H = 0.02  # s, PythonVehicleSimulator's sample time


class Remus100DepthHeadingTask(BatchTask):
    """N REMUS 100 vehicles, each with its own depth and heading goal.

    Parameters
    ----------
    n : int
        Environments.
    rpm : float
        Propeller command [rpm] (0 … 1525).
    current_speed : float
        Uniform current speed [m/s].
    current_direction_deg : float
        Direction the current flows towards [deg, marine].
    """

    env_id: ClassVar[str] = "marinesim/Remus100DepthHeading-v0"
    name: ClassVar[str] = "remus100_depth_heading"
    dt = 0.1
    max_steps = 600
    observations: ClassVar[tuple[Obs, ...]] = (
        Obs("depth_err", "m", -100.0, 100.0, "goal depth minus measured depth (+ = go deeper)"),
        Obs("pitch", "rad", -1.6, 1.6, "AHRS pitch (+ = nose up)"),
        Obs("q", "rad/s", -3.0, 3.0, "gyro pitch rate"),
        Obs("heading_err_sin", "-", -1.0, 1.0, "sin of goal heading minus AHRS heading"),
        Obs("heading_err_cos", "-", -1.0, 1.0, "cos of the same"),
        Obs("r", "rad/s", -3.0, 3.0, "gyro yaw rate"),
        Obs("u", "m/s", -1.0, 4.0, "surge velocity (body frame), speed-log noise"),
        Obs("rudder", "-", -1.0, 1.0, "rudder angle / 15° (actuator feedback)"),
        Obs("stern_plane", "-", -1.0, 1.0, "stern-plane angle / 15° (actuator feedback)"),
    )  # fmt: skip
    actions: ClassVar[tuple[Act, ...]] = (
        Act("rudder", "rad", "rudder command 15° · a (+ turns to starboard)"),
        Act("stern_plane", "rad", "stern-plane command 15° · a (+ pitches nose down: dives)"),
    )
    reward_doc: ClassVar[str] = (
        "−(min(|depth error|, 20 m)/10 m + |heading error|/π + 0.05 (a_rudder² + a_stern²)) per step; "
        "−100 when the depth leaves 0–100 m or the model diverges"
    )

    def __init__(
        self,
        n: int,
        rpm: float = 1200.0,
        current_speed: float = 0.2,
        current_direction_deg: float = 30.0,
    ) -> None:
        super().__init__(n)
        self.p = pvs.remus100(
            "stepInput", V_current=current_speed, beta_current=current_direction_deg
        )
        if not 0.0 <= rpm <= self.p.nMax:
            from marinesim.core.errors import ConfigError

            raise ConfigError(f"rpm must be in 0 … {self.p.nMax:g}, got {rpm}", param="rpm")
        self.rpm = float(rpm)
        self.depth_sensor = DepthParams(noise_std=0.05)
        self.ahrs = AhrsParams(roll_std_deg=0.2, pitch_std_deg=0.2, yaw_std_deg=1.0)
        self.eta = np.zeros((self.n, 6))
        self.nu = np.zeros((self.n, 6))
        self.act = np.zeros((self.n, 3))
        self.alive = np.ones(self.n, dtype=bool)
        self.goal = np.zeros((self.n, 2))  # depth [m], yaw [rad]
        self.t = 0.0

    def reset_rows(self, rows: NDArray[np.intp], setup: list[np.random.Generator]) -> None:
        """Shallow start at 1.5 m/s, random heading; goal depth 5–30 m, heading ±90°."""
        k = rows.size
        u = np.array([g.uniform(size=4) for g in setup]).reshape(k, 4)
        yaw = wrap_pi(2 * np.pi * u[:, 0])
        eta = np.zeros((k, 6))
        eta[:, 2] = 1.0 + 4.0 * u[:, 1]
        eta[:, 5] = yaw
        nu = np.zeros((k, 6))
        nu[:, 0] = 1.5
        self.eta[rows] = eta
        self.nu[rows] = nu
        self.act[rows] = (0.0, 0.0, self.rpm)
        self.alive[rows] = True
        self.goal[rows, 0] = 5.0 + 25.0 * u[:, 2]
        self.goal[rows, 1] = wrap_pi(yaw + np.deg2rad(180.0 * u[:, 3] - 90.0))

    def step(self, action: F64) -> tuple[F64, NDArray[np.bool_], dict[str, F64]]:
        """Five PythonVehicleSimulator steps with the fin commands held."""
        n = self.n
        cmd = (FIN_MAX * action[:, 0], FIN_MAX * action[:, 1], np.full(n, self.rpm))
        state = (tuple(self.eta.T), tuple(self.nu.T), tuple(self.act.T))
        alive = self.alive
        for _ in range(round(self.dt / H)):  # model sample time inside one control step
            self.t += H
            state, alive, _events = pvs.step_batch(self.p, state, cmd, H, alive, self.t)
        self.eta = np.stack([np.broadcast_to(c, (n,)) for c in state[0]], axis=1)
        self.nu = np.stack([np.broadcast_to(c, (n,)) for c in state[1]], axis=1)
        self.act = np.stack([np.broadcast_to(c, (n,)) for c in state[2]], axis=1)
        self.alive = alive
        z_err = self.goal[:, 0] - self.eta[:, 2]
        y_err = wrap_pi(self.goal[:, 1] - self.eta[:, 5])
        out = (self.eta[:, 2] < 0.0) | (self.eta[:, 2] > 100.0) | ~alive
        reward = -(np.minimum(np.abs(z_err), 20.0) / 10.0 + np.abs(y_err) / np.pi)
        reward = reward - 0.05 * (action[:, 0] ** 2 + action[:, 1] ** 2) - 100.0 * out
        return reward, out, {"depth_error": np.abs(z_err), "heading_error": np.abs(y_err)}

    def view(self, row: int) -> View:
        """Top-down: the vehicle's track and heading (its goal is a depth and a heading)."""
        return View("top", self.eta[row : row + 1, :2].copy(), self.eta[row : row + 1, 5].copy())

    def observe(self, streams: RowStreams) -> F64:
        """Depth sensor, AHRS, gyro and speed log readings relative to the goal."""
        eta, nu = self.eta, self.nu
        nz = streams.normal(7)
        ones = np.ones(self.n)
        depth, _ok = depth_measure(eta[:, 2], nz[:, 0], ones, self.depth_sensor, 1026.0, 9.81)
        quat = quat_from_euler(eta[:, 3], eta[:, 4], eta[:, 5])
        bq, _ok2 = ahrs_measure(quat, nz[:, 1:4], ones, self.ahrs)
        e = euler_from_quat(bq)
        y_err = wrap_pi(self.goal[:, 1] - e[:, 2])
        q = corrupt(nu[:, 4], nz[:, 4], 0.005)
        r = corrupt(nu[:, 5], nz[:, 5], 0.005)
        u = corrupt(nu[:, 0], nz[:, 6], 0.02)
        return np.stack(
            [self.goal[:, 0] - depth, e[:, 1], q, np.sin(y_err), np.cos(y_err), r, u,
             self.act[:, 0] / FIN_MAX, self.act[:, 1] / FIN_MAX],
            axis=1,
        )  # fmt: skip


class Remus100DepthHeadingEnv(MarineEnv):
    """Single environment of :class:`Remus100DepthHeadingTask`."""

    task_cls = Remus100DepthHeadingTask


class Remus100DepthHeadingVectorEnv(MarineVectorEnv):
    """Native vector environment of :class:`Remus100DepthHeadingTask`."""

    task_cls = Remus100DepthHeadingTask
