"""``marinesim moos`` as pAntler launches it: time to the first NAV post, CPU and memory.

One vehicle, the ``survey`` simulator block (AppTick 10, warp 10), against a MOOSDB on
127.0.0.1: the real ``MOOSDB`` when ``MARINESIM_MOOS_BIN`` names a MOOS-IvP ``bin`` folder,
else marinesim's stand-in (:mod:`marinesim.interop.moos.fakedb`).  A subscriber (marinesim's
MOOS client, registered for ``NAV_X``) notes the wall time of the first ``NAV_X`` it receives;
the child's CPU time and peak resident memory come from ``wait4``.

Measured in the same run, as baselines: the bare interpreter (``python -c pass``) and, with
``MARINESIM_MOOS_BIN``, the real uSimMarine on the same mission.  Figures are medians over
``--repeat`` launches; ratios are marinesim over the baseline of the same run.

Bytecode: the launches read and write the package's ``.pyc`` files as an installed package
does (the first launch writes them).  A ``PYTHONDONTWRITEBYTECODE`` in the caller's
environment is dropped for them — with it, every launch compiles the package's modules from
source again (about 0.1 s CPU) — unless ``--no-bytecode-cache`` keeps it.

The cases take turns, one launch of each per round, so that a load that changes during the
run weighs on all of them alike.  ``--baseline-src OTHER/src`` adds a third case: the same
launch with ``PYTHONPATH`` at another tree's ``src`` (the tree before a change).

Run: ``PYTHONPATH=src python benchmarks/bench_moos_startup.py --repeat 5 --duration 30``
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import write_report
from marinesim.interop.moos.client import MoosClient
from marinesim.interop.moos.fakedb import FakeMoosDB

MISSION = """ServerHost   = 127.0.0.1
ServerPort   = {port}
Community    = bench
MOOSTimeWarp = {warp}
LatOrigin    = 42.358456
LongOrigin   = -71.087589

