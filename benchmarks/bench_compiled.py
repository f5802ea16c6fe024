"""Each bundled non-SITL scenario: the compiled route against the plugins' ticks (issue 19 §4).

For every bundled scenario that runs without a peer program, two runs of the same simulated
time in this process, warm (the compiled tick loaded from numba's cache by a short run
first): the default route (the tick generated from the plugins' declared laws where it
applies, :mod:`marinesim.engine.compiled`) and the plugin-by-plugin Python route
(``Simulation.compiled = False``, as ``MARINESIM_JIT=0``).  Reports the wall time of each,
their ratio and how many ticks ran compiled; a scenario whose plugins are not declared yet
shows ratio ≈ 1 and ``compiled_ticks`` 0.  The issue's aim is ≥ 10× for each.

``--cold``: also the first compiled run of each scenario in a fresh process with an empty
``MARINESIM_CACHE_DIR`` (the generated tick compiled from scratch; the models' own kernels
stay in numba's cache), 2 s simulated: ``cold_first_run_s`` (mostly compiling) against the
same run warm in that process (``warm_run_s``).  ``--fresh`` (with ``--cold``): numba's cache
empty as well (``NUMBA_CACHE_DIR``), as on a fresh install: the models' own kernels, which
the plugins run for the first ticks, compile in that run too.  ``--only fleet`` names the three
PythonVehicleSimulator fleet scenarios (tanker, torpedo, supply).  ``--set PATH=VALUE``
(repeatable, as ``marinesim run --set``) overrides every scenario run, e.g. the two-block
``bluerov2_thruster_failure`` with its second allocator on ``pinv`` (two blocks compiled
into one tick)::

    python benchmarks/bench_compiled.py --only bluerov2_thruster_failure \
        --set entities.1.controllers.1.params.mode=pinv

Usage::

    python benchmarks/bench_compiled.py [--end 30] [--repeat 2] [--only NAME ...] [--cold [--fresh]]
        [--set PATH=VALUE ...] [--var KEY=VALUE ...] [--json PATH]

``--set entities.1.controllers.1.params.mode=pinv`` overrides a scenario value (as ``marinesim
run --set``) and ``--var allocator=qp`` sets a scenario variable (here: the ``qp`` allocator of
``bluerov2_station_keeping``), in every run.

``--replicas R`` runs replicas 0 … R−1 stacked as the worlds of each simulation (as
``marinesim batch`` does) and reports the ticks at which the first and the last world ended;
with a spawn spread the worlds of ``demo_survey`` end apart, and the ticks between stay
compiled::

    python benchmarks/bench_compiled.py --only demo_survey --end 900 --replicas 125 \
        --set entities.survey.spawn.spread.north=60
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import load_average as _load
from _report import write_report
from marinesim.scenario import load_scenario
from marinesim.scenario.build import build_simulation, builtin_names, load_simulation

#: ``--only fleet``: the PythonVehicleSimulator fleet's bundled scenarios.
FLEET = ("tanker_heading_autopilot", "torpedo_depth_heading", "supply_dp_current")

_COLD = """
import json, sys, time
from marinesim.scenario.build import load_simulation
out = []
for _ in range(2):
    sim = load_simulation(sys.argv[1], variables=json.loads(sys.argv[2]), sets={"time.end": 2.0})
    sim.compiled = True
    t0 = time.perf_counter()
    sim.run()
    out.append(time.perf_counter() - t0)
