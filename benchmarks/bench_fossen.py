"""Throughput of the 6-DOF models (REMUS 100 as PythonVehicleSimulator builds it).

Figures are ratios against a per-vehicle Python loop of the same model measured in the same
run (architecture §5); absolute numbers depend on the machine and are printed for context.

* single vehicle: marinesim's one-vehicle path (the component kernels on Python floats, with
  the divergence guard) vs the same model through the numpy array API with N = 1
  (upstream-like per-call numpy);
* N vehicles (default 10 000): the batched kernels on (N,) arrays vs a Python loop over the
  vehicles calling the single-vehicle path, timed on a subset and scaled per vehicle-step;
* the generic ``fossen6dof`` model (REMUS-like rigid body, RK4) at N = 1 and N.

Each figure is the median of ``--repeat`` repetitions, timed on the wall clock and, as
``<figure>_cpu``, on the process's CPU time (on a shared machine the wall clock also counts
the time other jobs hold the cores).  Usage::

    python benchmarks/bench_fossen.py [--n 10000] [--steps 200] [--repeat 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from marinesim.models import fossen6dof as f6
from marinesim.models import hydro, pvs

H = 0.02
CMD = (5 * np.pi / 180, -5 * np.pi / 180, 1525.0)


#: Rates measured on process CPU time, next to the wall-clock ones (``<key>_cpu``): on a shared
#: machine the wall clock also counts the time other jobs hold the cores.
CPU_RATES: dict[str, float] = {}


def _median_rate(fn, work: float, repeat: int, key: str = "") -> float:  # noqa: ANN001
    rates, cpu = [], []
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        c1 = time.process_time()
        rates.append(work / (t1 - t0))
        cpu.append(work / max(c1 - c0, 1e-9))
    if key:
        CPU_RATES[key + "_cpu"] = statistics.median(cpu)
    return statistics.median(rates)


def single_float(p: pvs.Remus100Params, steps: int) -> None:
    """One vehicle, float kernels."""
    s = ((0.0,) * 6, (0.0,) * 6, (0.0,) * 3)
    alive = True
    for k in range(steps):
        new = pvs.step_c(p, hydro.PY, *s, CMD, H)
        s, alive, _ = pvs.guard(hydro.PY, s, new, alive, (k + 1) * H)


def single_array(p: pvs.Remus100Params, steps: int) -> None:
    """One vehicle through the (N, 6) numpy API with N = 1."""
    eta, nu, act = np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 3))
    u = np.array([CMD])
    for _ in range(steps):
        nu, act = pvs.remus100_dynamics(p, eta, nu, act, u, H)
        eta = pvs.attitude_euler(eta, nu, H)


def batch(p: pvs.Remus100Params, n: int, steps: int) -> None:
    """N vehicles, numpy kernels on (N,) components."""
    e = tuple(np.zeros(n) for _ in range(6))
    v = tuple(np.zeros(n) for _ in range(6))
    a = tuple(np.zeros(n) for _ in range(3))
    c = tuple(np.full(n, x) for x in CMD)
    s, alive = (e, v, a), np.ones(n, dtype=bool)
    for k in range(steps):
        s, alive, _ = pvs.step_batch(p, s, c, H, alive, (k + 1) * H)


def loop(p: pvs.Remus100Params, n: int, steps: int) -> None:
    """N vehicles as a Python loop over single vehicles."""
    states = [((0.0,) * 6, (0.0,) * 6, (0.0,) * 3) for _ in range(n)]
    alive = [True] * n
    for k in range(steps):
        for i in range(n):
            new = pvs.step_c(p, hydro.PY, *states[i], CMD, H)
            states[i], alive[i], _ = pvs.guard(hydro.PY, states[i], new, alive[i], (k + 1) * H)


def generic(model: f6.Fossen6Dof, n: int, steps: int) -> None:
    """fossen6dof (RK4, quaternion) for N vehicles."""
    s = f6.init(model, n)
    tau = np.tile([20.0, 0, 0, 0, 0, 0.5], (n, 1))
    for _ in range(steps):
        s = f6.step(model, s, tau, None, H)


def main() -> None:
    """Run the benchmarks, print the figures and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="vehicles in the batch")
    ap.add_argument("--steps", type=int, default=200, help="steps of the batched runs")
    ap.add_argument("--single-steps", type=int, default=5000, help="steps of the one-vehicle runs")
    ap.add_argument(
        "--loop-vehicles", type=int, default=200, help="vehicles in the timed Python loop"
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, default=Path("benchmarks/results/bench_fossen.json"))
    args = ap.parse_args()
    p = pvs.remus100()
    r = {}
    r["remus100_single_steps_per_s"] = _median_rate(
        lambda: single_float(p, args.single_steps),
        args.single_steps,
        args.repeat,
        key="remus100_single_steps_per_s",
    )
    r["remus100_single_numpy_api_steps_per_s"] = _median_rate(
        lambda: single_array(p, args.single_steps // 5),
        args.single_steps // 5,
        args.repeat,
        key="remus100_single_numpy_api_steps_per_s",
    )
    r["remus100_batch_vehicle_steps_per_s"] = _median_rate(
        lambda: batch(p, args.n, args.steps),
        args.n * args.steps,
        args.repeat,
        key="remus100_batch_vehicle_steps_per_s",
    )
    loop_steps = 20
    r["remus100_loop_vehicle_steps_per_s"] = _median_rate(
        lambda: loop(p, args.loop_vehicles, loop_steps),
        args.loop_vehicles * loop_steps,
        args.repeat,
        key="remus100_loop_vehicle_steps_per_s",
    )
    r["ratio_single_vs_numpy_api"] = (
        r["remus100_single_steps_per_s"] / r["remus100_single_numpy_api_steps_per_s"]
    )
    r["ratio_batch_vs_loop"] = (
        r["remus100_batch_vehicle_steps_per_s"] / r["remus100_loop_vehicle_steps_per_s"]
    )
    gp = {
        "mass": float(p.MRB[0, 0]),
        "r_g": [0, 0, 0.02],
        "inertia": np.diag(np.diag(p.MRB)[3:]).tolist(),
        "inertia_frame": "co",
        "added_mass": np.diag(p.MA).tolist(),
        "linear_damping": [1.5, 3, 3, 0.3, 3, 3],
        "quadratic_damping": [10, 100, 100, 0.1, 10, 10],
        "neutrally_buoyant": True,
    }
    model = f6.build(gp)
    gsteps = max(1, args.single_steps // 10)
    r["fossen6dof_rk4_single_steps_per_s"] = _median_rate(
        lambda: generic(model, 1, gsteps),
        gsteps,
        args.repeat,
        key="fossen6dof_rk4_single_steps_per_s",
    )
    bsteps = max(1, args.steps // 4)
    r["fossen6dof_rk4_batch_vehicle_steps_per_s"] = _median_rate(
        lambda: generic(model, args.n, bsteps),
        args.n * bsteps,
        args.repeat,
        key="fossen6dof_rk4_batch_vehicle_steps_per_s",
    )
    r.update(CPU_RATES)
    r["ratio_batch_vs_loop_cpu"] = (
        r["remus100_batch_vehicle_steps_per_s_cpu"] / r["remus100_loop_vehicle_steps_per_s_cpu"]
    )
    out = {
        "figures": r,
        "n": args.n,
        "method": (
            f"median of {args.repeat}; h = {H} s; dynamics + kinematics, open-loop commands; "
            "*_cpu: the same runs timed on process CPU time"
        ),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        },
    }
    for k, v in r.items():
        print(f"{k:45s} {v:14,.1f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