ProcessConfig = uSimMarine
{{
  AppTick    = 10
  CommsTick  = 10
  start_pos  = x=0, y=-10, heading=180, speed=0, depth=0
  prefix     = NAV
  turn_rate  = 70
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait4(proc: subprocess.Popen[bytes], timeout: float) -> tuple[float, float]:
    """(CPU s, peak RSS MB) of a child, after it exits."""
    end = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0
        if time.monotonic() > end:
            proc.kill()
        time.sleep(0.02)


def _one(
    cmd: list[str], port: int, warp: float, duration: float, cwd: Path, env: dict[str, str]
) -> dict[str, Any]:
    sub = MoosClient("127.0.0.1", port, f"bench_sub_{time.monotonic_ns()}", time_warp=warp)
    sub.connect(retry_for=10.0)
    sub.register(["NAV_X"])
    sub.fetch(timeout=0.2)  # drain the stored value, if any
    t0 = time.time()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    first = None
    end = time.monotonic() + duration / warp + 30.0
    while time.monotonic() < end and proc.poll() is None:
        msgs = sub.fetch(timeout=0.002)
        # only a NAV_X stamped after the launch: the DB also sends the value stored from
        # the previous launch to a new subscriber
        if first is None and any(m.key == "NAV_X" and m.time >= t0 * warp for m in msgs):
            first = time.time() - t0
        if first is not None:
            break
    time.sleep(max(duration / warp - (time.time() - t0), 0.0))
    # SIGINT, as pAntler's shutdown; os.kill, not Popen.send_signal: that polls first, which
    # reaps a child that has just ended its --duration by itself, and wait4 then has no
    # child (and no CPU figure) left to read
    os.kill(proc.pid, 2)
    cpu, rss = _wait4(proc, 20.0)
    sub.close()
    return {"first_nav_s": first, "cpu_s": cpu, "max_rss_mb": rss, "wall_s": time.time() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--duration", type=float, default=30.0, help="MOOS seconds per launch")
    ap.add_argument("--warp", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=None, help="JSON report")
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep a PYTHONDONTWRITEBYTECODE of the environment (every launch compiles)",
    )
    ap.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="the src folder of another marinesim tree, launched as a third case",
    )
    args = ap.parse_args()
    bindir = os.environ.get("MARINESIM_MOOS_BIN")
    work = Path(tempfile.mkdtemp(prefix="bench_moos_"))
    port = _free_port()
    mission = work / "m.moos"
    mission.write_text(MISSION.format(port=port, warp=f"{args.warp:g}"), encoding="utf-8")
    db: Any
    if bindir:
        db = subprocess.Popen(
            [str(Path(bindir) / "MOOSDB"), str(mission)],
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)
    else:
        db = FakeMoosDB("bench", warp=args.warp, port=port).start()
    py = [sys.executable, "-m", "marinesim", "moos", str(mission), "uSimMarine"]
    # the start record is cached per mission file (marinesim.interop.moos.startup): a private
    # cache folder makes the first launch a cold one in every run of this benchmark
    os.environ["MARINESIM_CACHE_DIR"] = str(work / "cache")
    env = dict(os.environ)
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    cases: dict[str, list[str]] = {
        "marinesim": [*py, "--duration", f"{args.duration:g}", "-o", str(work / "m.alog")],
    }
    envs = {"marinesim": env}
    if args.baseline_src is not None:
        cases["marinesim_baseline"] = cases["marinesim"]
        envs["marinesim_baseline"] = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
    if bindir:
        # by full path a MOOS app takes argv[0] as its name: the alias names the block
        cases["uSimMarine"] = [str(Path(bindir) / "uSimMarine"), str(mission), "--alias=uSimMarine"]
    results: dict[str, Any] = {
        "db": "MOOSDB" if bindir else "fakedb",
        "bytecode_cache": "PYTHONDONTWRITEBYTECODE" not in env,
        "cases": {},
    }
    try:
        # the interpreter alone (no DB traffic): the floor of any Python start-up
        floor = []
        for _ in range(args.repeat):
            t = time.time()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.time() - t)
        results["python_floor_s"] = statistics.median(floor)
        results["loadavg_start"] = os.getloadavg()
        cold = _one(cases["marinesim"], port, args.warp, args.duration, work, env)
        results["cases"]["marinesim_cold"] = cold
        print(
            f"marinesim, first launch of the mission (start record computed): first NAV_X "
            f"{cold['first_nav_s']} s, CPU {cold['cpu_s']:.3f} s, peak RSS "
            f"{cold['max_rss_mb']:.1f} MB"
        )
        if "marinesim_baseline" in cases:  # its own first launch, not counted
            _one(cases["marinesim"], port, args.warp, 2.0, work, envs["marinesim_baseline"])
        # the cases take turns (one launch of each per round): a load that changes during
        # the run weighs on every case alike
        allruns: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                e = envs.get(name, env)
                allruns[name].append(_one(cmd, port, args.warp, args.duration, work, e))
        for name, runs in allruns.items():
            firsts = [r["first_nav_s"] for r in runs if r["first_nav_s"] is not None]
            results["cases"][name] = {
                "runs": runs,
                "first_nav_median_s": statistics.median(firsts) if firsts else None,
                "cpu_median_s": statistics.median(r["cpu_s"] for r in runs),
                "max_rss_median_mb": statistics.median(r["max_rss_mb"] for r in runs),
            }
            print(
                f"{name:>10}: first NAV_X {results['cases'][name]['first_nav_median_s']} s, "
                f"CPU {results['cases'][name]['cpu_median_s']:.3f} s for "
                f"{args.duration:g} MOOS s (launches: "
                + ", ".join(f"{r['cpu_s']:.2f}" for r in runs)
                + f"), peak RSS {results['cases'][name]['max_rss_median_mb']:.1f} MB"
            )
        if "marinesim_baseline" in results["cases"]:
            b = results["cases"]["marinesim_baseline"]["cpu_median_s"]
            results["cpu_marinesim_over_baseline"] = results["cases"]["marinesim"][
                "cpu_median_s"
            ] / max(b, 1e-9)
            print(f"marinesim / baseline tree: {results['cpu_marinesim_over_baseline']:.3f}")
        if "uSimMarine" in results["cases"]:
            m, u = results["cases"]["marinesim"], results["cases"]["uSimMarine"]
            results["ratios"] = {
                "cpu": m["cpu_median_s"] / max(u["cpu_median_s"], 1e-9),
                "rss": m["max_rss_median_mb"] / max(u["max_rss_median_mb"], 1e-9),
                # per round (the launches of one round ran under about the same load)
                "cpu_per_round": [
                    a["cpu_s"] / max(b["cpu_s"], 1e-9)
                    for a, b in zip(m["runs"], u["runs"], strict=True)
                ],
            }
            print(f"marinesim / uSimMarine: {results['ratios']}")
        m = results["cases"]["marinesim"]
        if m["first_nav_median_s"] is not None:
            results["first_nav_over_python_floor"] = (
                m["first_nav_median_s"] / results["python_floor_s"]
            )
        load = os.getloadavg()
        results["loadavg"] = load
        print(
            f"python -c pass: {results['python_floor_s']:.3f} s (first NAV_X / that: "
            f"{results.get('first_nav_over_python_floor', float('nan')):.2f}); load average "
            f"at start {results['loadavg_start']}, at end {load}"
        )
    finally:
        if bindir:
            db.terminate()
            db.wait(10)
        else:
            db.stop()
        shutil.rmtree(work, ignore_errors=True)
    write_report(
        "bench_moos_startup",
        "PYTHONPATH=src python benchmarks/bench_moos_startup.py " + " ".join(sys.argv[1:]),
        results,
        args.out,
    )


if __name__ == "__main__":
    main()
