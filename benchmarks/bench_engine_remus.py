"""One REMUS 100 closed loop in the engine against PythonVehicleSimulator's loop (issue 10 §3).

Three rates of simulated seconds per wall-clock second, the first two measured in this process:

* ``engine`` — the bundled ``remus100_survey`` scenario (waypoints → PythonVehicleSimulator
  depth/heading autopilot at 10 Hz → the exact REMUS 100 model at 50 Hz, 5 substeps per tick,
  with the recorder), ``Simulation.run()`` as ``marinesim run`` calls it, without the process
  start and the output files;
* ``loop`` — a plain Python loop of the same model and autopilot in PythonVehicleSimulator's
  loop semantics (:func:`marinesim.reference.pvs.simulate`: controller and model step every
  0.02 s, the same compiled functions the engine calls);
* ``pvs`` — PythonVehicleSimulator's own bare loop as recorded in
  ``../shared/reference/pvs/manifest.json`` (``timing``, remus100 depthHeadingAutopilot,
  N = 10000 steps of 0.02 s), when that folder is present.

Each figure is the best of ``--repeat`` runs (the machine is shared); the engine's CPU time
is reported too.  The issue's aim is engine/pvs ≥ 5.

Usage::

    python benchmarks/bench_engine_remus.py [--end 120] [--repeat 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _report import load_average as _load
from _report import write_report
from marinesim.reference import pvs as pvs_reference
from marinesim.scenario import load_simulation

_PVS_MANIFEST = (
    Path(__file__).resolve().parents[2] / "shared" / "reference" / "pvs" / "manifest.json"
)
_PVS_KEY = (
    "remus100 depthHeadingAutopilot (main.py #9)",
    "bare loop (preallocated storage), N=10000",
)
_H = 0.02  # s, PythonVehicleSimulator's sample time



def engine_rate(end: float) -> tuple[float, float, int]:
    """(wall s, CPU s, ticks) of one ``remus100_survey`` run of ``end`` simulated seconds."""
    sim = load_simulation("remus100_survey", sets={"time.end": end})
    sim.step(1)  # first tick: compiled kernels loaded, first messages
    t0, c0 = time.perf_counter(), time.process_time()
    res = sim.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, len(res.t) - 2


def loop_rate(end: float) -> tuple[float, float, int]:
    """(wall s, CPU s, steps) of the plain Python loop of the same model over ``end`` seconds."""
    steps = int(round(end / _H))
    constructor = "remus100('depthHeadingAutopilot')"
    pvs_reference.simulate(constructor, 10, _H)  # warm-up (compiled kernels loaded)
    t0, c0 = time.perf_counter(), time.process_time()
    pvs_reference.simulate(constructor, steps, _H)
    return time.perf_counter() - t0, time.process_time() - c0, steps


def recorded_pvs_steps_per_s() -> float | None:
    """PythonVehicleSimulator's recorded bare-loop speed [steps/s], or None without ../shared."""
    if not _PVS_MANIFEST.is_file():
        return None
    timing = json.loads(_PVS_MANIFEST.read_text())["timing"]["results"]
    return float(timing[_PVS_KEY[0]][_PVS_KEY[1]]["steps_per_s_median"])


def main(argv: list[str] | None = None) -> dict:
    """Run the measurement; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--end", type=float, default=120.0, help="simulated seconds per run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    load0 = _load()
    eng = [engine_rate(args.end) for _ in range(args.repeat)]
    wall, cpu, ticks = min(eng, key=lambda r: r[0])
    loop = [loop_rate(args.end) for _ in range(args.repeat)]
    lwall, _c, steps = min(loop, key=lambda r: r[0])
    cpu = min(r[1] for r in eng)
    lcpu = min(r[1] for r in loop)
    dt = 0.1
    engine_sim_rate = ticks * dt / wall
    loop_sim_rate = steps * _H / lwall
    pvs = recorded_pvs_steps_per_s()
    pvs_sim_rate = None if pvs is None else pvs * _H
    result = {
        "simulated_s": args.end,
        "engine_us_per_tick": 1e6 * wall / ticks,
        "engine_cpu_us_per_tick": 1e6 * cpu / ticks,
        "engine_sim_s_per_wall_s": engine_sim_rate,
        "loop_us_per_step": 1e6 * lwall / steps,
        "loop_sim_s_per_wall_s": loop_sim_rate,
        "loop_cpu_us_per_step": 1e6 * lcpu / steps,
        "pvs_recorded_steps_per_s": pvs,
        "pvs_sim_s_per_wall_s": pvs_sim_rate,
        "ratio_engine_vs_loop": engine_sim_rate / loop_sim_rate,
        "ratio_engine_vs_pvs": None if pvs_sim_rate is None else engine_sim_rate / pvs_sim_rate,
        # the same in CPU time (a shared machine slows wall time, not CPU time)
        "ratio_engine_vs_loop_cpu": (ticks * dt / cpu) / (steps * _H / lcpu),
        "ratio_engine_cpu_vs_pvs": None
        if pvs_sim_rate is None
        else ticks * dt / cpu / pvs_sim_rate,
        "load_average": [load0, _load()],
    }
    pv = (
        "no ../shared: PVS's recorded timing not available"
        if pvs_sim_rate is None
        else f"PVS recorded {pvs_sim_rate:.0f} sim-s/s -> {result['ratio_engine_vs_pvs']:.2f}x PVS "
        f"({result['ratio_engine_cpu_vs_pvs']:.2f}x with the engine's CPU time)"
    )
    print(
        f"REMUS 100 closed loop: engine {result['engine_us_per_tick']:.0f} us/tick "
        f"({result['engine_cpu_us_per_tick']:.0f} us CPU) = {engine_sim_rate:.0f} sim-s/s; "
        f"plain loop {result['loop_us_per_step']:.0f} us/step = {loop_sim_rate:.0f} sim-s/s "
        f"({result['ratio_engine_vs_loop']:.2f}x; in CPU time "
        f"{result['ratio_engine_vs_loop_cpu']:.2f}x); {pv}; load {result['load_average']}",
        flush=True,
    )
    return write_report(
        "one REMUS 100 closed loop: engine vs plain loop vs PVS's recorded loop",
        "python benchmarks/bench_engine_remus.py",
        result,
        args.json,
    )


if __name__ == "__main__":
    main()
