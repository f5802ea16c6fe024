"""``marinesim/BlueRov2StationKeeping-v0``: hold a BlueROV2 Heavy on a point in a current.

Chain (every block is the project's batched code): the action is a body wrench demand →
pseudo-inverse thruster allocation with the exact current-limited scale
(:meth:`marinesim.allocation.solve.Allocator.pinv`, 8 × T200 of the ``bluerov2_heavy`` layout,
16 V, 15 A per motor, 50 A total) → ESC outputs → the T200 plant chain
(:func:`marinesim.actuators.plant.chain`: rotor first-order lag τ = 0.1 s, T200 thrust and
current at 16 V, body wrench B·f; the engine's thruster plant is the same) → Fossen 6-DOF
(:func:`marinesim.models.sixdof.fossen6dof.step`, preset ``bluerov2_heavy_vonbenzon2022``, RK4, two
0.05 s substeps per 0.1 s step) in a uniform current (ν_r = ν − ν_c).
Sensors: :func:`marinesim.sensors.nav.noisy_state` (position 5 cm, velocity 2 cm/s, attitude
0.5°, heading 1°) and a yaw-rate gyro (:func:`marinesim.sensors.noise.corrupt`, 0.01 rad/s).

Episode: the hold point is (0, 0) at 5 m depth with a random heading; the vehicle starts up to
2 m away (north, east), ±1 m in depth and ±30° in heading, at rest; the current is uniform
with a random speed 0–0.3 m/s and direction.  Terminated when the true position error
exceeds 10 m or the model stops the vehicle (diverged); truncated after 300 steps (30 s).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from marinesim.actuators import plant
from marinesim.allocation.solve import Allocator, AllocatorLimits
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.core.frames import euler_from_quat, wrap_pi
from marinesim.gym._rows import splice
from marinesim.gym._streams import RowStreams
from marinesim.gym.base import Act, BatchTask, MarineEnv, MarineVectorEnv, Obs, View
from marinesim.models import presets
from marinesim.models.sixdof import fossen6dof
from marinesim.sensors.nav import NoisyStateParams, noisy_state
from marinesim.sensors.noise import corrupt

__all__ = ["BlueRov2StationEnv", "BlueRov2StationTask", "BlueRov2StationVectorEnv"]

F64 = NDArray[np.float64]

VOLTAGE = 16.0  # V
DEPTH = 5.0  # m
#: Wrench per unit action [N, N, N, N·m] (about the uniform-scaling maxima at 16 V).
SCALE = np.array([80.0, 80.0, 100.0, 20.0])
LOST = 10.0  # m


class BlueRov2StationTask(BatchTask):
    """N BlueROV2 Heavy vehicles holding station in their own currents.

    Parameters
    ----------
    n : int
        Environments.
    max_current_speed : float
        Upper end of the random current speed [m/s].
    """

    env_id: ClassVar[str] = "marinesim/BlueRov2StationKeeping-v0"
    name: ClassVar[str] = "bluerov2_station"
    dt = 0.1
    max_steps = 300
    substeps = 2
    observations: ClassVar[tuple[Obs, ...]] = (
        Obs("err_forward", "m", -20.0, 20.0, "hold point ahead of the believed position, believed-heading frame"),
        Obs("err_right", "m", -20.0, 20.0, "hold point to starboard, believed-heading frame"),
        Obs("err_down", "m", -20.0, 20.0, "hold depth minus believed depth"),
        Obs("heading_err_sin", "-", -1.0, 1.0, "sin of hold heading minus believed heading"),
        Obs("heading_err_cos", "-", -1.0, 1.0, "cos of the same"),
        Obs("u", "m/s", -3.0, 3.0, "believed surge velocity (over ground)"),
        Obs("v", "m/s", -3.0, 3.0, "believed sway velocity"),
        Obs("w", "m/s", -3.0, 3.0, "believed heave velocity (+ down)"),
        Obs("r", "rad/s", -3.0, 3.0, "gyro yaw rate"),
        Obs("current_draw", "A", 0.0, 60.0, "thrusters' total supply current (ESC telemetry)"),
    )  # fmt: skip
    actions: ClassVar[tuple[Act, ...]] = (
        Act("X", "N", "surge force demand 80 a"),
        Act("Y", "N", "sway force demand 80 a"),
        Act("Z", "N", "heave force demand 100 a (+ down)"),
        Act("N", "N m", "yaw moment demand 20 a"),
    )
    reward_doc: ClassVar[str] = (
        "−(true position error [m] + 0.5 |heading error| [rad] + 0.01 × total thruster current [A]) "
        "per step; −50 when lost (error > 10 m) or diverged"
    )

    def __init__(self, n: int, max_current_speed: float = 0.3) -> None:
        super().__init__(n)
        self.max_current = float(max_current_speed)
        self.model = presets.build("bluerov2_heavy_vonbenzon2022")
        self.geometry = Geometry(get_layout("bluerov2_heavy"))
        self.allocator = Allocator(self.geometry, AllocatorLimits(voltage=VOLTAGE))
        self.plant = plant.T200Plant.from_geometry(self.geometry, rotor_time_constant=0.1)
        self.nav = NoisyStateParams(
            pos_std=(0.05, 0.05, 0.05), pos_mean=(0.0, 0.0, 0.0),
            vel_std=(0.02, 0.02, 0.02), vel_mean=(0.0, 0.0, 0.0),
            att_std_deg=(0.5, 0.5, 1.0), att_mean_deg=(0.0, 0.0, 0.0),
        )  # fmt: skip
        k = self.geometry.n
        self.x = fossen6dof.init(self.model, self.n)
        self.rotor = np.zeros((self.n, k))
        self.current = np.zeros((self.n, 3))
        self.goal_yaw = np.zeros(self.n)
        self.amps = np.zeros(self.n)

    def reset_rows(self, rows: NDArray[np.intp], setup: list[np.random.Generator]) -> None:
        """Random start near the hold point, random hold heading and current."""
        k = rows.size
        u = np.array([g.uniform(size=7) for g in setup]).reshape(k, 7)
        goal_yaw = 2 * np.pi * u[:, 0]
        pos = np.stack([4 * u[:, 1] - 2, 4 * u[:, 2] - 2, DEPTH + 2 * u[:, 3] - 1], axis=1)
        yaw = goal_yaw + np.deg2rad(60 * u[:, 4] - 30)
        euler = np.stack([np.zeros(k), np.zeros(k), yaw], axis=1)
        fresh = fossen6dof.init(self.model, k, pos=pos, euler=euler)
        self.x = replace(splice(self.x, fresh, rows), events=())
        self.goal_yaw[rows] = goal_yaw
        speed = self.max_current * u[:, 5]
        direction = 2 * np.pi * u[:, 6]
        self.current[rows, 0] = speed * np.cos(direction)
        self.current[rows, 1] = speed * np.sin(direction)
        self.rotor[rows] = 0.0
        self.amps[rows] = 0.0

    def _errors(self, pos: F64, yaw: F64) -> tuple[F64, F64]:
        err = -pos.copy()
        err[:, 2] += DEPTH
        return err, wrap_pi(self.goal_yaw - yaw)

    def step(self, action: F64) -> tuple[F64, NDArray[np.bool_], dict[str, F64]]:
        """Allocate the demanded wrench, run thrusters and 6-DOF over two substeps."""
        n = self.n
        tau = np.zeros((n, 6))
        tau[:, [0, 1, 2, 5]] = action * SCALE
        res = self.allocator.pinv(tau)
        u_cmd = np.clip(res.u, -1.0, 1.0)
        env = fossen6dof.Env(current=self.current, density=1000.0, gravity=9.81)
        h = self.dt / self.substeps
        amps = self.amps
        for _ in range(self.substeps):  # physics substeps inside one control step
            self.rotor, _f, amps, wrench = plant.chain(self.plant, self.rotor, u_cmd, VOLTAGE, h)
            self.x = fossen6dof.step(self.model, self.x, wrench, env, h)
        self.amps = amps.sum(axis=1)
        yaw = euler_from_quat(self.x.att)[:, 2]
        err, eyaw = self._errors(self.x.pos, yaw)
        dist = np.linalg.norm(err, axis=1)
        lost = (dist > LOST) | ~self.x.alive
        reward = -(np.where(np.isfinite(dist), dist, LOST) + 0.5 * np.abs(eyaw) + 0.01 * self.amps)
        reward = reward - 50.0 * lost
        return reward, lost, {"position_error": dist, "heading_error": np.abs(eyaw)}

    def view(self, row: int) -> View:
        """Top-down: the vehicle, its heading and the hold point (the origin)."""
        yaw = euler_from_quat(self.x.att[row : row + 1])[:, 2]
        return View("top", self.x.pos[row : row + 1, :2].copy(), yaw, np.zeros((1, 2)))

    def observe(self, streams: RowStreams) -> F64:
        """Errors in the believed-heading frame, believed velocities, gyro rate, current draw."""
        x = self.x
        nz = streams.normal(10)
        bpos, bquat, bvel, _ = noisy_state(x.pos, x.att, x.nu[:, :3], nz[:, :9], self.nav)
        byaw = euler_from_quat(bquat)[:, 2]
        err, eyaw = self._errors(bpos, byaw)
        c, s = np.cos(byaw), np.sin(byaw)
        fwd = c * err[:, 0] + s * err[:, 1]
        right = -s * err[:, 0] + c * err[:, 1]
        r = corrupt(x.nu[:, 5], nz[:, 9], 0.01)
        return np.stack(
            [
                fwd,
                right,
                err[:, 2],
                np.sin(eyaw),
                np.cos(eyaw),
                bvel[:, 0],
                bvel[:, 1],
                bvel[:, 2],
                r,
                self.amps,
            ],
            axis=1,
        )


class BlueRov2StationEnv(MarineEnv):
    """Single environment of :class:`BlueRov2StationTask`."""

    task_cls = BlueRov2StationTask


class BlueRov2StationVectorEnv(MarineVectorEnv):
    """Native vector environment of :class:`BlueRov2StationTask`."""

    task_cls = BlueRov2StationTask
