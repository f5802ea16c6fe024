"""SURFTRAK harness speed: a 150 s sawtooth run (400 Hz, 60 000 loops) and its real-time factor.

Measured in the same run:

* ``baseline`` — a bare 400 Hz loop of the ``sitl_vertical`` heave model alone (no autopilot,
  no sensor), the floor any closed-loop run of this vehicle pays in Python;
* ``surftrak N=1`` — the full harness (rangefinder injection, backend/health/filter, SURFTRAK,
  AC_PosControl z, motors, detector, CTUN logging) for one vehicle (Python floats);
* ``surftrak N=n`` — the same code on (N,) arrays, aggregate real-time factor
  (vehicles × simulated seconds / wall seconds).

Usage::

    python benchmarks/bench_surftrak.py [--duration 150] [--n 512] [--cpu] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from marinesim.interop.surftrak_runner import run_surftrak
from marinesim.models.heave import HeaveParams, step_zv


def bare_heave_loop(duration: float) -> float:
    """Wall time (s) of the heave model alone for ``duration`` s at 400 Hz."""
    p = HeaveParams()
    z, v = -11.15, 0.0
    thrust = p.hover_thrust
    clock = time.process_time if CPU else time.perf_counter
    t0 = clock()
    for _ in range(int(round(duration / 0.0025))):
        z, v, _ = step_zv(p, z, v, thrust, -20.0, 0.0025)
    return clock() - t0


def best(fn, repeat: int) -> float:  # noqa: ANN001
    """Best of ``repeat`` times (s): wall clock, or process CPU time with ``--cpu``."""
    clock = time.process_time if CPU else time.perf_counter
    out = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return min(out)


CPU = False


def main() -> None:
    """Run the benchmark and print a table (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=150.0)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="process CPU time (shared machines)")
    a = ap.parse_args()
    global CPU
    CPU = a.cpu
    dur = a.duration
    base = best(lambda: bare_heave_loop(dur), a.repeat)
    one = best(lambda: run_surftrak("sawtooth", duration=dur, seed=1), a.repeat)
    many = best(lambda: run_surftrak("sawtooth", duration=dur, seed=1, n=a.n), 1)
    res = {
        "duration_s": dur,
        "baseline_heave_loop_s": base,
        "surftrak_n1_s": one,
        "surftrak_n1_realtime_factor": dur / one,
        "surftrak_n1_vs_baseline": one / base,
        "n": a.n,
        "surftrak_batch_s": many,
        "surftrak_batch_aggregate_realtime_factor": a.n * dur / many,
    }
    if a.json:
        print(json.dumps(res, indent=2))
        return
    what = "CPU time" if a.cpu else "wall time"
    print(f"{dur:g} s sawtooth harness, {int(dur / 0.0025)} loops at 400 Hz ({what})")
    print(f"  baseline (bare heave loop)     {base:8.3f} s  ({dur / base:8.0f}x real time)")
    print(f"  surftrak N=1                   {one:8.3f} s  ({dur / one:8.0f}x real time, "
          f"{one / base:.1f}x the baseline)")  # fmt: skip
    print(f"  surftrak N={a.n:<5d} (batched)    {many:8.3f} s  "
          f"({a.n * dur / many:8.0f}x real time, aggregate)")  # fmt: skip


if __name__ == "__main__":
    main()
