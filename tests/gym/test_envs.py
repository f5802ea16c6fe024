"""Gymnasium environments: checker, determinism, vector == SyncVectorEnv, bad input, physics."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import marinesim.gym
from marinesim.core.errors import ConfigError, UnknownNameError

IDS = list(marinesim.gym.ENV_IDS)


def _actions(env_id: str, n: int, steps: int, seed: int = 0) -> np.ndarray:
    k = len(marinesim.gym.task_class(env_id).actions)
    a = np.random.default_rng(seed).uniform(-1, 1, (steps, n, k)).astype(np.float32)
    return a


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_without_warnings(env_id: str) -> None:
    env = gymnasium.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode_other_seed_differs(env_id: str) -> None:
    acts = _actions(env_id, 1, 30)

    def run(seed: int) -> tuple[np.ndarray, np.ndarray]:
        env = gymnasium.make(env_id)
        obs, _ = env.reset(seed=seed)
        out, rew = [obs], []
        for a in acts[:, 0]:
            obs, r, _te, _tr, _ = env.step(a)
            out.append(obs)
            rew.append(r)
        return np.array(out), np.array(rew)

    o1, r1 = run(7)
    o2, r2 = run(7)
    o3, _ = run(8)
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2)
    assert not np.array_equal(o1[0], o3[0])


@pytest.mark.parametrize("env_id", IDS)
def test_native_vector_equals_sync_vector_env(env_id: str) -> None:
    """The batch of N equals N single environments, autoresets included.

    Tolerances: observations are float32 (a relative 1e-6 covers their rounding when the
    float64 states differ by round-off between batch sizes); termination flags exactly.
    """
    n, steps = 4, 45
    vec = gymnasium.make_vec(env_id, num_envs=n, max_steps=20)
    sync = gymnasium.make_vec(env_id, num_envs=n, vectorization_mode="sync", max_steps=20)
    assert isinstance(vec, marinesim.gym.base.MarineVectorEnv)
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    ov, _ = vec.reset(seed=11)
    os_, _ = sync.reset(seed=11)
    np.testing.assert_allclose(ov, os_, rtol=1e-6, atol=1e-6)
    ends = 0
    for a in _actions(env_id, n, steps, seed=3):
        rv = vec.step(a)
        rs = sync.step(a)
        np.testing.assert_allclose(rv[0], rs[0], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(rv[1], rs[1], rtol=1e-9, atol=1e-9)
        assert np.array_equal(rv[2], rs[2]) and np.array_equal(rv[3], rs[3])
        ends += int(rv[2].sum() + rv[3].sum())
    assert ends >= n  # every environment ended at least once and was auto-reset


def test_reset_mask_resets_only_masked_environments() -> None:
    vec = marinesim.gym.make_vec("marinesim/UsmWaypoint-v0", 3)
    vec.reset(seed=1)
    for _ in range(5):
        obs, *_ = vec.step(np.tile([1.0, 0.0], (3, 1)))
    again, _ = vec.reset(seed=[None, 2, None], options={"reset_mask": [False, True, False]})
    single = gymnasium.make("marinesim/UsmWaypoint-v0")
    first, _ = single.reset(seed=2)
    np.testing.assert_array_equal(again[1], first)
    assert again[0][3] > 1.0 and again[2][3] > 1.0  # still moving: not reset


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_action_is_a_clear_error(bad: float) -> None:
    env = gymnasium.make("marinesim/UsmWaypoint-v0")
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="action component 'rudder' of environment 0 is"):
        env.step(np.array([0.0, bad], dtype=np.float32))


def test_wrong_action_shape_and_unknown_option() -> None:
    env = marinesim.gym.usm_waypoint.UsmWaypointEnv()
    env.reset(seed=0)
    with pytest.raises(ConfigError, match=r"2 component\(s\) per environment \(thrust, rudder\)"):
        env.step(np.zeros(3))
    with pytest.raises(UnknownNameError, match="did you mean 'pos_std'"):
        gymnasium.make("marinesim/UsmWaypoint-v0", pos_sdt=1.0)
    with pytest.raises(ConfigError, match="call reset"):
        marinesim.gym.usm_waypoint.UsmWaypointEnv().step(np.zeros(2))


def test_make_with_module_prefix_and_unknown_id() -> None:
    env = gymnasium.make("marinesim.gym:marinesim/UsmWaypoint-v0")
    assert env.observation_space.shape == (6,)
    with pytest.raises(UnknownNameError, match="did you mean"):
        marinesim.gym.task_class("marinesim/UsmWaypoint-v1")


def test_usm_heading_controller_captures_the_waypoint() -> None:
    """Rudder + turns to starboard: steering by the observed bearing reaches the waypoint."""
    env = gymnasium.make("marinesim/UsmWaypoint-v0")
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        d0 = obs[0]
        for _ in range(600):
            rudder = np.clip(2.0 * np.arctan2(obs[1], obs[2]), -1, 1)
            obs, _r, term, trunc, info = env.step(np.array([0.2, rudder], dtype=np.float32))
            if term or trunc:
                break
        assert term and info["is_success"] == 1.0, (seed, d0, info)


def test_remus_autopilot_reaches_depth_and_heading() -> None:
    """Signs of the action mapping: rudder + turns to starboard, stern plane + dives."""
    env = gymnasium.make("marinesim/Remus100DepthHeading-v0")
    for seed in (4, 5):
        obs, _ = env.reset(seed=seed)
        for _ in range(600):
            a = np.clip([2.0 * obs[3] - obs[5], 0.3 * obs[0] + obs[1]], -1, 1)
            obs, _r, term, trunc, info = env.step(a.astype(np.float32))
            assert not term
        assert info["depth_error"] < 0.5  # m (5 cm depth noise; 60 s for at most 29 m)
        assert info["heading_error"] < np.deg2rad(2.0)


def test_bluerov_pd_holds_station_in_the_current() -> None:
    env = gymnasium.make("marinesim/BlueRov2StationKeeping-v0", max_current_speed=0.3)
    obs, _ = env.reset(seed=3)
    errs = []
    for _ in range(300):
        o = obs
        a = [
            0.3 * o[0] - 0.5 * o[5],
            0.3 * o[1] - 0.5 * o[6],
            0.3 * o[2] - 0.5 * o[7],
            2 * o[3] - o[8],
        ]
        obs, _r, term, trunc, info = env.step(np.clip(a, -1, 1).astype(np.float32))
        assert not term
        errs.append(info["position_error"])
    assert trunc
    assert max(errs[-50:]) < 0.5  # m: a PD without integral leaves a small offset in current


def test_surftrak_holds_the_range_it_took_when_the_pilot_is_centred() -> None:
    """SURFTRAK takes the first valid reading as its target and follows the sawtooth.

    The 1 m sawtooth seen through a 0.3 s delayed rangefinder leaves altitude swings of about
    ±1 m around the held range (the SURFTRAK suite's figures); bound: 1.3 m.
    """
    env = gymnasium.make("marinesim/SurftrakAltitude-v0")
    obs, _ = env.reset(seed=2)
    alt0 = None
    alts = []
    for k in range(300):
        obs, _r, term, _tr, info = env.step(np.zeros(1, dtype=np.float32))
        assert not term
        alt0 = info["altitude"] if alt0 is None else alt0
        if k >= 50:
            alts.append(info["altitude"])
    held = obs[3]
    assert abs(held - alt0) < 0.2  # m: the first reading (5 cm noise, 0.1 s of motion)
    assert np.max(np.abs(np.array(alts) - held)) < 1.3
