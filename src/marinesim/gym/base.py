"""One batched task, two Gymnasium faces: :class:`MarineEnv` (N = 1) and :class:`MarineVectorEnv`.

A :class:`BatchTask` holds the structure-of-arrays state of N environments and steps them
together through the project's batched models; the single environment is the batch path with
N = 1, so there is one copy of every law.  Conventions shared by every task:

* actions are a Box on [−1, 1]ᵏ (float32); each task documents the mapping to physical units
  (:attr:`BatchTask.actions`); values outside the box are clipped, NaN is an error;
* observations come from the vehicles' **belief** (the project's sensor functions applied to
  the truth with per-environment noise streams); they are float32 and clipped to the
  observation box (:attr:`BatchTask.observations` lists name, unit and bounds);
* rewards are computed from the **truth** (the task's score, not something the agent sees);
* an episode ends with ``terminated`` (goal reached, vehicle lost or diverged) or
  ``truncated``: ``gymnasium.make`` wraps the single environment in Gymnasium's ``TimeLimit``
  (the registration's ``max_episode_steps``, the task's :attr:`BatchTask.max_steps`; override
  with ``gymnasium.make(id, max_episode_steps=K)``); ``max_steps=K`` sets a limit counted
  inside the environment instead, which the native vector environment always counts (its
  ``max_episode_steps``, given by ``gymnasium.make_vec``, or ``max_steps``);
* ``render_mode="rgb_array"`` / ``"human"``: a top-down view of the vehicle with its track
  and goal (:mod:`marinesim.gym.render`);
* randomness comes from the seed tree (:mod:`marinesim.gym._streams`): ``reset(seed=s)`` on a
  vector environment seeds environment i with s + i, exactly as Gymnasium's
  ``SyncVectorEnv`` does, so both give the same episodes;
* sensors draw their noise only when observing, so an environment that is auto-reset inside
  a vector step consumes exactly the draws its single counterpart would.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.gym._streams import RowStreams, fresh_seed
from marinesim.gym.render import TrackRenderer, View

__all__ = ["RENDER_MODES", "Act", "BatchTask", "MarineEnv", "MarineVectorEnv", "Obs", "View"]

F64 = NDArray[np.float64]
Rows = NDArray[np.intp]


@dataclass(frozen=True)
class Obs:
    """One observation component: name, unit, bounds and what it is."""

    name: str
    unit: str
    low: float
    high: float
    doc: str


@dataclass(frozen=True)
class Act:
    """One action component: name, the physical quantity a ∈ [−1, 1] maps to, its unit."""

    name: str
    unit: str
    mapping: str


class BatchTask(ABC):
    """N environments of one task as structure-of-arrays state.

    Subclasses set the class attributes and implement :meth:`reset_rows`, :meth:`step` and
    :meth:`observe`; every method works on all N rows at once (no loop over environments
    except where a row's own generator draws its episode set-up).

    Parameters
    ----------
    n : int
        Number of environments N ≥ 1.
    """

    #: Registered id (``marinesim/Name-vK``).
    env_id: ClassVar[str]
    #: Task name (enters the random-stream keys).
    name: ClassVar[str]
    #: Observation components, in vector order.
    observations: ClassVar[tuple[Obs, ...]]
    #: Action components, in vector order.
    actions: ClassVar[tuple[Act, ...]]
    #: Reward, in words (documentation and ``marinesim gym list``).
    reward_doc: ClassVar[str]
    #: Environment step [s].
    dt: float = 0.1
    #: Steps before ``truncated``.
    max_steps: int = 500

    def __init__(self, n: int) -> None:
        if int(n) < 1:
            raise ConfigError(f"number of environments must be >= 1, got {n}", param="num_envs")
        self.n = int(n)

    @abstractmethod
    def reset_rows(self, rows: Rows, setup: list[np.random.Generator]) -> None:
        """Start new episodes in ``rows``, drawing set-ups from ``setup[i]`` (row i's stream)."""

    @abstractmethod
    def step(self, action: F64) -> tuple[F64, NDArray[np.bool_], dict[str, F64]]:
        """Advance every row by :attr:`dt` with ``action`` (N, k) in [−1, 1].

        Returns the reward (N,), ``terminated`` (N,) and per-row info arrays (N,).
        """

    @abstractmethod
    def observe(self, streams: RowStreams) -> F64:
        """Belief observation (N, d) of every row; sensor noise drawn from ``streams``."""

    @abstractmethod
    def view(self, row: int) -> View:
        """What a rendered frame of environment ``row`` shows (truth, metres)."""

    @classmethod
    def observation_space(cls) -> spaces.Box:
        """Box of one environment's observation (float32)."""
        low = np.array([o.low for o in cls.observations], dtype=np.float32)
        high = np.array([o.high for o in cls.observations], dtype=np.float32)
        return spaces.Box(low, high, dtype=np.float32)

    @classmethod
    def action_space(cls) -> spaces.Box:
        """Box of one environment's action: [−1, 1]ᵏ (float32)."""
        k = len(cls.actions)
        return spaces.Box(-1.0, 1.0, shape=(k,), dtype=np.float32)

    @classmethod
    def describe(cls) -> str:
        """Spaces, units and reward in words."""
        lines = [f"{cls.env_id}: dt = {cls.dt:g} s, at most {cls.max_steps} steps"]
        lines.append("observation (belief, float32):")
        lines += [
            f"  {o.name} [{o.unit}] in [{o.low:g}, {o.high:g}]: {o.doc}" for o in cls.observations
        ]
        lines.append("action (Box [-1, 1]):")
        lines += [f"  {a.name} [{a.unit}]: {a.mapping}" for a in cls.actions]
        lines.append(f"reward: {cls.reward_doc}")
        return "\n".join(lines)


#: Steps counted inside a single environment left to Gymnasium's ``TimeLimit``.
NO_LIMIT = np.iinfo(np.int64).max


def _make_task(
    cls: type[BatchTask], n: int, max_steps: int | None, options: dict[str, Any]
) -> BatchTask:
    """Build the task; unknown options are a ConfigError naming the known ones."""
    import inspect

    known = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "n")]
    for key in options:
        if key not in known:
            from marinesim.core.errors import UnknownNameError

            raise UnknownNameError(f"option of {cls.env_id}", key, [*known, "max_steps"], param=key)
    task = cls(n, **options)
    if max_steps is not None:
        if int(max_steps) < 1:
            raise ConfigError(f"max_steps must be >= 1, got {max_steps}", param="max_steps")
        task.max_steps = int(max_steps)
    return task


