"""Monte-Carlo batch throughput: ``marinesim batch`` against separate ``marinesim run`` processes.

All figures come from one invocation (ratios against baselines measured in the same run).
Wall times suffer when other programs share the cores, so CPU seconds (this process and its
children: the ``marinesim run`` processes, the Dask worker processes) are reported as well;
the CPU ratio is what the batch saves whatever the load.

1. **baseline**: a sample of ``--sample`` separate ``marinesim run auv_survey_ins`` processes
   (default outputs: CSV + Parquet log, manifest, figures), timed one after the other; the time
   for ``--replicas`` of them on 2 cores is extrapolated as replicas × mean / 2 (two processes
   at a time, perfect scaling — the baseline's best case).
2. **batch**: the scenario as bundled.  Its sonar contacts and closest-approach metric are
   replica-aware (a vehicle sees only its own replica), so replicas are stacked as extra rows,
   up to 256 per simulation.  Timed on all ``--replicas`` with 2 workers, and with 1 worker
   (Dask scaling).
3. **identity**: the runs table of a small batch with 1 worker, 2 workers and one simulation
   per run (``chunk=1``) must be identical (exact comparison).
4. **engine throughput** (``--vehicles N``): the scenario's plugins over about N vehicles in
   one simulation (N / V stacked worlds of the scenario's V vehicles), vehicle-steps per second
   of wall time over ``--steps`` ticks after one warm-up tick (build excluded).

``--scenario demo_survey`` measures the world axis (docs/guide/worlds.md): its worlds end on
``all_done`` at different ticks and are frozen while the others go on; ``--end 0`` keeps the
scenario's own end time.

Usage::

    python benchmarks/bench_batch.py --quick            # 40 replicas x 60 s, about 2 min
    python benchmarks/bench_batch.py                    # 1000 replicas x 600 s
    python benchmarks/bench_batch.py --replicas 200 --json benchmarks/results/batch.json
    python benchmarks/bench_batch.py --scenario demo_survey --end 0 --replicas 1000 \
        --no-scaling --vehicles 10000 --json benchmarks/results/batch_worlds.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from marinesim.batch import run

SCENARIO = "auv_survey_ins"


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def _baseline(end: float, sample: int, tmp: Path) -> tuple[float, float]:
    """Mean wall and CPU seconds of one separate ``marinesim run`` process (``end`` 0: the
    scenario's own end time)."""
    exe = shutil.which("marinesim") or str(Path(sys.executable).with_name("marinesim"))
    times = []
    c0 = _cpu()
    for k in range(sample):
        t0 = time.perf_counter()
        subprocess.run(
            [
                exe,
                "run",
                SCENARIO,
                *(["--set", f"time.end={end}"] if end else []),
                "--seed",
                str(1000 + k),
                "--no-progress",
                "-o",
                str(tmp / f"base{k}"),
            ],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), (_cpu() - c0) / sample


def _timed(**kw: object) -> tuple[float, pd.DataFrame, float, float]:
    """Wall [s], runs table, CPU [s] of a batch, and the mean CPU time of one run inside its
    worker [s] (from the saved records: no cluster start, no scheduling, no waiting for a core)."""
    t0, c0 = time.perf_counter(), _cpu()
    res = run(SCENARIO, figures=False, log_every=None, **kw)  # type: ignore[arg-type]
    wall = time.perf_counter() - t0
    assert set(res.runs["status"]) == {"completed"}, res.runs["status"].value_counts()
    recs = (Path(str(kw["outdir"])) / "runs").glob("*.json")
    per_run = [json.loads(f.read_text())["cpu_s"] for f in recs]
    return wall, res.runs, _cpu() - c0, sum(per_run) / max(len(per_run), 1)


def _engine_rate(vehicles: int, steps: int) -> dict[str, float]:
    """Vehicle-steps per second of the scenario's plugins over about ``vehicles`` vehicles
    (stacked worlds of the scenario), in this process."""
    from marinesim.scenario import load_scenario
    from marinesim.scenario.build import build_simulation

    sc = load_scenario(SCENARIO)
    per = sum(e.count for e in sc.model.entities)
    worlds = max(1, round(vehicles / per))
    sim = build_simulation(sc, replicas=list(range(worlds)))
    n = sum(b.n for b in sim.blocks)
    sim.step(1)  # start hooks and first tick
    t0, c0 = time.perf_counter(), time.process_time()
    done = sim.step(steps)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "vehicles": n,
        "worlds": worlds,
        "ticks": done,
        "vehicle_steps_per_s": n * done / wall,
        "vehicle_steps_per_cpu_s": n * done / cpu,
    }


