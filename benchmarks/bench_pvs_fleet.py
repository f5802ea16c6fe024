"""Throughput of the PythonVehicleSimulator fleet, per vehicle, against PVS's own timing.

For each vehicle (built with its ``main.py`` constructor, as the manifest's ``timing`` was
taken), the full closed loop — the vehicle's control system, ``dynamics``, ``attitudeEuler``
and the guard, compiled as one per-vehicle function (:mod:`marinesim.reference.pvs_fleet_loop`)
— is timed for N vehicles at once and for one vehicle, ``--steps`` steps in one kernel launch.
Also timed: the same N vehicles one launch per step (the engine's way: the batched controller
face, then the step kernel), and the baseline measured in the same run, a plain Python loop
over vehicles, each stepping the N = 1 path one step at a time.  PythonVehicleSimulator's recorded speed (``timing``, its bare loop with
preallocated storage, N = 10000 steps, median) comes from ``../shared/reference/pvs_fleet``
when it is present (another machine: compare ratios, not absolute numbers).

Usage::

    python benchmarks/bench_pvs_fleet.py [--n 10000] [--steps 200] [--single-steps 20000]
                                         [--loop-vehicles 20] [--repeat 3] [--vehicles tanker,DSRV]
                                         [--json benchmarks/results/bench_pvs_fleet.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from marinesim.control import pvs_fleet as ctl
from marinesim.models.sixdof import fleet
from marinesim.models.sixdof.fleet import kernel
from marinesim.reference import pvs_fleet_loop as closed

MAIN_PY = {  # PythonVehicleSimulator main.py constructors (the manifest's timing runs)
    "DSRV": ("depthAutopilot", 60.0),
    "frigate": ("headingAutopilot", 10.0, 100.0),
    "ROVzefakkel": ("headingAutopilot", 3.0, 100.0),
    "semisub": ("DPcontrol", 10.0, 10.0, 40.0, 0.5, 190.0),
    "shipClarke83": ("headingAutopilot", -20.0, 70, 8, 6, 0.7, 0.5, 10.0, 1e5),
    "supply": ("DPcontrol", 4.0, 4.0, 50.0, 0.5, 20.0),
    "tanker": ("headingAutopilot", -20, 0.5, 150, 20, 80),
    "torpedo": ("depthHeadingAutopilot", 30, 50, 1525, 0.5, 170),
}
SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "pvs_fleet"


def _start(v: fleet.FleetVehicle, n: int) -> np.ndarray:
    x = np.zeros((n, 12 + v.m))
    x[:, 6:12] = v.nu0
    return x


def _kernel_loop(v: fleet.FleetVehicle, n: int, steps: int, h: float = 0.02) -> float:
    """Seconds for ``steps`` closed-loop steps of n vehicles in one launch (no logging)."""
    x = _start(v, n)
    t0 = time.perf_counter()
    closed.run(v, x, steps, h)
    return time.perf_counter() - t0


def _loop(v: fleet.FleetVehicle, n: int, steps: int, h: float = 0.02) -> float:
    """Seconds for ``steps`` loop steps of n vehicles, one controller call and one kernel
    launch per step (no logging)."""
    x = _start(v, n)
    fn, st = ctl.onboard(v, n)
    alive = np.ones(n, dtype=bool)
    t0 = time.perf_counter()
    for k in range(steps):
        u, st = fn(st, k * h, x[:, 0:6], x[:, 6:12], h)
        x, alive, _ = kernel.step_guarded(v, x, u, h, alive, (k + 1) * h)
    return time.perf_counter() - t0


def _pvs_bare(name: str) -> float | None:
    try:
        timing = json.loads((SHARED / "manifest.json").read_text())["timing"]["results"]
    except (OSError, KeyError, json.JSONDecodeError):
        return None
    for key, res in timing.items():
        if key.split(":")[0] == name:
            return float(res["bare loop (preallocated storage), N=10000"]["steps_per_s_median"])
    return None


def main() -> None:
    """Run the measurements, print them and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10000, help="vehicles in the batch")
    ap.add_argument("--steps", type=int, default=200, help="timed batched steps (one launch)")
    ap.add_argument("--step-steps", type=int, default=10, help="timed launch-per-step steps")
    ap.add_argument("--single-steps", type=int, default=20000, help="timed steps of one vehicle")
    ap.add_argument("--loop-vehicles", type=int, default=20, help="vehicles in the plain loop")
    ap.add_argument("--repeat", type=int, default=3, help="timings per figure (median)")
    ap.add_argument("--vehicles", default=",".join(MAIN_PY))
    ap.add_argument("--json", type=Path, default=Path("benchmarks/results/bench_pvs_fleet.json"))
    args = ap.parse_args()
    results = []
    for name in args.vehicles.split(","):
        v = fleet.build(name, *MAIN_PY[name])
        _kernel_loop(v, 2, 2)  # compile / warm up
        _kernel_loop(v, args.n, 2)
        _loop(v, 2, 2)
        _loop(v, args.n, 2)
        reps = range(args.repeat)
        batched = (
            args.n * args.steps / np.median([_kernel_loop(v, args.n, args.steps) for _ in reps])
        )
        single = args.single_steps / np.median(
            [_kernel_loop(v, 1, args.single_steps) for _ in reps]
        )
        per_step = args.n * args.step_steps / _loop(v, args.n, args.step_steps)
        t_loop = sum(_loop(v, 1, args.step_steps) for _ in range(args.loop_vehicles))
        per_vehicle_loop = args.loop_vehicles * args.step_steps / t_loop
        pvs = _pvs_bare(name)
        r = {
            "vehicle": name,
            "n": args.n,
            "steps_per_launch": args.steps,
            "batched_vehicle_steps_per_s": batched,
            "single_steps_per_s": single,
            "launch_per_step_vehicle_steps_per_s": per_step,
            "loop_vehicle_steps_per_s": per_vehicle_loop,
            "ratio_batched_vs_loop": batched / per_vehicle_loop,
            "pvs_bare_loop_steps_per_s": pvs,
            "ratio_batched_vs_pvs": batched / pvs if pvs else None,
            "ratio_single_vs_pvs": single / pvs if pvs else None,
        }
        results.append(r)
        pv = f"{pvs:.3g}" if pvs else "n/a"
        print(
            f"{name:13s} N={args.n}: {batched:.3g} vehicle-steps/s ({r['ratio_batched_vs_loop']:.0f}x "
            f"loop, {r['ratio_batched_vs_pvs'] or float('nan'):.0f}x PVS {pv}); one vehicle "
            f"{single:.3g} steps/s ({r['ratio_single_vs_pvs'] or float('nan'):.2f}x PVS); "
            f"launch per step {per_step:.3g}"
        )
    out = {
        "benchmark": "PythonVehicleSimulator fleet: compiled closed loop (control + dynamics + "
        "attitudeEuler + guard, k steps per launch) vs a per-vehicle loop in the same run and "
        "PVS's recorded bare loop",
        "command": "python benchmarks/bench_pvs_fleet.py",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "load_average": os.getloadavg(),
        },
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
