"""Throughput of the batched uSimMarine model (``usm``) against a per-vehicle loop.

For N = 1, 100, 10 000 and 100 000 vehicles, each step delivers one ``DESIRED_THRUST`` and
one ``DESIRED_RUDDER`` value per vehicle (``apply_mail``) and runs one ``iterate`` (propagation
and publications; no datum, so no lat/long projection).  The baseline is a plain Python loop
over vehicles calling the same functions on N = 1 states, measured in the same run
(architecture §5).  Each figure is the median of ``--repeat`` repetitions.

Usage::

    python benchmarks/bench_usm.py [--repeat 3] [--json benchmarks/results/bench_usm.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from pathlib import Path

from marinesim.models.kinematic import measure_throughput

SIZES = (1, 100, 10_000, 100_000)


def _steps_for(n: int) -> int:
    return int(min(600, max(9, 3_000_000 // (n * 10))))


def main(argv: list[str] | None = None) -> dict:
    """Run the table; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_usm.json"
    )
    args = ap.parse_args(argv)
    rows = []
    for n in SIZES:
        runs = [measure_throughput(n, _steps_for(n), loop=True) for _ in range(args.repeat)]
        rate = statistics.median(r["vehicle_steps_per_s"] for r in runs)
        loop = statistics.median(r["loop_vehicle_steps_per_s"] for r in runs)
        rows.append(
            {
                "vehicles": n,
                "steps": runs[0]["steps"],
                "vehicle_steps_per_s": rate,
                "loop_vehicle_steps_per_s": loop,
                "ratio": rate / loop,
            }
        )
        print(
            f"N={n:>7}  {rate:12.4g} vehicle-steps/s   loop {loop:10.4g}   ratio {rate / loop:8.3g}x",
            flush=True,
        )
    out = {
        "benchmark": "usm iterate + mail, batched vs per-vehicle loop",
        "command": "python benchmarks/bench_usm.py",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "results": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2))
    print(f"written {args.json}")
    return out


if __name__ == "__main__":
    main()
