"""Rendering (rgb_array, human), TimeLimit through the registration, registration after a
plain ``import marinesim`` (issue 22)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import marinesim.gym
from marinesim.gym.render import BACKGROUND, COLORS

IDS = list(marinesim.gym.ENV_IDS)
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _mask(frame: np.ndarray, col: tuple[int, int, int]) -> np.ndarray:
    return np.all(frame == np.array(col, dtype=np.uint8), axis=-1)


def _pale(col: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(0.55 * c + 0.45 * 255) for c in col)  # type: ignore[return-value]


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_frames_show_the_vehicle_and_its_track(env_id: str) -> None:
    env = gymnasium.make(env_id, render_mode="rgb_array")
    assert env.metadata["render_modes"] == ["human", "rgb_array"]
    env.reset(seed=2)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.shape == (480, 480, 3)
    assert first.dtype == np.uint8
    a = np.full(env.action_space.shape, 0.6, dtype=np.float32)
    for _ in range(40):
        env.step(a)
    frame = env.render()
    background = _mask(frame, BACKGROUND)
    assert 0.5 < background.mean() < 0.999  # mostly sea, but something drawn
    vehicle = _mask(frame, COLORS[0])
    assert 10 <= vehicle.sum() < 2000  # the vehicle marker: a few dozen pixels
    assert _mask(frame, _pale(COLORS[0])).sum() > 20  # its track since the reset
    assert not np.array_equal(first, frame)


def test_usm_frame_is_north_up_east_right() -> None:
    """The goal ring lies in the picture where the waypoint lies from the vehicle."""
    env = gymnasium.make("marinesim/UsmWaypoint-v0", render_mode="rgb_array")
    env.reset(seed=5)
    task = env.unwrapped.task
    frame = env.render()
    rv, cv = np.argwhere(_mask(frame, COLORS[0])).mean(axis=0)
    rg, cg = np.argwhere(_mask(frame, (20, 20, 20))).mean(axis=0)
    d_north = task.goal[0, 0] - task.state.y[0]
    d_east = task.goal[0, 1] - task.state.x[0]
    assert np.sign(rv - rg) == np.sign(d_north)  # north is up: smaller rows
    assert np.sign(cg - cv) == np.sign(d_east)  # east is right
    scale = np.hypot(rv - rg, cv - cg) / np.hypot(d_north, d_east)  # px per m, both axes
    assert abs(abs(rv - rg) / abs(d_north) - scale) / scale < 0.2 or abs(d_north) < 10


def test_human_mode_draws_the_same_frame_in_a_figure() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    env = gymnasium.make("marinesim/UsmWaypoint-v0", render_mode="human")
    env.reset(seed=1)
    for _ in range(5):
        env.step(np.array([0.5, 0.2], dtype=np.float32))
    assert env.render() is None
    renderer = env.unwrapped._renderer
    shown = np.asarray(renderer._img.get_array())
    frame = renderer.frame(env.unwrapped.task.view(0))
    assert np.array_equal(shown, frame)
    fig = renderer._fig
    env.close()
    assert not plt.fignum_exists(fig.number)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_with_rgb_array(env_id: str) -> None:
    env = gymnasium.make(env_id, render_mode="rgb_array")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_unknown_render_mode_is_a_clear_error() -> None:
    from marinesim.core.errors import ConfigError

    with (
        pytest.warns(UserWarning, match="not in the possible render_modes"),  # Gymnasium's
        pytest.raises(ConfigError, match="render_mode 'ansi' is not supported"),
    ):
        gymnasium.make("marinesim/UsmWaypoint-v0", render_mode="ansi")


@pytest.mark.parametrize("env_id", IDS)
def test_registration_has_the_tasks_time_limit(env_id: str) -> None:
    spec = gymnasium.spec(env_id)
    assert spec.max_episode_steps == marinesim.gym.task_class(env_id).max_steps
    env = gymnasium.make(env_id)
    assert isinstance(env, gymnasium.wrappers.TimeLimit)
    assert env._max_episode_steps == spec.max_episode_steps


def test_time_limit_truncates_and_can_be_overridden() -> None:
    env = gymnasium.make("marinesim/UsmWaypoint-v0", max_episode_steps=7)
    env.reset(seed=0)
    idle = np.array([-1.0, 0.0], dtype=np.float32)  # thrust 0: never reaches nor loses it
    ends = [env.step(idle)[3] for _ in range(7)]
    assert ends == [False] * 6 + [True]
    # longer than the task's default: the environment itself does not cut it short
    env = gymnasium.make("marinesim/UsmWaypoint-v0", max_episode_steps=610)  # task: 600
    env.reset(seed=0)
    trunc = [env.step(idle)[3] for _ in range(610)]
    assert not any(trunc[:-1]) and trunc[-1]
    # the native vector environment counts the registration's limit itself
    vec = gymnasium.make_vec("marinesim/UsmWaypoint-v0", num_envs=2, max_episode_steps=5)
    vec.reset(seed=0)
    out = [vec.step(np.tile(idle, (2, 1)))[3] for _ in range(5)]
    assert [bool(t.all()) for t in out] == [False] * 4 + [True]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip


def test_import_marinesim_neither_imports_gymnasium_nor_the_gym_package() -> None:
    r = _python(
        "import sys, marinesim\n"
        "print('gymnasium' in sys.modules, 'marinesim.gym' in sys.modules)\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "imports", ["import marinesim; import gymnasium", "import gymnasium; import marinesim"]
)
def test_make_works_after_import_marinesim_in_either_order(imports: str) -> None:
    r = _python(
        f"{imports}\n"
        "env = gymnasium.make('marinesim/UsmWaypoint-v0', render_mode='rgb_array')\n"
        "obs, _ = env.reset(seed=0)\n"
        "print(obs.shape, env.render().shape, env.spec.max_episode_steps)\n"
        "import importlib.machinery as m, gymnasium as g\n"
        "print(type(g.__spec__.loader) is m.SourceFileLoader)\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["(6,) (480, 480, 3) 600", "True"]


def test_max_episode_steps_table_matches_the_tasks() -> None:
    for env_id in IDS:
        assert marinesim.gym.MAX_EPISODE_STEPS[env_id] == marinesim.gym.task_class(env_id).max_steps


def test_survey_parallel_env_is_exported_and_renders_every_vehicle() -> None:
    from marinesim.gym.survey import SurveyParallelEnv

    assert marinesim.gym.SurveyParallelEnv is SurveyParallelEnv
    assert "SurveyParallelEnv" in marinesim.gym.__all__
    env = marinesim.gym.SurveyParallelEnv(render_mode="rgb_array")
    env.reset(seed=4)
    for _ in range(30):
        env.step({a: np.array([1.0, 0.0]) for a in env.agents})
    frame = env.render()
    assert frame.shape == (480, 480, 3) and frame.dtype == np.uint8
    for i in range(env.n):
        assert _mask(frame, COLORS[i]).sum() >= 10, i  # each vehicle drawn in its colour
        assert _mask(frame, _pale(COLORS[i])).sum() > 20, i  # with its track
    assert _mask(frame, (20, 20, 20)).sum() >= 6 * 20  # six object rings


def test_pettingzoo_checkers_pass_with_rendering() -> None:
    """PettingZoo's render_test (every declared mode) and parallel_api_test with rgb_array."""
    import matplotlib

    matplotlib.use("Agg")
    from pettingzoo.test import parallel_api_test, render_test
    from pettingzoo.utils.conversions import parallel_to_aec

    from marinesim.gym.survey import SurveyParallelEnv

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        render_test(lambda render_mode=None: parallel_to_aec(
            SurveyParallelEnv(render_mode=render_mode, max_cycles=30)))  # fmt: skip
        parallel_api_test(SurveyParallelEnv(render_mode="rgb_array"), num_cycles=50)
    assert [str(w.message) for w in caught] == []
