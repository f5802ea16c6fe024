"""PettingZoo ``ParallelEnv``: uSimMarine vehicles searching an area for objects with contacts.

Vehicles: ``n_vehicles`` (default 3) ``usm`` vehicles stepped together by
:func:`marinesim.models.usm.step` (one batch; dt = 0.5 s).  Each carries a forward-looking
contact sensor (:func:`marinesim.sensors.contacts.detect_contacts`: range 25 m, 120° field of
view, detection probability 0.9, range/bearing noise) and a navigation sensor
(:func:`marinesim.sensors.nav.noisy_state`).  ``n_targets`` (default 6) moored objects (2 m deep) lie
at random places in a 200 m × 200 m area (north 0…200, east 0…200); the vehicles start
on its southern edge heading north.

Agents ``usm_0`` … act with [thrust, rudder] in [−1, 1] (as ``marinesim/UsmWaypoint-v0``).
Observation of an agent (float32, belief; teammates' believed positions are shared):

=====================  =====  ===============================================================
name                   unit   meaning
=====================  =====  ===============================================================
north, east            m      own believed position (area frame, origin at the SW corner)
heading_sin/cos        -      own believed heading
speed                  m/s    own believed forward speed
mate_k_dn, mate_k_de   m      teammate k's believed position relative to own (k = 1, 2, ...)
contact_range          m      nearest contact this scan (25 = none)
contact_sin/cos        -      its measured azimuth (sensor = body frame, + = starboard)
contact_new            -      1 when that contact is an object not yet found by the team
found_fraction         -      objects found so far / n_targets
=====================  =====  ===============================================================

Reward per agent: +5 for each object it is first (with others in the same step) to detect;
−0.01 per step; −1 per step when within 3 m of a teammate (true positions); −1 per step when
more than 20 m outside the area.  The episode ends for every agent together: terminated when
all objects are found, truncated after ``max_cycles`` steps (default 600 = 300 s).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import ParallelEnv

from marinesim.core.errors import ConfigError
from marinesim.core.frames import rotation_from_euler, wrap_pi
from marinesim.gym._streams import RowStreams, fresh_seed
from marinesim.gym.base import RENDER_MODES, check_render_mode
from marinesim.gym.render import TrackRenderer, View
from marinesim.gym.usm_waypoint import nav_noise, usm_belief
from marinesim.models import usm as kinematic
from marinesim.models.usm.config import UsmConfig
from marinesim.sensors.contacts import ContactParams, detect_contacts, draws_per_scan

__all__ = ["SurveyParallelEnv"]

F64 = NDArray[np.float64]

AREA = 200.0  # m
SENSOR_RANGE = 25.0  # m


class SurveyParallelEnv(ParallelEnv):
    """Several ``usm`` vehicles searching for objects with contact sensors (PettingZoo).

    Parameters
    ----------
    n_vehicles : int
        Agents (≥ 1).
    n_targets : int
        Objects to find (≥ 1).
    max_cycles : int
        Steps before truncation.
    render_mode : {None, "rgb_array", "human"}
        ``rgb_array``: :meth:`render` returns a top-down frame (H, W, 3) uint8 of the area: the
        vehicles with their tracks, the objects (rings, filled once found); ``human``: that
        frame in a Matplotlib window after every step.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "marinesim_survey_v0",
        "render_modes": RENDER_MODES,
        "render_fps": 2,
        "is_parallelizable": True,
    }
    dt = 0.5

    def __init__(
        self,
        n_vehicles: int = 3,
        n_targets: int = 6,
        max_cycles: int = 600,
        render_mode: str | None = None,
    ) -> None:
        self.render_mode = check_render_mode(render_mode)
        self._renderer = TrackRenderer()
        if n_vehicles < 1 or n_targets < 1:
            raise ConfigError("n_vehicles and n_targets must be >= 1", param="n_vehicles")
        self.n = int(n_vehicles)
        self.m = int(n_targets)
        self.max_cycles = int(max_cycles)
        self.possible_agents = [f"usm_{i}" for i in range(self.n)]
        self.agents: list[str] = []
        self.config = UsmConfig(compat="doc", prefix="NAV")
        self.nav = nav_noise(1.0, 2.0, 0.05)
        self.sensor = ContactParams(
            max_range=SENSOR_RANGE, fov_az_deg=120.0, fov_el_deg=180.0, range_std=0.5,
            az_std_deg=2.0, el_std_deg=2.0, detection_probability=0.9, max_contacts=self.m,
        )  # fmt: skip
        self.streams = RowStreams("usm_survey", self.n)
        d = 6 + 2 * (self.n - 1) + 4
        low = np.array(
            [-100, -100, -1, -1, -2] + [-400] * (2 * (self.n - 1)) + [0, -1, -1, 0, 0], np.float32
        )
        high = np.array(
            [300, 300, 1, 1, 8] + [400] * (2 * (self.n - 1)) + [SENSOR_RANGE, 1, 1, 1, 1],
            np.float32,
        )
        assert low.size == d
        self._obs_space = spaces.Box(low, high, dtype=np.float32)
        self._act_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.t = 0.0
        self.cycles = 0
        self.state_ = kinematic.init(self.config, self.n)
        self.targets = np.zeros((self.m, 3))
        self.found = np.zeros(self.m, dtype=bool)
        self._contact = np.zeros((self.n, 4))

    @functools.cache  # noqa: B019 - one space object per agent (API test)
    def observation_space(self, agent: str) -> spaces.Box:
        """Observation box of ``agent`` (see the module documentation)."""
        return self._obs_space

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Box:
        """[thrust, rudder] in [−1, 1]: thrust 50 (a + 1) %, rudder 100 a %."""
        return self._act_space

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, NDArray[np.float32]], dict[str, dict[str, Any]]]:
        """New episode: objects placed at random, vehicles on the southern edge heading north."""
        if seed is not None or not self.streams.seeded.all():
            s = fresh_seed() if seed is None else seed
            self.streams.seed_rows(range(self.n), [s] * self.n, members=range(self.n))
        g = self.streams.setup[0]
        self.targets = np.zeros((self.m, 3))
        self.targets[:, :2] = AREA * g.uniform(size=(self.m, 2))
        self.targets[:, 2] = 2.0  # moored, 2 m below the surface
        self.found = np.zeros(self.m, dtype=bool)
        self.t = 0.0
        self.cycles = 0
        st = kinematic.init(self.config, self.n)
        east = AREA * (np.arange(self.n) + 0.5) / self.n
        self.state_ = replace(st, x=east, gt_x=east.copy())
        self._contact = np.zeros((self.n, 4))
        self._contact[:, 0] = SENSOR_RANGE
        self._contact[:, 2] = 1.0
        self.agents = list(self.possible_agents)
        obs = self._observe()
        self._renderer.reset()
        self._renderer.add(self._view())
        if self.render_mode == "human":
            self.render()
        return obs, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One batched model step of every vehicle, then one contact scan each."""
        if not self.agents:
            raise ConfigError("the episode is over: call reset()", param="reset")
        a = np.zeros((self.n, 2))
        a[:, 0] = -1.0  # an agent without an action idles (thrust 0)
        for i, name in enumerate(self.possible_agents):
            if name in actions:
                v = np.asarray(actions[name], dtype=np.float64).reshape(-1)
                if v.size != 2 or not np.all(np.isfinite(v)):
                    raise ConfigError(
                        f"action of {name} must be 2 finite numbers, got {v}", param="action"
                    )
                a[i] = np.clip(v, -1.0, 1.0)
        cmd = {"DESIRED_THRUST": 50.0 * (a[:, 0] + 1.0), "DESIRED_RUDDER": 100.0 * a[:, 1]}
        self.state_ = kinematic.step(self.config, self.state_, cmd, None, self.dt)  # type: ignore[assignment]
        self.t += self.dt
        self.cycles += 1
        reward = np.full(self.n, -0.01)
        new_found = self._scan(reward)
        st = self.state_
        pos = np.stack([st.y, st.x], axis=1)
        gap = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2) + np.eye(self.n) * 1e9
        reward -= 1.0 * (gap.min(axis=1) < 3.0)
        outside = np.maximum(-20.0 - pos, pos - AREA - 20.0).max(axis=1) > 0
        reward -= 1.0 * outside
        done = bool(self.found.all())
        trunc = (not done) and self.cycles >= self.max_cycles
        obs = self._observe()
        self._renderer.add(self._view())
        if self.render_mode == "human":
            self.render()
        agents = self.agents
        rewards = {a: float(reward[i]) for i, a in enumerate(self.possible_agents) if a in agents}
        terms = dict.fromkeys(agents, done)
        truncs = dict.fromkeys(agents, trunc)
        infos = {a: {"found": int(self.found.sum()), "new": int(new_found)} for a in agents}
        if done or trunc:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def _scan(self, reward: F64) -> int:
        """Contact scan of every vehicle; rewards the first detections; returns their count."""
        st = self.state_
        n = self.n
        pos = np.stack([st.y, st.x, st.depth], axis=1)
        rot = rotation_from_euler(np.zeros(n), np.zeros(n), np.deg2rad(st.heading))
        nu, nn = draws_per_scan(self.sensor)
        c = detect_contacts(
            pos, rot, np.arange(n, dtype=np.int64), self.targets,
            np.arange(self.m, dtype=np.int64) + 100, np.ones(self.m, dtype=bool),
            self.streams.uniform(nu), self.streams.normal(nn), self.sensor,
        )  # fmt: skip
        first = np.zeros(self.m, dtype=bool)
        first[c.target[~self.found[c.target]]] = True
        for j in np.flatnonzero(first):
            who = np.unique(c.row[c.target == j])
            reward[who] += 5.0
        # nearest report per vehicle (range, azimuth in the sensor frame)
        self._contact[:] = (SENSOR_RANGE, 0.0, 1.0, 0.0)
        if c.row.size:
            order = np.lexsort((c.rae[:, 0], c.row))
            rows, idx = np.unique(c.row[order], return_index=True)
            best = order[idx]
            self._contact[rows, 0] = np.minimum(c.rae[best, 0], SENSOR_RANGE)
            self._contact[rows, 1] = np.sin(c.rae[best, 1])
            self._contact[rows, 2] = np.cos(c.rae[best, 1])
            self._contact[rows, 3] = (~self.found[c.target[best]]).astype(float)
        self.found |= first
        return int(first.sum())

    def _observe(self) -> dict[str, NDArray[np.float32]]:
        bpos, byaw, bspeed = usm_belief(self.state_, self.streams.normal(9), self.nav)
        n = self.n
        rel = bpos[None, :, :2] - bpos[:, None, :2]  # (i, j): j relative to i
        mates = rel[~np.eye(n, dtype=bool)].reshape(n, 2 * (n - 1))
        yaw = wrap_pi(byaw)
        frac = np.full(n, self.found.mean())
        obs = np.concatenate(
            [bpos[:, :2], np.sin(yaw)[:, None], np.cos(yaw)[:, None], bspeed[:, None], mates,
             self._contact, frac[:, None]], axis=1,
        )  # fmt: skip
        obs = np.clip(obs, self._obs_space.low, self._obs_space.high).astype(np.float32)
        return {a: obs[i] for i, a in enumerate(self.possible_agents) if a in self.agents}

    def state(self) -> NDArray[np.float32]:
        """Global truth: vehicles (north, east, heading [deg], speed) then objects (north, east, found)."""
        st = self.state_
        veh = np.stack([st.y, st.x, st.heading, st.speed], axis=1).reshape(-1)
        obj = np.concatenate([self.targets[:, :2], self.found[:, None]], axis=1).reshape(-1)
        return np.concatenate([veh, obj]).astype(np.float32)

    def _view(self) -> View:
        st = self.state_
        pos = np.stack([st.y, st.x], axis=1)
        return View("top", pos, np.deg2rad(st.heading), self.targets[:, :2].copy(),
                    self.found.copy())  # fmt: skip

    def render(self) -> NDArray[np.uint8] | None:
        """``rgb_array``: the frame (H, W, 3) uint8; ``human``: show it; None: nothing."""
        if self.render_mode is None:
            return None
        frame = self._renderer.frame(self._view())
        if self.render_mode == "rgb_array":
            return frame
        self._renderer.show(frame, "marinesim/Survey-v0", self.metadata["render_fps"])
        return None

    def close(self) -> None:
        """Close the human-mode window, if any."""
        self._renderer.close()
