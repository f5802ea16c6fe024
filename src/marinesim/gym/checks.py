"""Conformance checks of the environments (``marinesim gym check``).

:func:`check` runs, for a Gymnasium id: Gymnasium's ``check_env`` on the single environment
(any warning counts as a failure), determinism for a seed, and the native vector environment
against ``SyncVectorEnv`` over the same single environment (autoresets included); for the
PettingZoo environment: PettingZoo's ``parallel_api_test`` and determinism.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

__all__ = ["PETTINGZOO", "CheckResult", "check", "describe", "list_envs"]

#: PettingZoo environments: name → class path.
PETTINGZOO = {"marinesim/Survey-v0": "marinesim.gym.survey:SurveyParallelEnv"}


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, and what was found."""

    name: str
    passed: bool
    detail: str


def list_envs() -> list[dict[str, Any]]:
    """Every environment: id, kind, observation and action sizes, step [s]."""
    from marinesim.gym import ENV_IDS, task_class

    out = []
    for env_id in ENV_IDS:
        cls = task_class(env_id)
        out.append({
            "id": env_id, "kind": "gymnasium (+ native vector)", "obs": len(cls.observations),
            "act": len(cls.actions), "dt": cls.dt, "max_steps": cls.max_steps,
        })  # fmt: skip
    for env_id in PETTINGZOO:
        env = _pettingzoo(env_id)
        a0 = env.possible_agents[0]
        out.append({
            "id": env_id, "kind": f"pettingzoo parallel ({len(env.possible_agents)} agents)",
            "obs": env.observation_space(a0).shape[0], "act": env.action_space(a0).shape[0],
            "dt": env.dt, "max_steps": env.max_cycles,
        })  # fmt: skip
    return out


def describe(env_id: str) -> str:
    """Spaces with units and the reward, in words."""
    if env_id in PETTINGZOO:
        import importlib

        mod = importlib.import_module(PETTINGZOO[env_id].split(":")[0])
        return f"{env_id}:\n{mod.__doc__}"
    from marinesim.gym import task_class

    return task_class(env_id).describe()


def _pettingzoo(env_id: str, **kwargs: Any) -> Any:
    import importlib

    mod, cls = PETTINGZOO[env_id].split(":")
    return getattr(importlib.import_module(mod), cls)(**kwargs)


def _no_warnings(fn: Any, *args: Any, **kwargs: Any) -> CheckResult:
    name = getattr(fn, "__name__", "check")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(*args, **kwargs)
        except Exception as exc:
            return CheckResult(name, False, f"{type(exc).__name__}: {exc}")
    if caught:
        return CheckResult(name, False, "warning: " + "; ".join(str(w.message) for w in caught))
    return CheckResult(name, True, "no errors, no warnings")


def check(env_id: str, *, steps: int = 60, num_envs: int = 4, seed: int = 0) -> list[CheckResult]:
    """Run the checks of ``env_id``.

    Parameters
    ----------
    env_id : str
        A registered id or a PettingZoo environment of :data:`PETTINGZOO`.
    steps : int
        Steps of the determinism and vector comparisons.
    num_envs : int
        Sub-environments of the vector comparison (episodes shortened to 20 steps so that
        autoresets happen).
    seed : int
        Seed of the runs.

    Returns
    -------
    list of CheckResult
    """
    if env_id in PETTINGZOO:
        from pettingzoo.test import parallel_api_test

        res = [_no_warnings(parallel_api_test, _pettingzoo(env_id), num_cycles=max(steps, 10))]
        res[0] = CheckResult("pettingzoo.test.parallel_api_test", res[0].passed, res[0].detail)
        runs = []
        for _ in range(2):
            env = _pettingzoo(env_id)
            obs, _ = env.reset(seed=seed)
            acts = np.random.default_rng(seed).uniform(-1, 1, (steps, len(env.possible_agents), 2))
            trace = [np.stack(list(obs.values()))]
            for a in acts:
                if not env.agents:
                    break
                obs, *_ = env.step({n: a[i] for i, n in enumerate(env.agents)})
                trace.append(np.stack(list(obs.values())) if obs else np.zeros(0))
            runs.append(trace)
        same = all(np.array_equal(x, y) for x, y in zip(*runs, strict=True))
        res.append(CheckResult("deterministic for a seed", same, f"{steps} steps, seed {seed}"))
        return res

    from gymnasium.utils.env_checker import check_env

    import marinesim.gym  # noqa: F401  (registration)
    from marinesim.gym import task_class

    k = len(task_class(env_id).actions)
    res = [_no_warnings(check_env, gymnasium.make(env_id).unwrapped)]
    res[0] = CheckResult("gymnasium.utils.env_checker.check_env", res[0].passed, res[0].detail)
    acts = np.random.default_rng(seed).uniform(-1, 1, (steps, num_envs, k)).astype(np.float32)
    traces = []
    for _ in range(2):
        env = gymnasium.make(env_id)
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        for a in acts[:, 0]:
            obs, *_ = env.step(a)
            trace.append(obs)
        traces.append(np.array(trace))
    same = bool(np.array_equal(traces[0], traces[1]))
    res.append(CheckResult("deterministic for a seed", same, f"{steps} steps, seed {seed}"))
    vec = gymnasium.make_vec(env_id, num_envs=num_envs, max_steps=20)
    sync = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", max_steps=20)
    ov, _ = vec.reset(seed=seed)
    os_, _ = sync.reset(seed=seed)
    worst = float(np.max(np.abs(ov - os_)))
    flags = True
    ends = 0
    for a in acts:
        rv, rs = vec.step(a), sync.step(a)
        worst = max(
            worst, float(np.max(np.abs(rv[0] - rs[0]))), float(np.max(np.abs(rv[1] - rs[1])))
        )
        flags &= bool(np.array_equal(rv[2], rs[2]) and np.array_equal(rv[3], rs[3]))
        ends += int(rv[2].sum() + rv[3].sum())
    ok = flags and worst <= 1e-5
    res.append(CheckResult(
        "native vector env == SyncVectorEnv", ok,
        f"{num_envs} envs x {steps} steps, {ends} episode ends, largest difference {worst:.3g}, "
        f"done flags {'equal' if flags else 'DIFFER'}",
    ))  # fmt: skip
    return res
