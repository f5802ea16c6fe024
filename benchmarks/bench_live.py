"""What ``--live`` costs a run nobody watches, and what ``--format mcap`` costs.

The same fleet scenario (N ``usm`` vehicles on waypoints + PID, ``dt`` 0.2 s, unpaced) is run in
this process, interleaved, ``--reps`` times each:

* ``parquet``: ``stream_to(dir, "parquet")`` — the baseline (the default ``marinesim run`` log);
* ``live, no client``: the same plus the Foxglove WebSocket server of ``--live``
  (:func:`marinesim.io.mcap.live.attach_live` on a free loopback port, channels advertised),
  with no client connected — unpaced, so that any cost shows (``--live`` itself paces at
  real time, which would hide it);
* ``mcap``: ``stream_to(dir, "mcap")`` — the Parquet log and ``log.mcap``.

Reported: median wall and CPU (process) time of each, and their ratios to the baseline measured
in the same run.

Usage::

    python benchmarks/bench_live.py [--n 20] [--duration 600] [--reps 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_report  # noqa: E402
from bench_logs import SCENARIO as _FLEET  # noqa: E402  (the same fleet as the log benchmark)

# The log benchmark's fleet with a datum, so that the live channels include the map's fixes.
SCENARIO = _FLEET.replace("name: bench_logs", "name: bench_live").replace(
    "time: {{dt: 0.2, end: {end}}}\n",
    "time: {{dt: 0.2, end: {end}}}\norigin: {{latitude_deg: 42.358456, longitude_deg: -71.087589}}\n",
)


def _one(path: Path, mode: str, out: Path) -> tuple[float, float, int]:
    from marinesim.io.mcap.live import attach_live
    from marinesim.scenario import load_simulation

    sim = load_simulation(str(path))
    live = None
    sim.stream_to(out, "parquet" if mode == "live" else mode)
    if mode == "live":
        live = attach_live(sim, port=0)
        sim.clock.time_warp = 0.0  # unpaced, so that any cost of the server shows
    w0, c0 = time.perf_counter(), time.process_time()
    res = sim.run()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert res.status == "completed"
    if live is not None:
        assert live.published == 0 and live.skipped_chunks > 0
    return wall, cpu, len(res.t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="vehicles")
    ap.add_argument("--duration", type=float, default=600.0, help="simulated time [s]")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "bench_live.yaml"
        scen.write_text(SCENARIO.format(n=args.n, end=args.duration))
        _one(scen, "parquet", Path(tmp) / "warm")  # imports, compiled kernels
        times: dict[str, list[tuple[float, float]]] = {"parquet": [], "live": [], "mcap": []}
        frames = 0
        for rep in range(args.reps):
            for mode in times:
                wall, cpu, frames = _one(scen, mode, Path(tmp) / f"{mode}{rep}")
                times[mode].append((wall, cpu))
        mcap_bytes = (Path(tmp) / "mcap0" / "log.mcap").stat().st_size
    med = {
        m: {
            "wall_s": statistics.median(w for w, _ in v),
            "cpu_s": statistics.median(c for _, c in v),
        }
        for m, v in times.items()
    }
    base = med["parquet"]
    results = {
        "vehicles": args.n,
        "frames": frames,
        "reps": args.reps,
        "median": med,
        "ratio_live_no_client": {
            "wall": med["live"]["wall_s"] / base["wall_s"],
            "cpu": med["live"]["cpu_s"] / base["cpu_s"],
        },
        "ratio_mcap": {
            "wall": med["mcap"]["wall_s"] / base["wall_s"],
            "cpu": med["mcap"]["cpu_s"] / base["cpu_s"],
        },
        "mcap_bytes": mcap_bytes,
    }
    for m, v in med.items():
        print(f"{m:8s} wall {v['wall_s']:.3f} s  cpu {v['cpu_s']:.3f} s")
    print(
        f"live, no client / parquet: wall {results['ratio_live_no_client']['wall']:.3f}, "
        f"cpu {results['ratio_live_no_client']['cpu']:.3f}"
    )
    print(
        f"mcap / parquet: wall {results['ratio_mcap']['wall']:.3f}, "
        f"cpu {results['ratio_mcap']['cpu']:.3f}  ({mcap_bytes / 1e6:.1f} MB)"
    )
    cmd = f"python benchmarks/bench_live.py --n {args.n} --duration {args.duration:g} --reps {args.reps}"
    write_report("bench_live", cmd, results, args.json)


if __name__ == "__main__":
    main()