print(json.dumps(out))
"""


def _cold(name: str, variables: dict[str, str] | None = None, fresh: bool = False) -> dict[str, float]:
    """The first compiled run with an empty tick cache (``fresh``: and an empty numba cache),
    in a fresh process (see the text)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MARINESIM_CACHE_DIR": tmp, "MARINESIM_QUIET": "1"}
        if fresh:
            env["NUMBA_CACHE_DIR"] = str(Path(tmp) / "numba")
        t0 = time.perf_counter()
        res = subprocess.run(
            [sys.executable, "-c", _COLD, name, json.dumps(variables)], env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        wall = time.perf_counter() - t0
    first, warm = json.loads(res.stdout.strip().splitlines()[-1])
    return {"cold_first_run_s": first, "warm_run_s": warm, "cold_process_wall_s": wall}



def _run(
    name: str,
    end: float,
    compiled: bool | None,
    sets: list[str],
    variables: dict[str, str] | None = None,
    replicas: int = 1,
) -> tuple[float, int, list[int]]:
    sc = load_scenario(name, variables=variables, sets=[*sets, f"time.end={end!r}"])
    sim = build_simulation(sc, replicas=list(range(replicas)) if replicas > 1 else None)
    sim.compiled = compiled
    t0 = time.perf_counter()
    res = sim.run()
    wall = time.perf_counter() - t0
    ends = (res.manifest.get("worlds") or {}).get("ended_tick") or [res.manifest["ended_tick"]]
    return wall, int(res.manifest.get("compiled_ticks", 0)), [int(k) for k in ends]


def main(argv: list[str] | None = None) -> dict:
    """Run the measurement; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--end", type=float, default=30.0, help="simulated seconds per run")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs")
    ap.add_argument("--only", nargs="*", default=None, help="scenario names (default: all)")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="override in every scenario (as marinesim run --set); repeatable")  # fmt: skip
    ap.add_argument("--cold", action="store_true", help="also the first run, empty tick cache")
    ap.add_argument("--fresh", action="store_true", help="with --cold: numba's cache empty too")
    ap.add_argument("--var", nargs="*", default=[], help="scenario variables KEY=VALUE")
    ap.add_argument("--replicas", type=int, default=1, help="stacked worlds per simulation")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    bad = [v for v in args.var if "=" not in v]
    if bad:
        ap.error(f"--var takes KEY=VALUE, got {bad[0]!r}")
    var = dict(v.split("=", 1) for v in args.var) or None
    load0 = _load()
    rows: dict[str, dict] = {}
    names = [x for n in args.only or builtin_names() for x in (FLEET if n == "fleet" else (n,))]
    for name in names:
        try:
            load_simulation(name, sets=args.set)
        except Exception as exc:  # noqa: BLE001 - SITL scenarios need their peer program
            rows[name] = {"skipped": str(exc).splitlines()[0][:120]}
            continue
        reps = args.replicas
        _run(name, min(args.end, 2.0), None, args.set, var, reps)  # warm: the tick loaded
        comp = [_run(name, args.end, None, args.set, var, reps) for _ in range(args.repeat)]
        py = [_run(name, args.end, False, args.set, var, reps) for _ in range(args.repeat)]
        wc, ticks, ends = min(comp)
        wp = min(w for w, _t, _e in py)
        rows[name] = {
            "compiled_wall_s": wc,
            "python_wall_s": wp,
            "ratio_python_over_compiled": wp / wc,
            "compiled_ticks": ticks,
            "ticks": max(ends),
            "sim_s_per_wall_s_compiled": args.end / wc,
        }
        if reps > 1:
            rows[name].update(replicas=reps, first_world_ended_tick=min(ends))
        print(f"{name:28s} compiled {wc:7.3f} s  python {wp:7.3f} s  "
              f"ratio {wp / wc:6.2f}x  compiled ticks {ticks} of {max(ends)}")  # fmt: skip
        if args.cold and ticks and not args.set:
            rows[name].update(_cold(name, var, args.fresh))
            what = "tick and numba caches" if args.fresh else "tick cache"
            print(f"{'':28s} cold: first compiled run {rows[name]['cold_first_run_s']:.1f} s "
                  f"(empty {what}; {rows[name]['warm_run_s']:.3f} s warm)")  # fmt: skip
    result = {"simulated_s": args.end, "scenarios": rows, "load_average": [load0, _load()],
              "fresh": bool(args.cold and args.fresh)}  # fmt: skip
    given = sys.argv[1:] if argv is None else argv
    cmd = "python benchmarks/bench_compiled.py " + " ".join(given)
    return write_report("compiled", cmd.strip(), result, args.json)


if __name__ == "__main__":
    main()
