"""``demo_survey``'s (or ``remus100_survey``'s) plugins at N vehicles through the engine.

The bundled ``demo_survey`` scenario (``usm`` + ``heading_speed_depth_pid`` + ``waypoints``
lawnmower + the ``demo_current.cfd`` current field + a gust script) with its block widened to
``--n`` vehicles (``split: false``: every vehicle flies the whole pattern; 7 lanes cannot be
split among 10⁴ vehicles).  Figures, in one process:

* ``vehicle_steps_per_cpu_s``: N · ticks / CPU time of ``Simulation.step(ticks)`` after
  ``WARMUP`` ticks (every tick through the plugins; CPU time: the machine is shared; the
  median of ``--repeat`` runs);
* ``compiled_vehicle_steps_per_cpu_s``: the same ticks through ``Simulation.run`` on the
  compiled route (the tick generated from the plugins' laws), and ``compiled_over_python``;
  ``compiled_vehicle_steps_per_s`` the same in wall-clock time (the generated tick runs on
  one thread: on an idle machine the two agree);
* ``result_s``: wall-clock seconds from the last compiled tick to the ``RunResult`` of
  ``Simulation.run`` (stop hooks, metrics and, most of it, the recorder's signal arrays,
  :meth:`Recorder.signals`: N · frames values per signal component; not in the figures
  above);
* ``field_us_per_tick``: :meth:`CurrentField.force` at the N positions, one tick's lookup,
  and ``field_share`` of the tick;
* ``dense_field_us_per_tick``: the same lookup written as the dense numpy formula over the
  (N, M) pairs that marinesim used before (the baseline of ``field_speedup``).

``--scenario remus100_survey``: the REMUS 100 closed loop instead (``waypoints`` →
``depth_heading_autopilot`` → ``fossen6dof`` with the PythonVehicleSimulator REMUS 100, 5
substeps of 0.02 s per 0.1 s tick), its block widened the same way.  Its vehicle-steps count
the model's steps (N · ticks · 5: the loop steps of PythonVehicleSimulator's loop, the unit of
the kernel-alone figure); there is no current field to look up.

``--ekf``: the same sensors fused by an INS/EKF (``nav_ekf``, in the tick too:
:mod:`marinesim.engine.plugins.ekf_laws`), whose belief the waypoints and the PID steer by.

``--sensors`` (``demo_survey``): every vehicle also carries the five navigation sensors
(:data:`SENSORS`: IMU and AHRS at 5 Hz, DVL at 5 Hz over a flat 40 m seafloor, depth and GPS
at 1 Hz), which run in the generated tick (:mod:`marinesim.engine.plugins.sensor_laws`); the
compiled figure of the same block without them is measured in the same run, alternating
(``motion_only_compiled_vehicle_steps_per_cpu_s``, and ``sensors_cost``: how many times the
CPU per vehicle-step the sensors make it).

Usage::

    python benchmarks/bench_survey.py [--scenario demo_survey] [--n 10000] [--ticks 50]
                                      [--repeat 3] [--log-rate HZ] [--sensors | --ekf]
                                      [--json benchmarks/results/bench_survey.json]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

import numpy as np

from _report import load_average as _load
from _report import write_report
from marinesim.scenario.build import load_simulation

WARMUP = 5  # ticks run before timing (start hooks, first compiled calls)

#: Per scenario: its control tick [s] and model steps per tick (the vehicle-step unit).
SCENARIOS = {"demo_survey": (0.2, 1), "remus100_survey": (0.1, 5)}

#: ``--sensors``: the navigation sensor suite of ``auv_survey_ins`` without its INS/EKF.
SENSORS = [
    {"name": "imu", "plugin": "imu", "rate_hz": 5, "params": {
        "accel_noise_std": 0.02, "gyro_noise_std": 0.001, "accel_bias_walk": 0.0002,
        "gyro_bias_walk": 0.00001, "accel_bias_init_std": 0.005}},
    {"name": "ahrs", "plugin": "ahrs", "rate_hz": 5,
     "params": {"roll_std_deg": 0.1, "pitch_std_deg": 0.1, "yaw_std_deg": 0.5}},
    {"name": "depth", "plugin": "depth_sensor", "rate_hz": 1, "params": {"noise_std": 0.05}},
    {"name": "dvl", "plugin": "dvl", "rate_hz": 5, "params": {
        "noise_std": 0.03, "min_altitude": 0.5, "max_altitude": 35.0,
        "dropout_probability": 0.05}},
    {"name": "gps", "plugin": "gps", "rate_hz": 1, "params": {"noise_std": 2.0, "max_depth": 0.5}},
]  # fmt: skip

#: ``--ekf``: :data:`SENSORS` fused by ``auv_survey_ins``'s INS/EKF (its belief steers).
EKF = {"name": "nav", "plugin": "nav_ekf", "params": {
    "accel_noise_std": 0.02, "accel_bias_walk": 0.0002, "depth_std": 0.05, "gps_std": 2.0,
    "dvl_std": 0.2, "initial_pos_std": 1.0, "initial_vel_std": 0.1, "initial_bias_std": 0.005}}


def _sets(
    scenario: str, n: int, end: float, log_rate: float | None = None, sensors: bool | str = False
) -> dict:
    """The scenario's block widened to ``n`` vehicles flying the whole pattern each (frames
    recorded at ``log_rate`` [Hz]; None: every tick), with :data:`SENSORS` if ``sensors``
    (and the INS/EKF :data:`EKF` if it is ``"ekf"``)."""
    sets: dict = {
        "entities.0.count": n,
        "entities.0.autonomy.0.params.lawnmower.split": False,
        "time.end": end,
    }
    if log_rate is not None:
        sets["log_rate"] = log_rate
    if sensors:
        sets["entities.0.sensors"] = [*SENSORS, EKF] if sensors == "ekf" else SENSORS
        sets["environment.terrain"] = {"model": "flat", "depth": 40.0}
    return sets



def _dense_force(fld, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The earlier lookup: dense numpy over every (point, vector) pair (the baseline)."""
    d = np.hypot(x[:, None] - fld.x, y[:, None] - fld.y)
    inside = d < fld.radius
    w = np.where(inside, (1.0 - d / fld.radius) ** 2, 0.0)
    n = inside.sum(axis=-1)
    safe = np.maximum(n, 1)
    return (
        np.where(n > 0, (w * fld.vx).sum(axis=-1) / safe, 0.0),
        np.where(n > 0, (w * fld.vy).sum(axis=-1) / safe, 0.0),
    )


