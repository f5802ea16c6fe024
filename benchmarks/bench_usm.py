"""Throughput of the batched uSimMarine model (``usm``) against a per-vehicle loop.

For N = 1, 100, 10 000 and 100 000 vehicles, two figures per size:

* ``mail + iterate``: each step delivers one ``DESIRED_THRUST`` and one ``DESIRED_RUDDER``
  value per vehicle (``apply_mail``, rudder rate limit on) and runs one ``iterate``
  (propagation and publications; no datum, so no lat/long projection);
* ``iterate only``: the actuators are held and each step is one ``iterate`` (mail-free).

The baseline is a plain Python loop over vehicles calling the same functions on N = 1 states,
measured in the same process (architecture §5).  The machine is shared, so each figure is the
best of ``--repeat`` measurements (each itself the best of 3 interleaved rounds), and the load
average is recorded next to it.

Usage::

    python benchmarks/bench_usm.py [--repeat 3] [--sizes 1,100,10000,100000]
                                   [--json benchmarks/results/bench_usm.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _report import load_average as _load
from _report import write_report
from marinesim.models.usm import measure_throughput

SIZES = (1, 100, 10_000, 100_000)


def _steps_for(n: int) -> int:
    return int(min(600, max(15, 3_000_000 // (n * 10))))



def main(argv: list[str] | None = None) -> dict:
    """Run the table; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_usm.json"
    )
    args = ap.parse_args(argv)
    sizes = [int(v) for v in args.sizes.split(",") if v.strip()]
    rows = []
    for n in sizes:
        row: dict = {"vehicles": n, "steps": None, "load_average": _load()}
        for mail in (True, False):
            runs = [
                measure_throughput(n, _steps_for(n), loop=True, mail=mail)
                for _ in range(args.repeat)
            ]
            key = "mail" if mail else "iterate_only"
            rate = max(r["vehicle_steps_per_s"] for r in runs)
            loop = max(r["loop_vehicle_steps_per_s"] for r in runs)
            row["steps"] = runs[0]["steps"]
            row[f"{key}_vehicle_steps_per_s"] = rate
            row[f"{key}_loop_vehicle_steps_per_s"] = loop
            row[f"{key}_ratio"] = rate / loop
        # the headline figure: with mail, as `marinesim bench usm` prints it
        row["vehicle_steps_per_s"] = row["mail_vehicle_steps_per_s"]
        row["loop_vehicle_steps_per_s"] = row["mail_loop_vehicle_steps_per_s"]
        row["ratio"] = row["mail_ratio"]
        rows.append(row)
        print(
            f"N={n:>7}  mail+iterate {row['mail_vehicle_steps_per_s']:10.4g}/s "
            f"(loop {row['mail_loop_vehicle_steps_per_s']:8.4g}, "
            f"{row['mail_ratio']:8.3g}x)   iterate only "
            f"{row['iterate_only_vehicle_steps_per_s']:10.4g}/s "
            f"(loop {row['iterate_only_loop_vehicle_steps_per_s']:8.4g}, "
            f"{row['iterate_only_ratio']:8.3g}x)   load {row['load_average']}",
            flush=True,
        )
    return write_report(
        "usm iterate (+ mail), batched vs per-vehicle loop, best of repeats",
        "python benchmarks/bench_usm.py",
        rows,
        args.json,
    )


if __name__ == "__main__":
    main()
