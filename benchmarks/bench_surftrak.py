"""SURFTRAK harness speed: a 150 s sawtooth run (400 Hz, 60 000 ticks) and its real-time factor.

Every row runs on the engine (``run_surftrak`` builds the harness block: ``sitl_vertical`` +
``rangefinder`` + ``surftrak``).  Measured in the same run:

* ``baseline`` — a bare 400 Hz loop of the ``sitl_vertical`` heave model alone (no autopilot,
  no sensor), the floor any closed-loop run of this vehicle pays in Python;
* ``surftrak N=1 plugin ticks`` — the full harness (rangefinder injection, backend/health/
  filter, SURFTRAK, AC_PosControl z, motors, detector, CTUN logging) for one vehicle, every
  tick through the engine's plugins (``jit=False``);
* ``surftrak N=1 compiled span`` — the same engine ticks in the tick generated from the three
  plugins' declared laws (:mod:`marinesim.engine.plugins.surftrak_laws`, ``jit=True``, same
  control-law functions, bit-identical logs): warm (best of ``--repeat``), and the first call of a fresh process
  with an empty numba cache (compilation) and with the cache filled;
* ``bundled scenario`` — ``marinesim.run("surftrak_sawtooth")``: the same compiled tick with
  every tick recorded (the scenario keeps no ``log_rate``);
* ``surftrak N=n`` — the compiled tick over n vehicles (one core: the generated loop is serial),
  aggregate real-time factor (vehicles × simulated seconds / wall seconds).

Usage::

    python benchmarks/bench_surftrak.py [--duration 150] [--n 512] [--cpu] [--json]

The compiled rows need numba (skipped with a note otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
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

_FIRST_CALL = """
import json, time
from marinesim.interop.surftrak_runner import run_surftrak
clock = time.process_time if {cpu} else time.perf_counter
t0 = clock()
run_surftrak("sawtooth", duration={dur}, seed=1, jit=True)
print(json.dumps(clock() - t0))
"""


def first_call(duration: float, cache_dir: str) -> float:
    """Time (s) of the first compiled run in a fresh process (numba cache in ``cache_dir``)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, MARINESIM_CACHE_DIR=cache_dir)
    code = _FIRST_CALL.format(cpu=CPU, dur=duration)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def have_numba() -> bool:
    """True when numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


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
    one = best(lambda: run_surftrak("sawtooth", duration=dur, seed=1, jit=False), a.repeat)
    res: dict[str, float | int | None] = {
        "duration_s": dur,
        "baseline_heave_loop_s": base,
        "surftrak_n1_s": one,
        "surftrak_n1_realtime_factor": dur / one,
        "surftrak_n1_vs_baseline": one / base,
        "surftrak_n1_compiled_s": None,
    }
    if have_numba():
        with tempfile.TemporaryDirectory() as cache:
            cold = first_call(dur, cache)  # compiles and fills the cache
            cached = first_call(dur, cache)  # loads the compiled code
        run_surftrak("sawtooth", duration=1.0, seed=1, jit=True)  # compile/load in this process
        warm = best(lambda: run_surftrak("sawtooth", duration=dur, seed=1, jit=True), a.repeat)
        import marinesim

        scen = best(lambda: marinesim.run("surftrak_sawtooth", end=dur), a.repeat)
        res.update(
            bundled_scenario_s=scen,
            surftrak_n1_compiled_s=warm,
            surftrak_n1_compiled_realtime_factor=dur / warm,
            surftrak_n1_compiled_speedup=one / warm,
            surftrak_n1_compiled_first_call_cold_cache_s=cold,
            surftrak_n1_compiled_first_call_cached_s=cached,
        )
    many = best(lambda: run_surftrak("sawtooth", duration=dur, seed=1, n=a.n), 1)
    res.update(
        n=a.n,
        surftrak_batch_s=many,
        surftrak_batch_aggregate_realtime_factor=a.n * dur / many,
    )
    if a.json:
        print(json.dumps(res, indent=2))
        return
    what = "CPU time" if a.cpu else "wall time"
    print(f"{dur:g} s sawtooth harness, {int(dur / 0.0025)} loops at 400 Hz ({what})")
    print(f"  baseline (bare heave loop)     {base:8.3f} s  ({dur / base:8.0f}x real time)")
    print(f"  surftrak N=1 plugin ticks      {one:8.3f} s  ({dur / one:8.0f}x real time, "
          f"{one / base:.1f}x the baseline)")  # fmt: skip
    if res["surftrak_n1_compiled_s"] is None:
        print("  surftrak N=1 compiled span     (numba not installed)")
    else:
        w = float(res["surftrak_n1_compiled_s"])
        print(f"  surftrak N=1 compiled, warm    {w:8.3f} s  ({dur / w:8.0f}x real time, "
              f"{one / w:.0f}x the plugin ticks)")  # fmt: skip
        sc = float(res["bundled_scenario_s"])
        print(f"  bundled scenario (every frame) {sc:8.3f} s  ({dur / sc:8.0f}x real time)")
        print(f"    first call, empty cache      {res['surftrak_n1_compiled_first_call_cold_cache_s']:8.3f} s"
              "  (numba compiles; includes the run)")  # fmt: skip
        print(f"    first call, cache filled     {res['surftrak_n1_compiled_first_call_cached_s']:8.3f} s"
              "  (loads the compiled code; includes the run)")  # fmt: skip
    print(f"  surftrak N={a.n:<5d} (batched)    {many:8.3f} s  "
          f"({a.n * dur / many:8.0f}x real time, aggregate)")  # fmt: skip


if __name__ == "__main__":
    main()
