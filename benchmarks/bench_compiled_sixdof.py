"""``bluerov2_station_keeping`` through the generated tick: real-time factor and per-call cost.

One BlueROV2 Heavy (station keeping → ``pinv`` allocation → 8 T200 + battery → Fossen 6-DOF,
rk4, 2 substeps per 50 ms tick), warm (the compiled tick loaded from numba's disk cache by a
short run first), in this process:

* ``run``: ``Simulation.run()`` of ``--end`` simulated seconds, compiled (the default route)
  and through the plugins (``compiled = False``, as ``MARINESIM_JIT=0``): wall time and
  simulated seconds per wall second (the issue's aim: ≥ 1000× real time);
* ``per_tick``: µs per tick when the compiled route runs **one tick per call** (what a
  lock-step peer such as ArduSub SITL asks for: one tick per frame), against one plugin tick
  (``Simulation.step(1)`` with ``compiled = False``), against ``Simulation.step(1)`` on the
  compiled route (``step_one_tick_us``: the state stays in the compiled arrays between calls,
  the bookkeeping is deferred to one chunk) and against the long calls of ``run``.

Usage::

    python benchmarks/bench_compiled_sixdof.py [--end 60] [--repeat 3] [--calls 400] [--json PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _report import load_average as _load
from _report import write_report
from marinesim.engine.span import find_span
from marinesim.scenario.build import load_simulation

NAME = "bluerov2_station_keeping"



def _run(end: float, compiled: bool | None) -> tuple[float, int]:
    sim = load_simulation(NAME, sets={"time.end": end})
    sim.compiled = compiled
    t0 = time.perf_counter()
    res = sim.run()
    return time.perf_counter() - t0, int(res.manifest.get("compiled_ticks", 0))


def _one_tick_calls(calls: int) -> dict[str, float]:
    """µs per tick: compiled one tick per call, and the plugins' tick (``step(1)``)."""
    sim = load_simulation(NAME, sets={"time.end": 1e6})
    sim.compiled = False  # its own step() on the plugins' ticks; the span below is separate
    sim.step(2)  # started; every plugin has run a tick (their state is loadable)
    span = find_span(sim, True)
    assert span is not None
    k = sim.clock.k
    span.run(k, k + 1)  # loaded and typed
    k = sim.clock.k
    t0 = time.perf_counter()
    for _ in range(calls):
        k1 = span.run(k, k + 1)
        if k1 != k + 1:  # handed back: the plugins' tick
            sim.step(1)
        k = sim.clock.k
    compiled = (time.perf_counter() - t0) / calls
    t0 = time.perf_counter()
    sim.step(calls)
    python = (time.perf_counter() - t0) / calls
    lean = load_simulation(NAME, sets={"time.end": 1e6})  # Simulation.step(1), compiled:
    lean.step(2)  # the bookkeeping of consecutive calls deferred (an externally clocked run)
    t0 = time.perf_counter()
    for _ in range(calls):
        lean.step(1)
    lean.flush()
    stepped = (time.perf_counter() - t0) / calls
    return {"compiled_one_tick_per_call_us": compiled * 1e6, "plugin_tick_us": python * 1e6,
            "step_one_tick_us": stepped * 1e6}  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    """Run the measurement; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--end", type=float, default=60.0, help="simulated seconds per run")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--calls", type=int, default=400, help="one-tick calls to time")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    load0 = _load()
    _run(2.0, None)  # warm: the compiled tick loaded (compiled on a first use)
    comp = min(_run(args.end, None) for _ in range(args.repeat))
    py = min(_run(args.end, False) for _ in range(args.repeat))
    dt = 0.05
    per = _one_tick_calls(args.calls)
    per["compiled_long_calls_us"] = comp[0] / (args.end / dt) * 1e6
    rows = {
        "compiled_wall_s": comp[0],
        "python_wall_s": py[0],
        "compiled_ticks": comp[1],
        "real_time_factor_compiled": args.end / comp[0],
        "real_time_factor_python": args.end / py[0],
        "ratio_python_over_compiled": py[0] / comp[0],
        "per_tick": per,
    }
    print(f"{NAME}: {args.end:g} s simulated  compiled {comp[0]:.3f} s "
          f"({args.end / comp[0]:.0f}x real time, {comp[1]} ticks compiled)  "
          f"python {py[0]:.3f} s ({args.end / py[0]:.1f}x)  ratio {py[0] / comp[0]:.1f}x")  # fmt: skip
    print("µs per tick: " + "  ".join(f"{k} {v:.1f}" for k, v in per.items()))
    result = {"scenario": NAME, "simulated_s": args.end, **rows, "load_average": [load0, _load()]}
    cmd = "python benchmarks/bench_compiled_sixdof.py " + " ".join(argv or [])
    return write_report("compiled_sixdof", cmd.strip(), result, args.json)


if __name__ == "__main__":
    main()
