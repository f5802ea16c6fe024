"""GPU figures, CUDA against the CPU in the same run: the engine's generated tick, and the
PythonVehicleSimulator fleet's closed loop.

``engine``: a bundled scenario's plugins, stacked as W worlds of one simulation
(``demo_survey``: ``usm`` + PID + waypoints + current field + gust script, 3 vehicles a world;
``remus100_survey``: waypoints + REMUS 100 autopilot + PythonVehicleSimulator REMUS 100, one
vehicle a world, 5 model steps a tick; ``bluerov2_station_keeping``: station keeping +
thruster allocation + 8 T200 at the battery's voltage + Fossen 6-DOF BlueROV2 Heavy, one
vehicle a world, 2 model steps a tick; on request ``surftrak_sawtooth`` and
``auv_survey_ins``, two AUVs a world with five sensors, an INS/EKF and a sonar each), run
through ``Simulation.run`` for ``--engine-ticks`` ticks with the compiled tick on the CPU and
with ``MARINESIM_JIT=cuda`` (the same tick as a
CUDA kernel, one thread per world: :mod:`marinesim.engine.compiled.gpu`); both warm, the
recorder at 0.2 frames/s.  Figures: vehicle-steps/s of each (N · ticks times the model steps
a tick: the unit of ``bench_survey.py``), their ratio, and the largest difference
of the final truth positions relative to their scale.

``fleet``: the fleet's closed loop (each vehicle's control system, ``dynamics``,
``attitudeEuler`` and the divergence guard: :mod:`marinesim.reference.pvs_fleet_loop`) is
one per-vehicle function that :mod:`marinesim.models.sixdof.backends` compiles for the CPU
(numba, every thread) and for CUDA (one thread per vehicle) from the same source.  For each
vehicle and N, ``--steps`` steps run in one launch on each backend (warm; the CUDA figure
includes the copies to and from the device), and the two final states are compared.

CUDA's libm (libdevice) is not the C library's, so agreement is to rounding.  Prints one JSON
document (and writes it with ``--json``).  Without a usable CUDA device it prints
``{"available": false, "reason": …}`` and exits with status 3; with
``NUMBA_ENABLE_CUDASIM=1`` numba's simulator stands in for the device (a check of this script,
not a speed figure: use tiny sizes).  Needs numba-cuda (``pip install -e '.[gpu]'``).  Sized to
finish in under 5 minutes on a GPU machine::

    python benchmarks/bench_gpu.py [--parts engine,fleet]
        [--engine-scenarios demo_survey,remus100_survey,bluerov2_station_keeping]
        [--engine-worlds 1000,10000,100000]
        [--engine-ticks 50] [--sizes 1000,10000,100000,1000000] [--steps 200]
        [--vehicles torpedo,tanker,supply,frigate] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_pvs_fleet import MAIN_PY  # the fleet's main.py constructors
from marinesim.core.errors import ConfigError
from marinesim.models.sixdof import fleet
from marinesim.reference import pvs_fleet_loop as closed


def _start(v: fleet.FleetVehicle, n: int) -> np.ndarray:
    x = np.zeros((n, 12 + v.m))
    x[:, 6:12] = v.nu0
    x[:, 0] = np.arange(n) * 1e-3  # vehicles differ (a row mix-up would show)
    return x


def _timed(v: fleet.FleetVehicle, n: int, steps: int, backend: str, repeat: int) -> tuple[float, Any]:
    """Best seconds of ``repeat`` launches of ``steps`` steps, and the last result."""
    best, res = float("inf"), None
    for _ in range(repeat):
        x = _start(v, n)
        t0 = time.perf_counter()
        res = closed.run(v, x, steps, backend=backend)
        best = min(best, time.perf_counter() - t0)
    return best, res


def _rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a − b| over each column's scale (max |a| of the column, at least 1e-12)."""
    scale = np.maximum(np.nanmax(np.abs(a), axis=0), 1e-12)
    return float(np.nanmax(np.abs(a - b) / scale))


