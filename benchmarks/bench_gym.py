"""Steps/s of the native vector environments against Gymnasium's ``SyncVectorEnv``.

For each registered ``marinesim/...`` id and N sub-environments (default 1024), two figures
measured in the same process (architecture §5):

* native: ``gymnasium.make_vec(id, num_envs=N)`` — the ``vector_entry_point``, one batched
  structure-of-arrays step of all N environments;
* baseline: ``gymnasium.make_vec(id, num_envs=N, vectorization_mode="sync")`` — Gymnasium's
  ``SyncVectorEnv`` over N copies of the same single environment (``gymnasium.make(id)``,
  the batch code with N = 1), stepped one after the other.

Both get the same random actions (a local generator), start from ``reset(seed=0)`` and run
with autoreset.  Each figure is the best of ``--repeat`` timed rounds of at least ``--budget``
seconds (at least 2 steps), rounds interleaved; the load average is recorded (the machine may
be shared).  The ratio is native / baseline environment-steps per second.

Usage::

    python benchmarks/bench_gym.py [--envs 1024] [--ids marinesim/UsmWaypoint-v0,...]
                                   [--repeat 2] [--budget 2.0]
                                   [--json benchmarks/results/bench_gym.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import marinesim.gym


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover - platforms without getloadavg
        return None


def _rate(env: Any, actions: np.ndarray, budget: float) -> float:
    """Environment-steps per second over at least ``budget`` s and 2 steps."""
    n = actions.shape[1]
    env.step(actions[0])  # warm-up (first-call caches)
    k = 0
    t0 = time.perf_counter()
    while True:
        env.step(actions[(k + 1) % len(actions)])
        k += 1
        dt = time.perf_counter() - t0
        if k >= 2 and dt >= budget:
            return n * k / dt


def bench(env_id: str, n: int, repeat: int, budget: float) -> dict[str, Any]:
    """One row: native and SyncVectorEnv rates and their ratio for ``env_id`` at N = n."""
    k = len(marinesim.gym.task_class(env_id).actions)
    actions = np.random.default_rng(0).uniform(-1, 1, (64, n, k)).astype(np.float32)
    native = gymnasium.make_vec(env_id, num_envs=n)
    sync = gymnasium.make_vec(env_id, num_envs=n, vectorization_mode="sync")
    native.reset(seed=0)
    sync.reset(seed=0)
    best_native = best_sync = 0.0
    for _ in range(repeat):
        best_native = max(best_native, _rate(native, actions, budget))
        best_sync = max(best_sync, _rate(sync, actions, budget))
    return {
        "id": env_id,
        "num_envs": n,
        "native_steps_per_s": best_native,
        "sync_steps_per_s": best_sync,
        "ratio": best_native / best_sync,
        "load_average": _load(),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the table; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--ids", default=",".join(marinesim.gym.ENV_IDS))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--budget", type=float, default=2.0)
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_gym.json"
    )
    args = ap.parse_args(argv)
    rows = []
    print(f"{'id':40s} {'N':>6s} {'native steps/s':>15s} {'sync steps/s':>13s} {'ratio':>8s}")
    for env_id in [s.strip() for s in args.ids.split(",") if s.strip()]:
        try:
            row = bench(env_id, args.envs, args.repeat, args.budget)
        except Exception as exc:  # report and go on: one broken model must not hide the rest
            row = {"id": env_id, "num_envs": args.envs, "error": f"{type(exc).__name__}: {exc}"}
            print(f"{env_id:40s} {args.envs:6d} failed: {row['error'][:200]}")
        else:
            print(
                f"{env_id:40s} {args.envs:6d} {row['native_steps_per_s']:15.4g} "
                f"{row['sync_steps_per_s']:13.4g} {row['ratio']:7.0f}x"
            )
        rows.append(row)
    out = {
        "benchmark": "bench_gym",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": gymnasium.__version__,
        "machine": platform.machine(),
        "rows": rows,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
