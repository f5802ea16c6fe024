"""Engine fixed cost per tick: one vehicle, three plugins, against the bare model step.

Measures in one process (:func:`marinesim.engine.speed.measure_tick_cost`):

* the tick of one vehicle whose three plugins (motion, controller, autonomy) do nothing — the
  engine's own fixed cost per tick (issue 10 aim: ≤ 50 µs);
* the tick of one ``usm`` vehicle with ``heading_speed_depth_pid`` and ``waypoints``, split
  into the time inside the plugins' hooks and the rest (the engine around them);
* the bare ``usm`` model step of the same vehicle (three commands mailed, one iterate),
  the baseline the tick is compared with.

The machine is shared, so each figure is the best of ``--repeat`` measurements (each itself
the best of ``--rounds`` rounds), with the load average recorded next to it.

Usage::

    python benchmarks/bench_engine.py [--ticks 2000] [--rounds 3] [--repeat 3] [--cpu]
                                      [--json benchmarks/results/bench_engine.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _report import load_average as _load
from _report import write_report
from marinesim.engine.speed import measure_tick_cost


def main(argv: list[str] | None = None) -> dict:
    """Run the measurement; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpu", action="store_true", help="time with CPU time, not wall time")
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_engine.json"
    )
    args = ap.parse_args(argv)
    load0 = _load()
    runs = [measure_tick_cost(args.ticks, args.rounds, cpu=args.cpu) for _ in range(args.repeat)]
    best = min(runs, key=lambda r: r["usm_us_per_tick"])
    result = dict(best)
    result["engine_us_per_tick"] = min(r["engine_us_per_tick"] for r in runs)
    result["model_step_us"] = min(r["model_step_us"] for r in runs)
    result["usm_tick_over_model_step"] = result["usm_us_per_tick"] / result["model_step_us"]
    result["load_average"] = [load0, _load()]
    print(
        f"engine fixed cost {result['engine_us_per_tick']:.1f} us/tick (1 vehicle, 3 empty "
        f"plugins); usm + pid + waypoints {result['usm_us_per_tick']:.1f} us/tick "
        f"(hooks {result['usm_hooks_us_per_tick']:.1f}, engine "
        f"{result['usm_engine_us_per_tick']:.1f}); bare model step "
        f"{result['model_step_us']:.1f} us; tick/step "
        f"{result['usm_tick_over_model_step']:.2f}x ({result['clock']} time); "
        f"load {result['load_average']}",
        flush=True,
    )
    return write_report(
        "engine fixed cost per tick vs the bare usm model step, best of repeats",
        "python benchmarks/bench_engine.py" + (" --cpu" if args.cpu else ""),
        result,
        args.json,
    )


if __name__ == "__main__":
    main()