def _cpu(fn, k: int) -> float:
    """CPU seconds per call of ``fn`` (best of 3 rounds of ``k`` calls)."""
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(k):
            fn()
        best = min(best, (time.process_time() - t0) / k)
    return best


def one_run(
    n: int, ticks: int, compiled: bool = False, scenario: str = "demo_survey",
    log_rate: float | None = None, sensors: bool | str = False,
) -> tuple[float, object, int, float, float | None]:  # fmt: skip
    """Vehicle-steps per CPU-second of one run; the simulation (for the lookup); the ticks
    that ran compiled; vehicle-steps per wall-clock second; wall-clock seconds from the last
    tick to the result (compiled only, else None).

    ``compiled=False``: ``Simulation.step`` (every tick through the plugins, as
    ``MARINESIM_JIT=0``); ``compiled=True``: ``Simulation.run`` to the same end (the tick
    generated from the plugins' laws, :mod:`marinesim.engine.compiled`; a waypoint reached
    hands its tick back to the plugins), timed to its last tick (the frames recorded
    included, the result built after it not, as ``step`` builds none).
    """
    # the runs before: freed now, not by the collector during this one (a simulation holds
    # reference cycles); else this run's frames land in memory never touched before, which
    # costs most of an every-frame run on a VM that backs its memory lazily
    gc.collect()
    dt, per_tick = SCENARIOS[scenario]
    end = 900 if not compiled else round((WARMUP + ticks) * dt, 9)
    sim = load_simulation(scenario, sets=_sets(scenario, n, end, log_rate, sensors))
    sim.compiled = compiled
    sim.step(WARMUP)
    w0 = time.perf_counter()
    t0 = time.process_time()
    if compiled:
        last: list[tuple[float, float]] = []

        def progress(t: float, end: float) -> None:  # the clock at the end: stop timing
            if not last and sim.clock.k >= WARMUP + ticks:
                last.append((time.process_time(), time.perf_counter()))

        res = sim.run(progress)  # (the result built after the last tick: timed apart)
        result_s: float | None = time.perf_counter() - last[0][1]
        done, ran = sim.clock.k - WARMUP, int(res.manifest["compiled_ticks"])
        cpu, wall = last[0][0] - t0, last[0][1] - w0
    else:
        done, ran, result_s = sim.step(ticks), 0, None
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    assert done == ticks and sim.status in ("running", "completed"), (done, sim.status)
    steps = n * ticks * per_tick
    return steps / cpu, sim, ran, steps / wall, result_s


def _warm_compiled(scenario: str, n: int, sensors: bool | str = False) -> None:
    """Load (or compile) the generated tick of this plugin set once, outside the timing (at
    the same N: a block of many vehicles may take laws of its own, e.g. threaded)."""
    sim = load_simulation(scenario, sets=_sets(scenario, n, 1.0, sensors=sensors))
    sim.compiled = True
    sim.run()