def device() -> tuple[dict[str, Any] | None, str | None]:
    """The CUDA device's description, or None and why there is none."""
    from marinesim.core.compile import require_cuda

    try:
        cuda = require_cuda()
    except ConfigError as exc:
        return None, exc.message
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return {"name": "numba CUDA simulator (not a speed figure)"}, None
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return {"name": name, "compute_capability": list(dev.compute_capability)}, None


def measure(vehicles: list[str], sizes: list[int], steps: int, repeat: int) -> list[dict]:
    """Per vehicle and N: CPU and CUDA vehicle-steps/s, their ratio, the states' agreement."""
    out = []
    for name in vehicles:
        v = fleet.build(name, *MAIN_PY[name])
        for be in ("cpu", "cuda"):  # compile and warm both
            closed.run(v, _start(v, 2), 2, backend=be)
        for n in sizes:
            t_cpu, r_cpu = _timed(v, n, steps, "cpu", repeat)
            t_gpu, r_gpu = _timed(v, n, steps, "cuda", repeat)
            row = {
                "vehicle": name,
                "n": n,
                "steps": steps,
                "cpu_vehicle_steps_per_s": n * steps / t_cpu,
                "cuda_vehicle_steps_per_s": n * steps / t_gpu,
                "cuda_over_cpu": t_cpu / t_gpu,
                "max_rel_diff": _rel_diff(r_cpu.x, r_gpu.x),
                "alive_equal": bool(np.array_equal(r_cpu.alive, r_gpu.alive)),
            }
            out.append(row)
            print(
                f"{name:13s} N={n:>8}: CPU {row['cpu_vehicle_steps_per_s']:.3g}, CUDA "
                f"{row['cuda_vehicle_steps_per_s']:.3g} vehicle-steps/s "
                f"({row['cuda_over_cpu']:.2f}x); max rel diff {row['max_rel_diff']:.2g}",
                file=sys.stderr,
            )
    return out


#: Per engine scenario: vehicles a world, model steps a tick (the vehicle-step unit).
ENGINE = {"demo_survey": (3, 1), "remus100_survey": (1, 5), "bluerov2_station_keeping": (1, 2),
          "surftrak_sawtooth": (1, 1), "auv_survey_ins": (2, 1)}  # fmt: skip


def _engine_run(name: str, worlds: int, ticks: int, cuda: bool) -> tuple[float, np.ndarray]:
    """Wall seconds of one ``Simulation.run`` of ``ticks`` ticks (W worlds) and the final
    truth positions (N, 3)."""
    from marinesim.scenario.build import build_simulation, load_scenario

    os.environ.pop("MARINESIM_JIT", None)
    if cuda:
        os.environ["MARINESIM_JIT"] = "cuda"
    try:
        sc = load_scenario(name)
        dt = float(sc.model.time.dt)
        sc = load_scenario(name, sets={"time.end": ticks * dt, "log_rate": 0.2})
        sim = build_simulation(sc, replicas=range(worlds))
        t0 = time.perf_counter()
        sim.run()
        wall = time.perf_counter() - t0
        if sim.compiled_why_not is not None:
            raise RuntimeError(f"{name}: the compiled tick did not run: {sim.compiled_why_not}")
        return wall, np.asarray(sim.blocks[0].truth.pos).copy()
    finally:
        os.environ.pop("MARINESIM_JIT", None)


