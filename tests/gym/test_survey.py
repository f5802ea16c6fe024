"""PettingZoo survey: API test, determinism, contacts found, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from marinesim.core.errors import ConfigError
from marinesim.gym.survey import SurveyParallelEnv


def test_parallel_api_test_passes_without_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(SurveyParallelEnv(), num_cycles=700)
    assert [str(w.message) for w in caught] == []


def _run(seed: int, steps: int = 200) -> tuple[np.ndarray, list[dict]]:
    env = SurveyParallelEnv()
    obs, _ = env.reset(seed=seed)
    out = [np.stack(list(obs.values()))]
    rews = []
    for _ in range(steps):
        obs, rew, *_ = env.step({a: np.array([1.0, 0.02]) for a in env.agents})
        out.append(np.stack(list(obs.values())))
        rews.append(rew)
    return np.array(out), rews


def test_deterministic_for_a_seed() -> None:
    o1, r1 = _run(5, 80)
    o2, r2 = _run(5, 80)
    o3, _ = _run(6, 1)
    assert np.array_equal(o1, o2) and r1 == r2
    assert not np.array_equal(o1[0], o3[0])


def test_vehicles_find_objects_and_are_rewarded() -> None:
    env = SurveyParallelEnv()
    env.reset(seed=1)
    found = 0
    finds = 0
    while env.agents:
        _o, rew, _te, _tr, info = env.step({a: np.array([1.0, 0.02]) for a in env.agents})
        new = info[env.possible_agents[0]]["new"]
        if new:
            finds += new
            assert max(rew.values()) >= 5.0 - 0.01 - 2.0  # +5 per find, at most two penalties
        else:
            assert max(rew.values()) <= -0.01
        found = info[env.possible_agents[0]]["found"]
    assert found >= 1 and finds == found
    assert env.state().shape == (3 * 4 + 6 * 3,)


def test_bad_action_and_step_after_end() -> None:
    env = SurveyParallelEnv(max_cycles=2)
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="action of usm_1 must be 2 finite numbers"):
        env.step({"usm_0": [0, 0], "usm_1": [np.nan, 0], "usm_2": [0, 0]})
    env.step({a: [0, 0] for a in env.agents})
    _o, _r, _te, tr, _i = env.step({a: [0, 0] for a in env.agents})
    assert all(tr.values()) and env.agents == []
    with pytest.raises(ConfigError, match="call reset"):
        env.step({})