class _Runner:
    """Seeding, step counting, clipping and autoreset around a task (shared by both faces)."""

    def __init__(self, task: BatchTask) -> None:
        self.task = task
        self.streams = RowStreams(task.name, task.n)
        self.steps = np.zeros(task.n, dtype=np.int64)
        low = np.array([o.low for o in task.observations])
        high = np.array([o.high for o in task.observations])
        self.low, self.high = low, high
        self.k = len(task.actions)

    def reset(self, rows: Rows, seeds: list[int | None]) -> None:
        new = [(int(i), s) for i, s in zip(rows, seeds, strict=True)]
        fresh = [(i, s if s is not None else fresh_seed()) for i, s in new
                 if s is not None or not self.streams.seeded[i]]  # fmt: skip
        if fresh:
            self.streams.seed_rows([i for i, _ in fresh], [s for _, s in fresh])
        self.task.reset_rows(rows, [self.streams.setup[int(i)] for i in rows])
        self.steps[rows] = 0

    def action(self, action: Any) -> F64:
        a = np.asarray(action, dtype=np.float64)
        n = self.task.n
        try:
            a = a.reshape(n, self.k)
        except ValueError:
            raise ConfigError(
                f"action must have {self.k} component(s) per environment "
                f"({', '.join(x.name for x in self.task.actions)}), got shape {np.shape(action)}",
                param="action",
            ) from None
        bad = ~np.isfinite(a)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ConfigError(
                f"action component {self.task.actions[j].name!r} of environment {i} is "
                f"{a[i, j]} (must be finite)",
                param="action",
            )
        return np.clip(a, -1.0, 1.0)

    def observe(self) -> NDArray[np.float32]:
        obs = self.task.observe(self.streams)
        return np.clip(obs, self.low, self.high).astype(np.float32)

    def step(self, action: Any) -> tuple[F64, NDArray[np.bool_], NDArray[np.bool_], dict[str, F64]]:
        a = self.action(action)
        reward, terminated, info = self.task.step(a)
        self.steps += 1
        truncated = (self.steps >= self.task.max_steps) & ~terminated
        return reward, terminated, truncated, info


RENDER_MODES = ["human", "rgb_array"]


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is None or one of :data:`RENDER_MODES`, else a ConfigError."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ConfigError(
            f"render_mode {render_mode!r} is not supported (use None, 'rgb_array' or 'human')",
            param="render_mode",
        )
    return render_mode