def measure_engine(scenarios: list[str], worlds: list[int], ticks: int) -> list[dict]:
    """Per scenario and W: the generated tick's vehicle-steps/s on the CPU and on CUDA."""
    os.environ["MARINESIM_COMPILE"] = "wait"  # (compiled before the first timed run)
    out = []
    for name in scenarios:
        per, steps = ENGINE[name]
        for cuda in (False, True):  # compile and warm both (past the plugins' first ticks)
            _engine_run(name, 2, max(ticks, 10), cuda)
        for w in worlds:
            t_cpu, p_cpu = _engine_run(name, w, ticks, False)
            t_gpu, p_gpu = _engine_run(name, w, ticks, True)
            n = w * per
            row = {
                "scenario": name, "worlds": w, "n": n, "ticks": ticks,
                "cpu_vehicle_steps_per_s": n * ticks * steps / t_cpu,
                "cuda_vehicle_steps_per_s": n * ticks * steps / t_gpu,
                "cuda_over_cpu": t_cpu / t_gpu,
                "max_rel_diff": _rel_diff(p_cpu, p_gpu),
            }  # fmt: skip
            out.append(row)
            print(
                f"{name:16s} W={w:>8} N={n:>8}: CPU {row['cpu_vehicle_steps_per_s']:.3g}, CUDA "
                f"{row['cuda_vehicle_steps_per_s']:.3g} vehicle-steps/s "
                f"({row['cuda_over_cpu']:.2f}x); max rel diff {row['max_rel_diff']:.2g}",
                file=sys.stderr,
            )
    return out


def _ints(text: str, flag: str, ap: argparse.ArgumentParser) -> list[int]:
    try:
        out = [int(s) for s in text.split(",")]
    except ValueError:
        ap.error(f"{flag}: expected comma-separated integers, got {text!r}")
    if min(out) < 1:
        ap.error(f"{flag}: every value must be >= 1")
    return out


def main(argv: list[str] | None = None) -> int:
    """Run, print the JSON report; 3 when there is no CUDA device."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000", help="comma-separated N")
    ap.add_argument("--steps", type=int, default=200, help="steps per launch")
    ap.add_argument("--repeat", type=int, default=3, help="launches per figure (best kept)")
    ap.add_argument("--vehicles", default="torpedo,tanker,supply,frigate")
    ap.add_argument("--parts", default="engine,fleet", help="engine and/or fleet")
    ap.add_argument(
        "--engine-scenarios", default="demo_survey,remus100_survey,bluerov2_station_keeping"
    )
    ap.add_argument("--engine-worlds", default="1000,10000,100000", help="comma-separated W")
    ap.add_argument("--engine-ticks", type=int, default=50, help="ticks per engine run")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = ap.parse_args(argv)
    names = args.vehicles.split(",")
    unknown = [n for n in names if n not in MAIN_PY]
    if unknown:
        ap.error(f"--vehicles: unknown {', '.join(unknown)} (known: {', '.join(MAIN_PY)})")
    parts = args.parts.split(",")
    if not parts or any(p not in ("engine", "fleet") for p in parts):
        ap.error(f"--parts: expected engine and/or fleet, got {args.parts!r}")
    scen = args.engine_scenarios.split(",")
    bad = [n for n in scen if n not in ENGINE]
    if bad:
        ap.error(f"--engine-scenarios: unknown {', '.join(bad)} (known: {', '.join(ENGINE)})")
    sizes = _ints(args.sizes, "--sizes", ap)
    worlds = _ints(args.engine_worlds, "--engine-worlds", ap)
    if args.steps < 1 or args.repeat < 1 or args.engine_ticks < 1:
        ap.error("--steps, --repeat and --engine-ticks must be >= 1")
    dev, why = device()
    report: dict[str, Any] = {
        "benchmark": "bench_gpu",
        "command": " ".join(["python", "benchmarks/bench_gpu.py", *sys.argv[1:]]),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count()},  # fmt: skip
        "available": dev is not None,
    }
    if dev is None:
        report["reason"] = why
        print(json.dumps(report, indent=1))
        return 3
    import numba

    report["device"] = dev
    report["cpu_threads"] = numba.get_num_threads()
    t0 = time.perf_counter()
    if "engine" in parts:
        report["engine"] = measure_engine(scen, worlds, args.engine_ticks)
    if "fleet" in parts:
        report["results"] = measure(names, sizes, args.steps, args.repeat)
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
