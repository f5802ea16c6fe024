"""``marinesim/UsmWaypoint-v0``: drive a uSimMarine vehicle to a waypoint.

Model: the batched uSimMarine kinematics (:mod:`marinesim.models.usm`, variant ``usm``,
program defaults: thrust map thrust/20 m/s, turn rate 70, deceleration limit 0.5 m/s²),
stepped with :func:`marinesim.models.usm.step` at dt = 0.25 s (AppTick 4).
Sensor: :func:`marinesim.sensors.nav.noisy_state` (navigation solution: position, body
velocity and attitude with Gaussian noise) gives the belief from which the observation is
computed.

Episode: the vehicle starts at rest at the origin with a random heading; the waypoint lies
40–100 m away at a random bearing.  It ends (terminated) when the true distance is below the
capture radius (5 m) or above 250 m (lost), and is truncated after 600 steps (150 s).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from marinesim.core.frames import euler_from_quat, quat_from_euler, wrap_pi
from marinesim.gym._rows import splice
from marinesim.gym._streams import RowStreams
from marinesim.gym.base import Act, BatchTask, MarineEnv, MarineVectorEnv, Obs, View
from marinesim.models import usm as kinematic
from marinesim.models.usm.config import UsmConfig
from marinesim.sensors.nav import NoisyStateParams, noisy_state

__all__ = [
    "UsmWaypointEnv",
    "UsmWaypointTask",
    "UsmWaypointVectorEnv",
    "nav_noise",
    "usm_belief",
]

F64 = NDArray[np.float64]

CAPTURE = 5.0  # m
LOST = 250.0  # m


class UsmWaypointTask(BatchTask):
    """N uSimMarine vehicles, each driving to its own waypoint.

    Parameters
    ----------
    n : int
        Environments.
    pos_std : float
        Navigation position noise sigma per horizontal axis [m].
    heading_std_deg : float
        Heading noise sigma [deg].
    speed_std : float
        Body-velocity noise sigma [m/s].
    """

    env_id: ClassVar[str] = "marinesim/UsmWaypoint-v0"
    name: ClassVar[str] = "usm_waypoint"
    dt = 0.25
    max_steps = 600
    observations: ClassVar[tuple[Obs, ...]] = (
        Obs("range", "m", 0.0, 500.0, "distance to the waypoint from the believed position"),
        Obs("bearing_sin", "-", -1.0, 1.0, "sin of the waypoint's bearing relative to the believed heading (+ = starboard)"),
        Obs("bearing_cos", "-", -1.0, 1.0, "cos of the same relative bearing"),
        Obs("speed", "m/s", -2.0, 8.0, "believed forward speed"),
        Obs("thrust", "-", 0.0, 1.0, "thrust held by the vehicle / 100 %"),
        Obs("rudder", "-", -1.0, 1.0, "rudder held by the vehicle / 100 %"),
    )  # fmt: skip
    actions: ClassVar[tuple[Act, ...]] = (
        Act("thrust", "%", "DESIRED_THRUST = 50 (a + 1), 0 … 100 %"),
        Act("rudder", "%", "DESIRED_RUDDER = 100 a, −100 … 100 % (+ = turn to starboard)"),
    )
    reward_doc: ClassVar[str] = (
        "progress towards the waypoint [m] (true distance decrease) − 0.05 per step; "
        "+20 when captured (true distance < 5 m), −20 when lost (> 250 m)"
    )

    def __init__(
        self, n: int, pos_std: float = 1.0, heading_std_deg: float = 2.0, speed_std: float = 0.05
    ) -> None:
        super().__init__(n)
        self.config = UsmConfig(compat="doc", prefix="NAV")
        self.nav = nav_noise(pos_std, heading_std_deg, speed_std)
        self.t = 0.0
        self.state = kinematic.init(self.config, self.n, moos_time=self.t)
        self.goal = np.zeros((self.n, 2))  # north, east [m]
        self.dist = np.zeros(self.n)

    def reset_rows(self, rows: NDArray[np.intp], setup: list[np.random.Generator]) -> None:
        """Vehicles at the origin at rest, random heading; waypoints 40–100 m away."""
        k = rows.size
        draws = np.array([g.uniform(size=3) for g in setup]).reshape(k, 3)
        heading = 360.0 * draws[:, 0]
        rng_m = 40.0 + 60.0 * draws[:, 1]
        brg = 2.0 * np.pi * draws[:, 2]
        fresh = kinematic.init(self.config, k, moos_time=self.t)
        fresh = replace(fresh, heading=heading, gt_heading=heading.copy())
        self.state = splice(self.state, fresh, rows)
        self.goal[rows, 0] = rng_m * np.cos(brg)
        self.goal[rows, 1] = rng_m * np.sin(brg)
        self.dist[rows] = rng_m

    def _true_dist(self) -> F64:
        st = self.state
        return np.hypot(self.goal[:, 0] - st.y, self.goal[:, 1] - st.x)

    def step(self, action: F64) -> tuple[F64, NDArray[np.bool_], dict[str, F64]]:
        """One model step with the commanded thrust and rudder."""
        cmd = {
            "DESIRED_THRUST": 50.0 * (action[:, 0] + 1.0),
            "DESIRED_RUDDER": 100.0 * action[:, 1],
        }
        self.state = kinematic.step(self.config, self.state, cmd, None, self.dt)  # type: ignore[assignment]
        self.t += self.dt
        d = self._true_dist()
        captured = d < CAPTURE
        lost = d > LOST
        reward = (self.dist - d) - 0.05 + 20.0 * captured - 20.0 * lost
        self.dist = d
        return reward, captured | lost, {"distance": d.copy(), "is_success": captured.astype(float)}

    def observe(self, streams: RowStreams) -> F64:
        """Belief from the navigation sensor, expressed relative to the waypoint."""
        st = self.state
        bpos, byaw, bspeed = usm_belief(st, streams.normal(9), self.nav)
        dn = self.goal[:, 0] - bpos[:, 0]
        de = self.goal[:, 1] - bpos[:, 1]
        rel = wrap_pi(np.arctan2(de, dn) - byaw)
        return np.stack(
            [
                np.hypot(dn, de),
                np.sin(rel),
                np.cos(rel),
                bspeed,
                st.thrust / 100.0,
                st.rudder / 100.0,
            ],
            axis=1,
        )


    def view(self, row: int) -> View:
        """Top-down: the vehicle (north = y, east = x), its heading and its waypoint."""
        st = self.state
        pos = np.array([[st.y[row], st.x[row]]])
        return View("top", pos, np.deg2rad(st.heading[row : row + 1]), self.goal[row : row + 1])


def nav_noise(pos_std: float, heading_std_deg: float, speed_std: float) -> NoisyStateParams:
    """Zero-mean navigation noise: horizontal position [m], heading [deg], velocity [m/s]."""
    return NoisyStateParams(
        pos_std=(pos_std, pos_std, 0.05),
        pos_mean=(0.0, 0.0, 0.0),
        vel_std=(speed_std, speed_std, speed_std),
        vel_mean=(0.0, 0.0, 0.0),
        att_std_deg=(0.5, 0.5, heading_std_deg),
        att_mean_deg=(0.0, 0.0, 0.0),
    )


def usm_belief(
    state: kinematic.UsmState, normal: F64, nav: NoisyStateParams
) -> tuple[F64, F64, F64]:
    """Believed NED position (N, 3) [m], yaw (N,) [rad] and forward speed (N,) [m/s].

    The uSimMarine record (x east, y north, heading, speed) is put in the engine's truth
    form and passed through :func:`marinesim.sensors.nav.noisy_state` with ``normal`` (N, 9).
    """
    n = state.n
    pos = np.stack([state.y, state.x, state.depth], axis=1)
    quat = quat_from_euler(np.zeros(n), np.zeros(n), np.deg2rad(state.heading))
    vel = np.zeros((n, 3))
    vel[:, 0] = state.speed
    bpos, bquat, bvel, _cov = noisy_state(pos, quat, vel, normal, nav)
    return bpos, euler_from_quat(bquat)[:, 2], bvel[:, 0]


class UsmWaypointEnv(MarineEnv):
    """Single environment of :class:`UsmWaypointTask` (``gymnasium.make("marinesim/UsmWaypoint-v0")``)."""

    task_cls = UsmWaypointTask


class UsmWaypointVectorEnv(MarineVectorEnv):
    """Native vector environment of :class:`UsmWaypointTask` (one batched model step)."""

    task_cls = UsmWaypointTask
