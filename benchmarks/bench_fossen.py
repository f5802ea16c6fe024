"""Throughput of the compiled 6-DOF models (REMUS 100 as PythonVehicleSimulator builds it).

Figures come from :func:`marinesim.cli.bench_sixdof.measure` (the same code as
``marinesim bench fossen``): the REMUS 100 loop step for N vehicles on all numba threads and
on one, N = 1, the generic ``fossen6dof`` model, and the baseline measured in the same run —
a Python loop over vehicles calling the N = 1 step.  Ratios are against that baseline;
absolute numbers depend on the machine and its load (recorded next to them), and each figure
is also given on process CPU time (``*_cpu``).

Usage::

    python benchmarks/bench_fossen.py [--sizes 1000,10000] [--steps 50] [--rounds 3]
                                      [--json benchmarks/results/bench_fossen.json]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np

from marinesim.cli.bench_sixdof import measure


def main() -> None:
    """Run the measurements, print them and write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated vehicle counts N")
    ap.add_argument("--steps", type=int, default=50, help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--json", type=Path, default=Path("benchmarks/results/bench_fossen.json"))
    args = ap.parse_args()
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        r = measure(n, args.steps, rounds=args.rounds, backend=args.backend)
        results.append(r)
        print(
            f"N={n:>7}  remus100 {r['vehicle_steps_per_s']:.3g} vehicle-steps/s "
            f"(1 thread {r['one_thread_vehicle_steps_per_s']:.3g}, CPU time "
            f"{r['vehicle_steps_per_s_cpu']:.3g})  N=1 {r['single_steps_per_s']:.3g} steps/s  "
            f"loop {r['loop_vehicle_steps_per_s']:.3g}  ratio {r['ratio_vs_loop']:.3g}x  "
            f"fossen6dof {r['fossen6dof_vehicle_steps_per_s']:.3g}  load {r['load_average']}"
        )
    out = {
        "benchmark": "compiled 6-DOF kernels: REMUS 100 loop step and fossen6dof, vs a "
        "per-vehicle loop of the N = 1 step in the same run",
        "command": "python benchmarks/bench_fossen.py",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
        },
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
