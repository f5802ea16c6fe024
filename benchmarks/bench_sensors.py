"""Throughput of the navigation sensor set at N = 1000 vehicles, against the same run without it.

One entity block of N vehicles on the test motion (``marinesim.testing.HarnessMotion``: arcs
at 1.5 m/s, 5 m depth) runs ``--ticks`` ticks of dt = 0.1 s twice in the same process:

* **bare**: motion only (perfect navigation);
* **sensors**: the full set — IMU (10 Hz), AHRS (10 Hz), depth (1 Hz), DVL (10 Hz), GPS (1 Hz),
  ``nav_ekf`` (every tick, replay buffer) and ``contacts`` (1 Hz, every other vehicle as a
  candidate, k-d tree above 256) — plus the ``nav_error`` metric.

Figures: steady-state vehicle-steps/s (N · ticks / wall time of ``Simulation.step(ticks)``
after 10 warm-up ticks that include the start hooks and the first random-number block fills)
of each run, the median of ``--repeat`` interleaved (bare, sensors) pairs, and the median of
the per-pair ratios.

With ``--figures`` the three navigation figures (:mod:`marinesim.io.nav_plots`: tracks, error,
contacts; ensemble views past a dozen vehicles) are also drawn and saved as PNG from a 60 s run
of N vehicles with ``simple_ins`` and ``contacts``, each timed (issue 12 §2: ≤ 2 s at N = 1000).

With ``--split`` one more sensors run times every plugin hook (CPU milliseconds per tick, each
hook wrapped in a timer: a few microseconds of its own per call).

With ``--cpu`` the runs are timed with the process's CPU time instead of wall time (on a
machine shared with other jobs, CPU time is what the code costs).

The EKF runs its compiled per-vehicle laws (:mod:`marinesim.sensors.ekf_rows`) unless
``MARINESIM_JIT=0`` (then the numpy reference); their first compilation (a few seconds, once per
machine: numba's disk cache) falls in the warm-up ticks.

Usage::

    python benchmarks/bench_sensors.py [--n 1000] [--ticks 200] [--repeat 3] [--figures]
                                       [--cpu] [--split] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _report import write_report
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import NoParams
from marinesim.engine.plugins import metrics as M
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion

WARMUP = 10  # ticks run before timing


def sensor_set() -> tuple[PluginSpec, ...]:
    """The full navigation sensor set of the benchmark."""
    imu = S.imu.ImuParams(
        accel_noise_std=0.02, gyro_noise_std=0.001, accel_bias_walk=1e-4, gyro_bias_walk=1e-5
    )
    ekf = S.EkfParams(
        accel_noise_std=0.02,
        accel_bias_walk=1e-4,
        depth_std=0.05,
        gps_std=2.0,
        dvl_std=0.05,
        initial_pos_std=1.0,
        initial_vel_std=0.1,
        initial_bias_std=0.01,
    )
    son = S.contacts.ContactParams(
        max_range=100.0,
        fov_az_deg=120.0,
        fov_el_deg=30.0,
        range_std=1.0,
        az_std_deg=1.0,
        el_std_deg=1.0,
        detection_probability=0.9,
    )
    return (
        PluginSpec(S.ImuSensor("imu", imu), 10.0),
        PluginSpec(
            S.AhrsSensor(
                "ahrs", S.ahrs.AhrsParams(roll_std_deg=0.1, pitch_std_deg=0.1, yaw_std_deg=0.5)
            ),
            10.0,
        ),
        PluginSpec(S.DepthSensor("depth", S.depth.DepthParams(noise_std=0.05)), 1.0),
        PluginSpec(
            S.DvlSensor(
                "dvl",
                S.dvl.DvlParams(
                    noise_std=0.02, min_altitude=0.5, max_altitude=50.0, seafloor_depth=40.0
                ),
            ),
            10.0,
        ),
        PluginSpec(S.GpsSensor("gps", S.gps.GpsParams(noise_std=2.0)), 1.0),
        PluginSpec(S.NavEkfEstimator("nav", ekf)),
        PluginSpec(S.ContactSensor("sonar", son), 1.0),
    )


def one_run(
    n: int,
    ticks: int,
    with_sensors: bool,
    seed: int = 1,
    cpu: bool = False,
    split: dict[str, float] | None = None,
) -> float:
    """Vehicle-steps/s of one run (per CPU-second with ``cpu``).

    With ``split`` (a dict) each plugin hook's CPU milliseconds per tick are added to it under
    ``"<plugin>.<hook>"``.
    """
    blk = BlockSpec(
        "auv",
        n,
        PluginSpec(HarnessMotion("motion")),
        sensors=sensor_set() if with_sensors else (),
        spawn=Spawn(depth=5.0, speed=1.5, spread={"north": 500.0, "east": 500.0}),
    )
    world = [PluginSpec(M.NavError("nav_error", NoParams()))] if with_sensors else []
    sim = Simulation([blk], dt=0.1, end=(ticks + WARMUP) * 0.1, seed=seed, world=world)
    sim.step(WARMUP)  # start hooks, first RNG block fills, first scans: not steady state
    if split is not None:
        _time_hooks(sim, split, ticks)
    clock = time.process_time if cpu else time.perf_counter
    t0 = clock()
    done = sim.step(ticks)
    wall = clock() - t0
    assert done == ticks and sim.status == "running"
    return n * ticks / wall


def _time_hooks(sim: Simulation, split: dict[str, float], ticks: int) -> None:
    """Wrap every plugin hook of ``sim`` to add its CPU ms per tick to ``split``."""
    for slot in sim.slots:
        for hook, fn in list(slot.fns.items()):
            key = f"{slot.plugin.name}.{hook}"

            def timed(ctx, rng, fn=fn, key=key):  # noqa: ANN001, ANN202
                t0 = time.process_time()
                fn(ctx, rng)
                split[key] = split.get(key, 0.0) + (time.process_time() - t0) * 1e3 / ticks

            slot.fns[hook] = timed


def nav_figures(n: int, end: float = 60.0) -> dict[str, float]:
    """Seconds to draw and save each navigation figure of an N-vehicle run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from marinesim.io import nav_plots

    ins = S.nav.SimpleInsParams(**S.SimpleInsSensor.example_params)
    son = S.contacts.ContactParams(**S.ContactSensor.example_params)
    blk = BlockSpec(
        "auv",
        n,
        PluginSpec(HarnessMotion("motion")),
        sensors=(
            PluginSpec(S.SimpleInsSensor("ins", ins)),
            PluginSpec(S.ContactSensor("son", son), 1.0),
        ),
        spawn=Spawn(depth=5.0, speed=1.5, spread={"north": 500.0, "east": 500.0}),
    )
    res = Simulation([blk], dt=0.1, end=end, seed=1).run()
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (
            ("tracks", nav_plots.tracks_figure),
            ("error", nav_plots.error_figure),
            ("contacts", nav_plots.contacts_figure),
        ):
            t0 = time.perf_counter()
            fig = fn(res)
            fig.savefig(Path(tmp) / f"{name}.png", dpi=120)
            plt.close(fig)
            out[name] = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run both configurations; return and optionally write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--figures", action="store_true", help="also time the navigation figures")
    ap.add_argument("--cpu", action="store_true", help="time with CPU time, not wall time")
    ap.add_argument(
        "--split",
        action="store_true",
        help="also time each plugin hook (CPU ms per tick) in one more sensors run",
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    pairs = []  # interleaved, so both runs of a pair see the same machine load
    for _ in range(args.repeat):
        pairs.append(
            (
                one_run(args.n, args.ticks, False, cpu=args.cpu),
                one_run(args.n, args.ticks, True, cpu=args.cpu),
            )
        )
    bare = statistics.median(b for b, _ in pairs)
    full = statistics.median(f for _, f in pairs)
    slowdown = statistics.median(b / f for b, f in pairs)
    out = {
        "n": args.n,
        "ticks": args.ticks,
        "dt": 0.1,
        "bare_vehicle_steps_per_s": bare,
        "sensors_vehicle_steps_per_s": full,
        "slowdown": slowdown,
        "pairs": pairs,
        "clock": "cpu" if args.cpu else "wall",
        "ekf": "numpy" if os.environ.get("MARINESIM_JIT", "1") == "0" else "compiled",
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    print(
        f"N={args.n} ticks={args.ticks}: bare {bare:,.0f} vehicle-steps/s, "
        f"full sensor set {full:,.0f} vehicle-steps/s, slowdown x{slowdown:.1f} (median of pairs)"
    )
    if args.split:
        split: dict[str, float] = {}
        one_run(args.n, args.ticks, True, cpu=True, split=split)
        out["hook_cpu_ms_per_tick"] = split = dict(sorted(split.items(), key=lambda kv: -kv[1]))
        print(
            "CPU ms per tick by hook: "
            + ", ".join(f"{k} {v:.2f}" for k, v in split.items() if v >= 0.01)
        )
    if args.figures:
        out["nav_figures_s"] = figs = nav_figures(args.n)
        print(
            f"navigation figures at N={args.n}: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in figs.items())
        )
    cmd = f"python benchmarks/bench_sensors.py --n {args.n} --ticks {args.ticks} --repeat {args.repeat}"
    cmd += " --cpu" * args.cpu + " --figures" * args.figures + " --split" * args.split
    return write_report(
        "full navigation sensor set + INS/EKF at N vehicles vs motion only", cmd, out, args.json
    )


if __name__ == "__main__":
    main()