def main() -> int:
    global SCENARIO
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="40 replicas x 60 s")
    ap.add_argument("--replicas", type=int, default=1000)
    ap.add_argument(
        "--end", type=float, default=600.0, help="simulated time per run [s] (0: the scenario's)"
    )
    ap.add_argument("--scenario", default=SCENARIO, help="bundled scenario")
    ap.add_argument("--no-scaling", action="store_true", help="skip the 1-worker batch")
    ap.add_argument("--vehicles", type=int, default=0, help="engine throughput at N vehicles")
    ap.add_argument("--steps", type=int, default=50, help="ticks timed for --vehicles")
    ap.add_argument("--sample", type=int, default=3, help="separate processes timed")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if a.quick:
        a.replicas, a.end, a.sample = 40, 60.0, 2
    SCENARIO = a.scenario
    tmp = Path(tempfile.mkdtemp(prefix="bench_batch-"))
    out: dict[str, object] = {
        "scenario": SCENARIO,
        "replicas": a.replicas,
        "end_s": a.end,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "loadavg_start": os.getloadavg(),
    }
    try:
        per_proc, per_proc_cpu = _baseline(a.end, a.sample, tmp)
        base_total = a.replicas * per_proc / 2  # two processes at a time on 2 cores
        base_cpu = a.replicas * per_proc_cpu
        sets = {"time.end": a.end} if a.end else {}
        w2, runs2, c2, _ = _timed(outdir=tmp / "w2", replicas=a.replicas, sets=sets, workers=2)
        w1, c1 = float("nan"), float("nan")
        if not a.no_scaling:
            w1, runs1, c1, _ = _timed(outdir=tmp / "w1", replicas=a.replicas, sets=sets, workers=1)
            pd.testing.assert_frame_equal(runs1, runs2, check_exact=True)
        n_id = min(a.replicas, 8)
        small = {**sets, "time.end": min(a.end or 60.0, 60.0)}
        _, i1, _, _ = _timed(outdir=tmp / "i1", replicas=n_id, sets=small, workers=1)
        _, i2, _, _ = _timed(outdir=tmp / "i2", replicas=n_id, sets=small, workers=2)
        _, ic, _, _ = _timed(outdir=tmp / "ic", replicas=n_id, sets=small, workers=2, chunk=1)
        pd.testing.assert_frame_equal(i1, i2, check_exact=True)
        pd.testing.assert_frame_equal(i1, ic, check_exact=True)
        if a.vehicles:
            out["engine"] = _engine_rate(a.vehicles, a.steps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.update(
        separate_process_s=per_proc,
        separate_process_cpu_s=per_proc_cpu,
        baseline_extrapolated_s=base_total,
        baseline_extrapolated_cpu_s=base_cpu,
        batch_stacked_2_workers_s=w2,
        batch_stacked_2_workers_cpu_s=c2,
        batch_stacked_1_worker_s=None if a.no_scaling else w1,
        batch_stacked_1_worker_cpu_s=None if a.no_scaling else c1,
        identical_1w_2w_stacked_single=True,
        speedup_stacked=base_total / w2,
        cpu_ratio_stacked=base_cpu / c2,
        dask_scaling_1_to_2_workers=None if a.no_scaling else w1 / w2,
        loadavg_end=os.getloadavg(),
    )
    print(
        f"{a.replicas} replicas x {a.end or 'own end'} s of {SCENARIO} (cpus {out['cpus']}, load {out['loadavg_start']})"
    )
    print(
        f"  separate 'marinesim run' processes: {per_proc:.2f} s ({per_proc_cpu:.2f} s CPU) each"
        f" -> {base_total:.0f} s extrapolated on 2 cores"
    )
    print(
        f"  batch, stacked replicas, 2 workers: {w2:.1f} s ({c2:.1f} s CPU), "
        f"{base_total / w2:.1f}x wall, {base_cpu / c2:.1f}x CPU"
    )
    print(
        f"  batch, stacked replicas, 1 worker: {w1:.1f} s ({c1:.1f} s CPU); Dask scaling 1 -> 2 "
        f"workers: {w1 / w2:.2f}x"
    )
    print("  runs table identical for 1 worker, 2 workers, stacked and one simulation per run: yes")
    if a.vehicles:
        e = out["engine"]
        assert isinstance(e, dict)
        print(
            f"  engine: {e['vehicles']} vehicles ({e['worlds']} worlds), {e['ticks']} ticks: "
            f"{e['vehicle_steps_per_s']:.3g} vehicle-steps/s "
            f"({e['vehicle_steps_per_cpu_s']:.3g} per CPU s)"
        )
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
