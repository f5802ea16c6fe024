"""Wall time of the 6-DOF / allocation loop inside the engine (bundled scenarios).

For each case the scenario is built once per repetition and run to its (shortened) end;
the figure is the median simulated-seconds per wall-second and the wall time per tick per
vehicle.  Cases: BlueROV2 Heavy station keeping with pinv and with qp at N = 1 and N = 16
vehicles in one block (the batched path), and the REMUS 100 survey.  Usage::

    python benchmarks/bench_in_the_loop.py [--end 20] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from marinesim.scenario import load_simulation

CASES = (
    ("bluerov2_station_keeping", {"allocator": "pinv"}, 1),
    ("bluerov2_station_keeping", {"allocator": "qp"}, 1),
    ("bluerov2_station_keeping", {"allocator": "pinv"}, 16),
    ("bluerov2_station_keeping", {"allocator": "qp"}, 16),
    ("remus100_survey", {}, 1),
)


def main() -> None:
    """Run the cases and print (and optionally save) the figures."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--end", type=float, default=20.0, help="simulated seconds per run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    for name, variables, n in CASES:
        walls = []
        ticks = 0
        for _ in range(args.repeat):
            sets = {"time.end": args.end, "entities.0.count": n}
            sim = load_simulation(name, variables=variables, sets=sets)
            t0 = time.perf_counter()
            r = sim.run()
            walls.append(time.perf_counter() - t0)
            ticks = len(r.t) - 1
        wall = statistics.median(walls)
        row = {
            "scenario": name,
            "variables": variables,
            "vehicles": n,
            "simulated_s": args.end,
            "wall_s": wall,
            "realtime_factor": args.end / wall,
            "us_per_tick_per_vehicle": 1e6 * wall / ticks / n,
        }
        rows.append(row)
        print(
            f"{name:26s} {json.dumps(variables):22s} N={n:3d}  wall {wall:6.2f} s  "
            f"x{row['realtime_factor']:7.1f} real time  "
            f"{row['us_per_tick_per_vehicle']:8.0f} us/tick/vehicle"
        )
    if args.json is not None:
        args.json.write_text(
            json.dumps({"platform": platform.platform(), "cases": rows}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
