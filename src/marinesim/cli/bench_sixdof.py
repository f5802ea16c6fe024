"""Throughput of the compiled 6-DOF models (``marinesim bench fossen``, benchmarks/).

Figures, each the best of ``rounds`` timed runs and also reported on process CPU time
(``*_cpu``: on a shared machine the wall clock counts other jobs too):

* ``vehicle_steps_per_s`` — PythonVehicleSimulator's REMUS 100 loop step (dynamics, actuator
  lags, kinematics, divergence guard) for N vehicles on packed rows, held commands, on all
  numba threads (``threads``); ``one_thread_vehicle_steps_per_s`` — the same on one thread;
* ``single_steps_per_s`` — the same for N = 1 (the same kernel, serial);
* ``loop_vehicle_steps_per_s`` — the baseline measured in the same run: a Python loop over
  vehicles calling the N = 1 step (what a per-vehicle simulator does);
* ``fossen6dof_vehicle_steps_per_s`` — the generic ``fossen6dof`` model (RK4, quaternion).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["best_rate", "measure", "warm_up"]

CMD = (5 * np.pi / 180, -5 * np.pi / 180, 1525.0)
H = 0.02


def best_rate(fn: Callable[[], Any], work: float, rounds: int) -> tuple[float, float]:
    """(wall, CPU) rates work/s of the fastest of ``rounds`` calls of ``fn``."""
    wall, cpu = 0.0, 0.0
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        wall = max(wall, work / max(t1 - t0, 1e-12))
        cpu = max(cpu, work / max(c1 - c0, 1e-12))
    return wall, cpu


def measure(
    n: int = 10_000,
    steps: int = 50,
    *,
    rounds: int = 3,
    loop_vehicles: int = 20,
    backend: str | None = None,
    generic: bool = True,
) -> dict[str, Any]:
    """Measure the figures above; returns a JSON-ready dict.

    Parameters
    ----------
    n : int
        Vehicles N (≥ 1).
    steps : int
        Timed steps per round (≥ 1).
    rounds : int
        Timed rounds; the best is kept.
    loop_vehicles : int
        Vehicles of the Python-loop baseline (scaled per vehicle-step).
    backend : str, optional
        ``cpu`` (default) or ``python`` / ``cuda``.
    generic : bool
        Also time the generic ``fossen6dof`` model.
    """
    from marinesim.core.errors import ConfigError
    from marinesim.models.sixdof import backends, pvs
    from marinesim.models.sixdof import fossen6dof as f6

    if n < 1 or steps < 1 or rounds < 1:
        raise ConfigError("vehicles, steps and rounds must be >= 1", param="vehicles")
    name = backends.resolve(backend)
    p = pvs.remus100()
    cmd = np.array([CMD])
    t_first = time.perf_counter()
    pvs.step_guarded(p, np.zeros((1, 15)), cmd, H, np.ones(1, bool), H, backend=name)
    pvs.step_guarded(p, np.zeros((n, 15)), cmd, H, np.ones(n, bool), H, backend=name)
    first = time.perf_counter() - t_first

    def batch(nv: int, k: int) -> Callable[[], None]:
        def run() -> None:
            x, alive = np.zeros((nv, 15)), np.ones(nv, dtype=bool)
            for j in range(k):
                x, alive, _ = pvs.step_guarded(p, x, cmd, H, alive, (j + 1) * H, backend=name)

        return run

    def loop() -> None:
        xs = [np.zeros((1, 15)) for _ in range(loop_vehicles)]
        al = [np.ones(1, dtype=bool) for _ in range(loop_vehicles)]
        for j in range(steps):
            for i in range(loop_vehicles):
                xs[i], al[i], _ = pvs.step_guarded(p, xs[i], cmd, H, al[i], (j + 1) * H)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    r: dict[str, Any] = {"model": "remus100", "vehicles": n, "steps": steps, "backend": name}
    import numba

    r["threads"] = numba.get_num_threads()
    r["vehicle_steps_per_s"], r["vehicle_steps_per_s_cpu"] = best_rate(
        batch(n, steps), n * steps, rounds
    )
    numba.set_num_threads(1)
    try:
        r["one_thread_vehicle_steps_per_s"], r["one_thread_vehicle_steps_per_s_cpu"] = best_rate(
            batch(n, steps), n * steps, rounds
        )
    finally:
        numba.set_num_threads(r["threads"])
    single = max(steps, 200)
    r["single_steps_per_s"], r["single_steps_per_s_cpu"] = best_rate(
        batch(1, single), single, rounds
    )
    r["loop_vehicle_steps_per_s"], r["loop_vehicle_steps_per_s_cpu"] = best_rate(
        loop, loop_vehicles * steps, rounds
    )
    r["ratio_vs_loop"] = r["vehicle_steps_per_s"] / r["loop_vehicle_steps_per_s"]
    if generic:
        model = f6.build(_generic_params(p))
        tau = np.tile([20.0, 0, 0, 0, 0, 0.5], (n, 1))

        def gen() -> None:
            s = f6.init(model, n)
            for _ in range(steps):
                s = f6.step(model, s, tau, None, H, backend=name)

        gen()
        r["fossen6dof_vehicle_steps_per_s"], r["fossen6dof_vehicle_steps_per_s_cpu"] = best_rate(
            gen, n * steps, rounds
        )
    r["first_call_s"] = first
    r["load_average"] = load
    r["cpus"] = os.cpu_count()
    return r


def _generic_params(p: Any) -> dict[str, Any]:
    """A REMUS-like rigid body for the generic model (RK4, quaternion attitude)."""
    return {
        "mass": float(p.MRB[0, 0]),
        "r_g": [0, 0, 0.02],
        "inertia": np.diag(np.diag(p.MRB)[3:]).tolist(),
        "inertia_frame": "co",
        "added_mass": np.diag(p.MA).tolist(),
        "linear_damping": [1.5, 3, 3, 0.3, 3, 3],
        "quadratic_damping": [10, 100, 100, 0.1, 10, 10],
        "neutrally_buoyant": True,
    }


def warm_up(*, parallel: bool = True) -> dict[str, float]:
    """Compile every 6-DOF kernel into numba's on-disk cache (ahead of the first real call).

    A fresh process then loads the machine code instead of compiling it (about 0.5 s instead
    of several seconds per kernel).  Returns the seconds each kernel took here (≈ 0 when the
    cache was already filled).

    Parameters
    ----------
    parallel : bool
        Also the ``prange`` kernels (used from ``PARALLEL_MIN`` vehicles on).
    """
    from marinesim.models.sixdof import backends, pvs
    from marinesim.models.sixdof import fossen6dof as f6

    sizes = (1, backends.PARALLEL_MIN) if parallel else (1,)
    out: dict[str, float] = {}
    for name, p in (("remus100", pvs.remus100()), ("otter", pvs.otter())):
        for n in sizes:
            t0 = time.perf_counter()
            m = len(p.controls)
            pvs.step_guarded(p, np.zeros((n, 12 + m)), np.zeros((1, m)), H, np.ones(n, bool), H)
            out[f"{name}_n{n}"] = time.perf_counter() - t0
    model = f6.build(_generic_params(pvs.remus100()))
    for n in sizes:
        t0 = time.perf_counter()
        f6.step(model, f6.init(model, n), None, None, H)
        out[f"fossen6dof_n{n}"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    s = f6.init(model, 1)
    f6.derivative(model, s.pos, s.att, s.nu, np.zeros((1, 6)), f6.Env())
    out["fossen6dof_derivative"] = time.perf_counter() - t0
    return out
