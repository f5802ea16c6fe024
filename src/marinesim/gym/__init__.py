"""Gymnasium and PettingZoo environments over marinesim's batched models.

Importing this package registers the environments with Gymnasium::

    import gymnasium
    import marinesim.gym  # noqa: F401  (registers marinesim/...)

    env = gymnasium.make("marinesim/UsmWaypoint-v0")
    venv = gymnasium.make_vec("marinesim/UsmWaypoint-v0", num_envs=1024)  # native batch

``gymnasium.make("marinesim.gym:marinesim/UsmWaypoint-v0")`` imports it on the fly.
Every environment has a native vector form (``vector_entry_point``) that steps all
sub-environments as one structure-of-arrays batch; :class:`SurveyParallelEnv` is a PettingZoo
``ParallelEnv`` with several vehicles.  Spaces, units and rewards: :data:`TASKS` and
``marinesim gym list``.
"""

from __future__ import annotations

from typing import Any

import gymnasium

__all__ = ["ENV_IDS", "TASKS", "make_vec", "register_envs", "task_class"]

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


def register_envs() -> None:
    """Register every id with Gymnasium (idempotent)."""
    for env_id, (mod, _task, env, vec) in TASKS.items():
        if env_id in gymnasium.envs.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=f"{mod}:{env}",
            vector_entry_point=f"{mod}:{vec}",
            disable_env_checker=False,
        )


def make_vec(env_id: str, num_envs: int, **options: Any) -> Any:
    """The native vector environment of ``env_id`` with ``num_envs`` sub-environments."""
    return gymnasium.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **options
    )


register_envs()