class MarineEnv(gymnasium.Env):
    """A single marinesim environment: the batched task with N = 1.

    Parameters
    ----------
    render_mode : {None, "rgb_array", "human"}
        ``rgb_array``: :meth:`render` returns a top-down frame (H, W, 3) uint8 of the vehicle,
        its track since the reset and its goal; ``human``: that frame shown in a Matplotlib
        window after every step.
    max_steps : int, optional
        Steps before ``truncated``, counted by the environment.  Default: none here, the
        ``TimeLimit`` that ``gymnasium.make`` adds (the task's ``max_steps``) ends the episode.
    **options
        Task options (see each task's documentation).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES, "render_fps": 10}
    task_cls: ClassVar[type[BatchTask]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "task_cls" in cls.__dict__:  # frames per second of the task's step
            cls.metadata = {"render_modes": RENDER_MODES,
                            "render_fps": max(1, round(1.0 / cls.task_cls.dt))}  # fmt: skip

    def __init__(
        self, render_mode: str | None = None, max_steps: int | None = None, **options: Any
    ) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.task = _make_task(self.task_cls, 1, max_steps, options)
        if max_steps is None:
            self.task.max_steps = NO_LIMIT  # type: ignore[assignment]
        self.observation_space = self.task_cls.observation_space()
        self.action_space = self.task_cls.action_space()
        self._run = _Runner(self.task)
        self._started = False
        self._renderer = TrackRenderer()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Start an episode (``seed``: re-seed this environment's streams)."""
        super().reset(seed=seed)
        self._run.reset(np.zeros(1, dtype=np.intp), [seed])
        self._started = True
        obs = self._run.observe()[0]
        self._renderer.reset()
        self._renderer.add(self.task.view(0))
        if self.render_mode == "human":
            self.render()
        return obs, {}

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Advance by ``dt`` s; see the task for the action mapping and reward."""
        if not self._started:
            raise ConfigError("call reset() before step()", param="reset")
        reward, term, trunc, info = self._run.step(action)
        obs = self._run.observe()[0]
        self._renderer.add(self.task.view(0))
        if self.render_mode == "human":
            self.render()
        return (
            obs,
            float(reward[0]),
            bool(term[0]),
            bool(trunc[0]),
            {k: float(v[0]) for k, v in info.items()},
        )

    def render(self) -> NDArray[np.uint8] | None:
        """``rgb_array``: the frame (H, W, 3) uint8; ``human``: show it; None: nothing."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (nothing drawn)")
            return None
        if not self._started:
            raise ConfigError("call reset() before render()", param="reset")
        frame = self._renderer.frame(self.task.view(0))
        if self.render_mode == "rgb_array":
            return frame
        self._renderer.show(frame, self.task.env_id, self.metadata["render_fps"])
        return None

    def close(self) -> None:
        """Close the human-mode window, if any."""
        self._renderer.close()
        super().close()


class MarineVectorEnv(VectorEnv):
    """N environments of one task stepped as one batch (native vector environment).

    Autoreset follows Gymnasium's default ``NEXT_STEP`` mode: the step after an environment
    terminated or truncated resets it (its action is ignored, reward 0).  ``reset(seed=s)``
    seeds environment i with s + i; a list gives one seed per environment.
    ``options={"reset_mask": mask}`` resets only the environments where ``mask`` is true.

    Parameters
    ----------
    num_envs : int
        N.
    render_mode : None
        No rendering (render a single environment instead).
    max_steps : int, optional
        Steps before ``truncated`` (default: ``max_episode_steps``).
    max_episode_steps : int, optional
        The registration's limit, passed by ``gymnasium.make_vec`` (default: the task's).
    **options
        Task options.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP}
    task_cls: ClassVar[type[BatchTask]]

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        max_steps: int | None = None,
        max_episode_steps: int | None = None,
        **options: Any,
    ) -> None:
        if render_mode is not None:
            raise ConfigError(
                f"render_mode {render_mode!r} is not supported by the vector environment "
                "(render a single environment: gymnasium.make(id, render_mode=...))",
                param="render_mode",
            )
        self.render_mode = None
        limit = max_steps if max_steps is not None else max_episode_steps
        self.task = _make_task(self.task_cls, num_envs, limit, options)
        self.num_envs = self.task.n
        self.single_observation_space = self.task_cls.observation_space()
        self.single_action_space = self.task_cls.action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._run = _Runner(self.task)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Reset every environment (or those of ``options["reset_mask"]``)."""
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ConfigError(f"give {n} seeds, got {len(seeds)}", param="seed")
        mask = np.ones(n, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool).reshape(n)
        rows = np.flatnonzero(mask)
        self._run.reset(rows, [seeds[i] for i in rows])
        self._autoreset[rows] = False
        self._started = True
        return self._run.observe(), {}

    def step(
        self, actions: Any
    ) -> tuple[NDArray[np.float32], F64, NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """Advance every environment by ``dt`` s (environments due for autoreset are reset)."""
        if not self._started:
            raise ConfigError("call reset() before step()", param="reset")
        reward, term, trunc, info = self._run.step(actions)
        auto = self._autoreset
        if auto.any():
            rows = np.flatnonzero(auto)
            self._run.reset(rows, [None] * rows.size)
            reward[rows] = 0.0
            term[rows] = False
            trunc[rows] = False
        obs = self._run.observe()
        self._autoreset = term | trunc
        out: dict[str, Any] = {}
        ok = ~auto
        for k, v in info.items():
            out[k] = v
            out["_" + k] = ok
        return obs, reward, term, trunc, out
