"""Gymnasium and PettingZoo environments over marinesim's batched models.

The environments are registered with Gymnasium once both ``marinesim`` and ``gymnasium`` are
imported, in either order (``import marinesim`` itself does not import Gymnasium: it registers
at once when Gymnasium is already loaded, and otherwise when Gymnasium gets imported, see
:mod:`marinesim._gym_hook`)::

    import gymnasium
    import marinesim

    env = gymnasium.make("marinesim/UsmWaypoint-v0", render_mode="rgb_array")
    venv = gymnasium.make_vec("marinesim/UsmWaypoint-v0", num_envs=1024)  # native batch

Importing this package registers them too, and
``gymnasium.make("marinesim.gym:marinesim/UsmWaypoint-v0")`` imports it on the fly.  Each
registration has ``max_episode_steps`` (the task's ``max_steps``), so ``gymnasium.make``
adds a ``TimeLimit``.  Every environment has a native vector form (``vector_entry_point``)
that steps all sub-environments as one structure-of-arrays batch; :class:`SurveyParallelEnv`
(also ``marinesim.gym.survey.SurveyParallelEnv``) is a PettingZoo ``ParallelEnv`` with
several vehicles.  Spaces, units and rewards: :data:`TASKS` and ``marinesim gym list``.
"""

from __future__ import annotations

from typing import Any

import gymnasium

__all__ = ["ENV_IDS", "TASKS", "SurveyParallelEnv", "make_vec", "register_envs", "task_class"]

#: id → (module, task class, single env class, vector env class)
TASKS: dict[str, tuple[str, str, str, str]] = {
    "marinesim/UsmWaypoint-v0": (
        "marinesim.gym.usm_waypoint", "UsmWaypointTask", "UsmWaypointEnv", "UsmWaypointVectorEnv",
    ),
    "marinesim/BlueRov2StationKeeping-v0": (
        "marinesim.gym.bluerov_station", "BlueRov2StationTask", "BlueRov2StationEnv",
        "BlueRov2StationVectorEnv",
    ),
    "marinesim/Remus100DepthHeading-v0": (
        "marinesim.gym.remus_depth_heading", "Remus100DepthHeadingTask",
        "Remus100DepthHeadingEnv", "Remus100DepthHeadingVectorEnv",
    ),
    "marinesim/SurftrakAltitude-v0": (
        "marinesim.gym.surftrak_altitude", "SurftrakAltitudeTask", "SurftrakAltitudeEnv",
        "SurftrakAltitudeVectorEnv",
    ),
}  # fmt: skip

ENV_IDS = tuple(TASKS)


def task_class(env_id: str) -> Any:
    """The :class:`~marinesim.gym.base.BatchTask` class of a registered id."""
    import importlib

    from marinesim.core.errors import UnknownNameError

    if env_id not in TASKS:
        raise UnknownNameError("gym environment", env_id, list(TASKS), param="env")
    mod, task, _e, _v = TASKS[env_id]
    return getattr(importlib.import_module(mod), task)


#: Steps before ``truncated`` of each id (the registration's ``max_episode_steps``): the
#: task's ``max_steps``, kept here so that registering imports no task module.
MAX_EPISODE_STEPS: dict[str, int] = {
    "marinesim/UsmWaypoint-v0": 600,
    "marinesim/BlueRov2StationKeeping-v0": 300,
    "marinesim/Remus100DepthHeading-v0": 600,
    "marinesim/SurftrakAltitude-v0": 600,
}


def register_envs() -> None:
    """Register every id with Gymnasium (idempotent)."""
    for env_id, (mod, _task, env, vec) in TASKS.items():
        if env_id in gymnasium.envs.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=f"{mod}:{env}",
            vector_entry_point=f"{mod}:{vec}",
            max_episode_steps=MAX_EPISODE_STEPS[env_id],
            disable_env_checker=False,
        )


def __getattr__(name: str) -> Any:
    """``SurveyParallelEnv``: imported from :mod:`marinesim.gym.survey` (PettingZoo) on use."""
    if name == "SurveyParallelEnv":
        from marinesim.gym.survey import SurveyParallelEnv

        return SurveyParallelEnv
    raise AttributeError(f"module 'marinesim.gym' has no attribute {name!r}")


def make_vec(env_id: str, num_envs: int, **options: Any) -> Any:
    """The native vector environment of ``env_id`` with ``num_envs`` sub-environments."""
    return gymnasium.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **options
    )


register_envs()
