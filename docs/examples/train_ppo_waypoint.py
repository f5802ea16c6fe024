"""Train Stable-Baselines3 PPO on ``marinesim/UsmWaypoint-v0`` and draw its learning curve.

Usage (needs the ``rl`` extra: ``pip install 'marinesim[rl]'``)::

    python docs/examples/train_ppo_waypoint.py --timesteps 100000 --out ppo_waypoint

Writes into ``--out``:

* ``learning_curve.png`` — episode return and success rate against environment steps, with the
  returns of a random policy and of a simple heading controller for scale;
* ``episodes.csv`` — one row per finished training episode (step, return, length, success);
* ``evaluation.csv`` — return and success of the trained policy (deterministic), the random
  policy and the heading controller over the same evaluation episodes;
* ``ppo_waypoint.zip`` — the trained model (``PPO.load``).

Training collects from marinesim's native vector environment (``gymnasium.make_vec``: the
``--n-envs`` vehicles are one batched model step), seen by Stable-Baselines3 through the small
adapter :class:`BatchVecEnv` below; evaluation uses the registered single environment
(``gymnasium.make``, with its ``TimeLimit``).  The agent sees the belief (noisy navigation),
the reward is computed from the truth.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ENV_ID = "marinesim/UsmWaypoint-v0"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timesteps", type=int, default=100_000, help="environment steps to train")
    p.add_argument("--n-envs", type=int, default=16, help="environments stepped as one batch")
    p.add_argument("--seed", type=int, default=0, help="seed of the agent and the environments")
    p.add_argument("--eval-episodes", type=int, default=20, help="evaluation episodes")
    p.add_argument("--out", type=Path, default=Path("ppo_waypoint"), help="output folder")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    a = p.parse_args(argv)
    if a.timesteps < 1 or a.n_envs < 1 or a.eval_episodes < 1 or a.threads < 1:
        p.error("--timesteps, --n-envs, --eval-episodes and --threads must be >= 1")
    return a


def batch_vec_env(num_envs: int, seed: int) -> Any:
    """A Stable-Baselines3 ``VecEnv`` over marinesim's native vector environment."""
    import gymnasium
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    import marinesim  # noqa: F401  (registers marinesim/... with Gymnasium)

    class BatchVecEnv(VecEnv):
        """SB3 wants finished environments reset within the step (their last observation in
        ``terminal_observation``); marinesim's vector env resets them on the next step, so
        they are reset here at once with ``reset_mask``."""

        def __init__(self) -> None:
            self.venv = gymnasium.make_vec(ENV_ID, num_envs=num_envs)
            self._seed: int | None = seed
            self._actions: np.ndarray | None = None
            super().__init__(num_envs, self.venv.single_observation_space,
                             self.venv.single_action_space)  # fmt: skip

        def reset(self) -> np.ndarray:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None  # later resets continue the seeded streams
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions, dtype=np.float32)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            obs, rew, term, trunc, info = self.venv.step(self._actions)
            done = term | trunc
            infos = [{"is_success": float(info["is_success"][i]),
                      "TimeLimit.truncated": bool(trunc[i] and not term[i])}
                     for i in range(self.num_envs)]  # fmt: skip
            if done.any():
                for i in np.flatnonzero(done):
                    infos[i]["terminal_observation"] = obs[i].copy()
                obs, _ = self.venv.reset(options={"reset_mask": done})
            return obs, rew.astype(np.float32), done, infos

        def close(self) -> None:
            self.venv.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.venv, attr_name)] * self.num_envs

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any) -> list:
            raise NotImplementedError(method_name)

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * self.num_envs

    return VecMonitor(BatchVecEnv(), info_keywords=("is_success",))


def heading_controller(obs: np.ndarray) -> np.ndarray:
    """A hand-written policy for scale: moderate thrust, rudder ∝ the waypoint's bearing."""
    rudder = np.clip(2.0 * np.arctan2(obs[1], obs[2]), -1.0, 1.0)
    return np.array([0.2, rudder], dtype=np.float32)


