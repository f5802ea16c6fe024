"""Fuzzed actions: observations stay in their box, rewards finite, clipping is the contract."""

from __future__ import annotations

import gymnasium
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import marinesim.gym

IDS = ["marinesim/UsmWaypoint-v0", "marinesim/Remus100DepthHeading-v0"]


@settings(max_examples=15, deadline=None)
@given(
    env_id=st.sampled_from(IDS),
    seed=st.integers(0, 2**31),
    actions=st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=1, max_size=12),
)
def test_any_finite_action_keeps_observations_in_the_box(
    env_id: str, seed: int, actions: list[tuple[float, float]]
) -> None:
    env = gymnasium.make(env_id)
    obs, _ = env.reset(seed=seed)
    assert env.observation_space.contains(obs)
    for a in actions:
        obs, r, _te, _tr, _ = env.step(np.array(a, dtype=np.float32))
        assert env.observation_space.contains(obs)
        assert np.isfinite(r)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), a=st.floats(1.0, 50.0))
def test_actions_beyond_the_box_act_as_the_box_edge(seed: int, a: float) -> None:
    """Clipping: an action of ±a (a ≥ 1) gives exactly the episode of ±1."""
    runs = []
    for value in (a, 1.0):
        env = gymnasium.make("marinesim/UsmWaypoint-v0")
        env.reset(seed=seed)
        trace = [env.step(np.array([value, -value], dtype=np.float32))[0] for _ in range(5)]
        runs.append(np.array(trace))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert marinesim.gym.task_class("marinesim/UsmWaypoint-v0").actions[0].name == "thrust"
