"""Streaming logs at scale: peak memory, cost of the outputs, CSV writer, ensemble figures.

A fleet of N ``usm`` vehicles (waypoints autonomy + heading/speed/depth PID, 32 logged columns)
is run in child processes, each measured on its own (``os.wait4`` gives the child's wall time
and peak RSS):

* ``sim alone``: ``Simulation.run()`` with the recorder streaming into a sink that drops every
  chunk (no file, no figure) — the baseline;
* ``marinesim run``: the whole command with its default outputs (streamed Parquet log,
  manifest, events, PNG trajectory and time-series figures);
* ``marinesim run --format both``: the same plus the CSV log.

Ratios (wall and CPU time) are taken against the baseline measured in the same run; on a
shared machine the CPU-time ratio is the steadier one, while the wall-time ratio gains from
the log being encoded on a second core.  The CSV writer is compared
with a per-value Python formatter (what the writer did before, rebuilt here as the baseline) on
the same table, and each default figure is timed on the streamed log at N vehicles.

Usage::

    python benchmarks/bench_logs.py [--n 1000] [--duration 3600] [--json FILE]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
marinesim: 1
name: bench_logs
seed: 1
time: {{dt: 0.2, end: {end}}}
entities:
  - name: usv
    count: {n}
    spawn: {{spread: {{north: 200.0, east: 200.0, heading_deg: 180.0}}, speed: 1.5}}
    motion: {{plugin: usm}}
    controllers:
      - {{name: pid, plugin: heading_speed_depth_pid}}
    autonomy:
      - name: survey
        plugin: waypoints
        params:
          lawnmower: {{north: 0.0, east: 0.0, length: 300.0, width: 240.0, spacing: 40.0,
                      split: false}}
          speed: 2.0
          repeat: 1000
"""

SIM_ALONE = """\
import sys, time
from marinesim.scenario import load_simulation
class Drop:
    def write(self, chunk):
        chunk.done()
sim = load_simulation(sys.argv[1])
sim._recorder.sink = Drop()
t0 = time.perf_counter()
res = sim.run()
print(time.perf_counter() - t0)
"""


def _child(cmd: list[str]) -> dict:
    """Run ``cmd``; return its wall and CPU time [s], peak RSS [MB] and stdout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd} failed: {err[-2000:]}")
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "out": out,
    }


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover
        return None


def _csv_writers(rows: int = 200_000) -> dict:
    """The vectorised CSV writer against per-value Python formatting, same table."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(0)
    cols = {"entity": np.array([f"usv[{i % 1000}]" for i in range(rows)], dtype=object)}
    cols.update({f"c{j}": rng.normal(size=rows) * 100 for j in range(12)})
    table = pa.table({k: (v.tolist() if v.dtype == object else v) for k, v in cols.items()})
    t0 = time.perf_counter()
    buf = io.BytesIO()
    pcsv.write_csv(table, buf, pcsv.WriteOptions(include_header=False, quoting_style="needed"))
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    sio = io.StringIO()
    w = csv.writer(sio)
    arrays = list(cols.values())
    for i in range(rows):
        w.writerow([repr(float(a[i])) if a.dtype != object else a[i] for a in arrays])
    slow = time.perf_counter() - t0
    return {
        "rows": rows,
        "columns": len(cols),
        "arrow_s": round(fast, 3),
        "python_per_value_s": round(slow, 3),
        "speedup": round(slow / fast, 1),
    }


def _figures(rundir: Path) -> dict:
    import matplotlib.pyplot as plt

    from marinesim.io.log import load_run
    from marinesim.io.plots import timeseries_figure, trajectory_figure

    res = load_run(rundir)
    out = {}
    for name, fn in (("trajectory", trajectory_figure), ("timeseries", timeseries_figure)):
        t0 = time.perf_counter()
        fig = fn(res)
        fig.savefig(rundir / f"bench_{name}.png")
        plt.close(fig)
        out[f"{name}_s"] = round(time.perf_counter() - t0, 3)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="vehicles")
    ap.add_argument("--duration", type=float, default=3600.0, help="simulated time [s]")
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_logs.json"
    )
    args = ap.parse_args(argv)
    exe = [sys.executable, "-m", "marinesim.cli.main"]
    res: dict = {
        "vehicles": args.n,
        "duration_s": args.duration,
        "dt_s": 0.2,
        "platform": platform.platform(),
        "load_average_start": _load(),
    }
    with tempfile.TemporaryDirectory(prefix="bench_logs_") as tmp:
        d = Path(tmp)
        scen = d / "fleet.yaml"
        scen.write_text(SCENARIO.format(n=args.n, end=args.duration), encoding="utf-8")
        alone = _child([sys.executable, "-c", SIM_ALONE, str(scen)])
        alone["sim_s"] = round(float(alone.pop("out").strip().splitlines()[-1]), 3)
        res["sim_alone"] = alone
        run = _child([*exe, "run", str(scen), "-o", str(d / "run"), "--no-progress"])
        run.pop("out")
        size = sum(p.stat().st_size for p in (d / "run" / "log.parquet").glob("*.parquet"))
        run["parquet_mb"] = round(size / 2**20, 1)
        run["ratio_to_sim_alone"] = round(run["wall_s"] / alone["wall_s"], 3)
        run["cpu_ratio_to_sim_alone"] = round(run["cpu_s"] / alone["cpu_s"], 3)
        res["marinesim_run_default"] = run
        res["figures_at_n"] = _figures(d / "run")
        # the CSV variant at most 600 s simulated (the CSV of an hour is ~4.5 GB)
        short = min(args.duration, 600.0)
        scen2 = d / "fleet_short.yaml"
        scen2.write_text(SCENARIO.format(n=args.n, end=short), encoding="utf-8")
        alone2 = _child([sys.executable, "-c", SIM_ALONE, str(scen2)])
        alone2.pop("out")
        both = _child(
            [*exe, "run", str(scen2), "-o", str(d / "both"), "--no-progress", "--format", "both"]
        )
        both.pop("out")
        both["duration_s"] = short
        both["csv_mb"] = round((d / "both" / "log.csv").stat().st_size / 2**20, 1)
        both["sim_alone_wall_s"] = alone2["wall_s"]
        both["ratio_to_sim_alone"] = round(both["wall_s"] / alone2["wall_s"], 3)
        both["cpu_ratio_to_sim_alone"] = round(both["cpu_s"] / alone2["cpu_s"], 3)
        res["marinesim_run_csv_and_parquet"] = both
    res["csv_writer"] = _csv_writers()
    res["load_average_end"] = _load()
    print(json.dumps(res, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return res


if __name__ == "__main__":
    main()