def evaluate(policy: Any, episodes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Returns and successes of ``policy(obs) -> action`` over seeded episodes."""
    import gymnasium

    import marinesim  # noqa: F401  (registers marinesim/... with Gymnasium)

    env = gymnasium.make(ENV_ID)
    rets, wins = [], []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        total, done, info = 0.0, False, {}
        while not done:
            obs, r, term, trunc, info = env.step(policy(obs))
            total += r
            done = term or trunc
        rets.append(total)
        wins.append(info.get("is_success", 0.0))
    return np.array(rets), np.array(wins)


def main(argv: list[str] | None = None) -> int:
    """Train, evaluate, write the figure and the tables; 0 on success."""
    a = _parse(argv)
    try:
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
    except ImportError as exc:
        print(f"error: {exc.name} is not installed (pip install 'marinesim[rl]')", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    a.out.mkdir(parents=True, exist_ok=True)
    episodes: list[tuple[int, float, int, float]] = []

    class Episodes(BaseCallback):
        """Collects every finished episode (Monitor's ``episode`` info) with its step."""

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                ep = info.get("episode")
                if ep is not None:
                    win = float(info.get("is_success", 0.0))
                    episodes.append((self.num_timesteps, float(ep["r"]), int(ep["l"]), win))
            return True

    venv = batch_vec_env(a.n_envs, a.seed)
    n_steps = max(16, min(256, a.timesteps // a.n_envs))
    model = PPO(
        "MlpPolicy", venv, n_steps=n_steps, batch_size=min(256, n_steps * a.n_envs),
        gamma=0.99, learning_rate=3e-4, ent_coef=0.0, seed=a.seed, verbose=0, device="cpu",
    )  # fmt: skip
    t0 = time.perf_counter()
    model.learn(total_timesteps=a.timesteps, callback=Episodes())
    train_s = time.perf_counter() - t0
    model.save(a.out / "ppo_waypoint")

    def trained(obs: np.ndarray) -> np.ndarray:
        return model.predict(obs, deterministic=True)[0]

    rng = np.random.default_rng(a.seed)

    def random_policy(_obs: np.ndarray) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, 2).astype(np.float32)

    seed_eval = 10_000 + a.seed  # episodes the agent did not train on
    evals = {
        "ppo": evaluate(trained, a.eval_episodes, seed_eval),
        "random": evaluate(random_policy, a.eval_episodes, seed_eval),
        "heading_controller": evaluate(heading_controller, a.eval_episodes, seed_eval),
    }
    with (a.out / "episodes.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timesteps", "return", "length", "success"])
        w.writerows(episodes)
    with (a.out / "evaluation.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["policy", "episodes", "mean_return", "std_return", "success_rate"])
        for name, (ret, win) in evals.items():
            w.writerow([name, len(ret), f"{ret.mean():.3f}", f"{ret.std():.3f}", f"{win.mean():.3f}"])
    _figure(a, episodes, evals, train_s)
    for name, (ret, win) in evals.items():
        print(f"{name:20s} mean return {ret.mean():8.2f}  success {100 * win.mean():5.1f} %")
    print(f"trained {a.timesteps} steps in {train_s:.0f} s (wall); wrote {a.out}/learning_curve.png")
    return 0


def _trailing_mean(x: np.ndarray, k: int) -> np.ndarray:
    """Mean of the last ``k`` values at each index (fewer at the start)."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(i - k, 0)
    return (c[i] - c[lo]) / (i - lo)


def _figure(a: argparse.Namespace, episodes: list, evals: dict, train_s: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, layout="constrained")
    if episodes:
        ep = np.array(episodes, dtype=float)
        k = max(1, min(50, len(ep) // 10))
        ax.plot(ep[:, 0], ep[:, 1], ".", ms=2, color="0.7", label="training episode")
        ax.plot(ep[:, 0], _trailing_mean(ep[:, 1], k), color="C0", lw=2,
                label=f"mean of the last {k} episodes")  # fmt: skip
        bx.plot(ep[:, 0], 100 * _trailing_mean(ep[:, 3], k), color="C0", lw=2)
    styles = {"ppo": ("C2", "-"), "random": ("C3", ":"), "heading_controller": ("k", "--")}
    for name, (ret, win) in evals.items():
        col, ls = styles[name]
        ax.axhline(ret.mean(), color=col, ls=ls, lw=1.2, label=f"{name} (evaluation)")
        bx.axhline(100 * win.mean(), color=col, ls=ls, lw=1.2)
    ax.set_ylabel("episode return")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    bx.set_ylabel("waypoint reached [%]")
    bx.set_xlabel("environment steps")
    bx.set_ylim(-5, 105)
    bx.grid(True, alpha=0.3)
    fig.suptitle(
        f"PPO on {ENV_ID}: {a.timesteps} steps, {a.n_envs} envs, seed {a.seed} "
        f"(training {train_s:.0f} s wall time on CPU)",
        fontsize=10,
    )
    fig.savefig(a.out / "learning_curve.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