def main(argv: list[str] | None = None) -> dict:
    """Run the measurement; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), default="demo_survey")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--ticks", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python-only", action="store_true", help="skip the compiled route")
    ap.add_argument(
        "--log-rate", type=float, default=None, help="frames per second recorded (default: every tick)"
    )
    ap.add_argument("--sensors", action="store_true", help="add the navigation sensor suite")
    ap.add_argument("--ekf", action="store_true", help="the suite fused by an INS/EKF (nav_ekf)")
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "bench_survey.json"
    )
    args = ap.parse_args(argv)
    load0 = _load()
    rates = []
    sim = None
    sens: bool | str = "ekf" if args.ekf else bool(args.sensors)
    for _ in range(args.repeat):
        sim = None  # (the last run's simulation: not alive during this one)
        r, sim, _ran, _w, _res = one_run(
            args.n, args.ticks, False, args.scenario, args.log_rate, sens
        )
        rates.append(r)
    rate = statistics.median(rates)
    crates, cticks, cwalls, cresults, mrates = [], [], [], [], []
    if not args.python_only:
        _warm_compiled(args.scenario, args.n, sens)
        if sens:
            _warm_compiled(args.scenario, args.n)
        for _ in range(args.repeat):
            r, _sim, ran, w, res_s = one_run(
                args.n, args.ticks, True, args.scenario, args.log_rate, sens
            )
            crates.append(r)
            cticks.append(ran)
            cwalls.append(w)
            cresults.append(res_s)
            del _sim  # (its result's arrays: not alive during the next run, see one_run)
            if sens:  # the baseline: the same block without the sensors, alternating
                m, _sim, _ran, _w, _res = one_run(args.n, args.ticks, True, args.scenario, args.log_rate)
                mrates.append(m)
                del _sim
    crate = statistics.median(crates) if crates else None
    cwall = statistics.median(cwalls) if cwalls else None
    result_s = statistics.median(cresults) if cresults else None
    dt, per_tick = SCENARIOS[args.scenario]
    tick_s = args.n * per_tick / rate
    result: dict = {
        "scenario": args.scenario,
        "n": args.n,
        "ticks": args.ticks,
        "dt": dt,
        "model_steps_per_tick": per_tick,
        "log_rate_hz": args.log_rate,
        "vehicle_steps_per_cpu_s": rate,
        "runs": rates,
        "tick_ms": tick_s * 1e3,
        "sensors": [x["plugin"] for x in [*SENSORS, EKF]][: 6 if sens == "ekf" else 5] if sens else [],
    }
    if mrates:
        mrate = statistics.median(mrates)
        result["motion_only_compiled_vehicle_steps_per_cpu_s"] = mrate
        result["motion_only_runs"] = mrates
        result["sensors_cost"] = mrate / statistics.median(crates)
    fld = sim.env.current_field  # type: ignore[union-attr]
    field_s = dense_s = None
    if fld is not None:
        block = sim.blocks[0]  # type: ignore[union-attr]
        pos = np.asarray(block.truth.pos)
        east, north = pos[:, 1].copy(), pos[:, 0].copy()
        field_s = _cpu(lambda: fld.force(east, north), 20)
        dense_s = _cpu(lambda: _dense_force(fld, east, north), 5)
        result.update({
            "field_us_per_tick": field_s * 1e6,
            "field_share": field_s / tick_s,
            "dense_field_us_per_tick": dense_s * 1e6,
            "field_speedup": dense_s / field_s,
            "field_vectors": len(fld),
        })  # fmt: skip
    result.update({
        "compiled_vehicle_steps_per_cpu_s": crate,
        "compiled_runs": crates,
        "compiled_vehicle_steps_per_s": cwall,
        "compiled_ticks": cticks,
        "compiled_over_python": None if crate is None else crate / rate,
        "result_s": result_s,
        "result_runs": cresults,
        "load_average": [load0, _load()],
    })  # fmt: skip
    line = (
        f"{args.scenario} plugins, N={args.n}: {rate:,.0f} vehicle-steps per CPU-s "
        f"({tick_s * 1e3:.1f} ms per tick)"
    )
    if field_s is not None and dense_s is not None:
        line += (
            f"; current-field lookup {field_s * 1e6:,.0f} us = {100 * field_s / tick_s:.1f} % "
            f"of the tick, dense numpy formula {dense_s * 1e6:,.0f} us ({dense_s / field_s:.1f}x)"
        )
    print(f"{line}; load {result['load_average']}", flush=True)
    if crate is not None:
        print(
            f"compiled route: {crate:,.0f} vehicle-steps per CPU-s ({crate / rate:.1f}x the "
            f"plugins' ticks; ticks compiled {cticks} of {args.ticks}), {cwall:,.0f} per "
            f"wall-clock s; the result built after the ticks in {result_s:.2f} s",
            flush=True,
        )
    if mrates:
        print(
            f"the same block without the sensors, compiled: {result['motion_only_compiled_vehicle_steps_per_cpu_s']:,.0f} "
            f"vehicle-steps per CPU-s: the sensors cost {result['sensors_cost']:.2f}x",
            flush=True,
        )
    return write_report(
        f"{args.scenario} plugins at N vehicles through the engine"
        + ("; current-field lookup" if fld is not None else ""),
        f"python benchmarks/bench_survey.py --scenario {args.scenario} --n {args.n} "
        f"--ticks {args.ticks} --repeat {args.repeat}"
        + (f" --log-rate {args.log_rate:g}" if args.log_rate is not None else "")
        + (" --python-only" if args.python_only else "")
        + (" --ekf" if sens == "ekf" else " --sensors" if sens else ""),
        result,
        args.json,
    )


if __name__ == "__main__":
    main()
