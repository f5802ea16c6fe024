"""Missions per hour: ``marinesim moos batch`` against the plain shell loop of pAntler runs.

The recorded ``survey`` mission (``reference/moos_live/missions/survey``, warp 10) with the real
MOOS-IvP apps from ``MARINESIM_MOOS_BIN``:

* **batch**: ``run_batch(survey.moos, replicas=--runs, workers=--workers)`` (what
  ``marinesim moos batch`` runs), each run's ``observer.alog`` judged against the three
  recorded real runs with the recorded bands (``reference/moos_live`` README §2.4: duration
  from motion start 220.50 ± 0.75 s, along-track 0.7 m, Hausdorff 0.6 m, equal time since
  motion start 0.75 m);
* **shell loop**: the pAntler recipe of ``docs/guide/moos-batch.md`` run ``--loop`` times one
  after another (wrapper on the PATH, ``marinesim moos ... --prepare``, ``pAntler
  survey.moos``, stop 2 s after ``MISSION = complete``), judged the same way.

Missions per hour = completed runs / wall hours of each way, measured in the same run.  The
load average is recorded at start and end.

Run: ``PYTHONPATH=src MARINESIM_MOOS_BIN=... python benchmarks/bench_moos_batch.py --runs 32``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import write_report
from marinesim.batch.moos import run_batch
from marinesim.interop.moos.spread import compare_tracks, mission_track

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "moos_live"
#: The recorded bands of the survey mission (README §2.4).
BANDS = {"duration": (220.50, 0.75), "along": 0.7, "hausdorff": 0.6, "equal_time": 0.75}
SIM_LINE = re.compile(r"^(\s*)Run\s*=\s*(uSimMarine)\b.*$", re.MULTILINE)


def judge(log: Path, src: Path) -> dict[str, Any]:
    """Worst figures of one run against the three recorded runs and whether all are in
    the bands (a run that does not read as a completed survey is out, with the reason)."""
    try:
        tr = mission_track(log)
    except Exception as exc:  # noqa: BLE001 - a broken log is an out-of-band run
        return {"in_bands": False, "why": f"unreadable track: {exc}"}
    out: dict[str, Any] = {"duration_from_motion_s": tr.duration_from_motion}
    why = []
    if [v for _t, v in tr.wpt_changes] != [0, 1, 2, 3, 4, 5, 0]:
        why.append("waypoints")
    mean, tol = BANDS["duration"]
    if abs(tr.duration_from_motion - mean) > tol:
        why.append(f"duration {tr.duration_from_motion:.2f}")
    for i in (1, 2, 3):
        m = compare_tracks(tr, mission_track(src / f"survey_usm_run{i}.alog"))
        for key, name in (
            ("max_dist_equal_along_track_m", "along"),
            ("hausdorff_m", "hausdorff"),
            ("max_dist_equal_time_from_motion_start_m", "equal_time"),
        ):
            out[key] = max(out.get(key, 0.0), m[key])
            if m[key] > BANDS[name]:
                why.append(f"{name} {m[key]:.2f} vs run{i}")
    out["in_bands"] = not why
    out["why"] = "; ".join(why)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pantler_once(src: Path, cwd: Path, bindir: str, timeout: float = 150.0) -> Path | None:
    """The documented recipe, once; the pLogger log when the mission completed."""
    cwd.mkdir(parents=True)
    text = (src / "survey.moos").read_text(encoding="utf-8")
    text = re.sub(r"ServerPort\s*=\s*\d+", f"ServerPort   = {_free_port()}", text, count=1)
    text = re.sub(r"ServerHost\s*=\s*\S+", "ServerHost   = 127.0.0.1", text, count=1)
    text = SIM_LINE.sub(
        lambda m: f"{m.group(1)}Run = usim_marinesim @ NewConsole = false ~ {m.group(2)}", text
    )
    (cwd / "survey.moos").write_text(text, encoding="utf-8")
    shutil.copy(src / "survey.bhv", cwd / "survey.bhv")
    (cwd / "logs").mkdir()
    wrapper = cwd / "usim_marinesim"
    wrapper.write_text('#!/bin/sh\nexec marinesim moos "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [str(cwd), bindir, str(Path(sys.executable).parent), env.get("PATH", "")]
    )
    subprocess.run(  # the docs' recipe: the start record first
        ["marinesim", "moos", "survey.moos", "uSimMarine", "--prepare"],
        cwd=cwd, env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    with (cwd / "antler.out").open("wb") as out:
        antler = subprocess.Popen(
            ["pAntler", "survey.moos"],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        found = None
        try:
            end = time.monotonic() + timeout
            while time.monotonic() < end and antler.poll() is None:
                logs = sorted((cwd / "logs").glob("**/*.alog"))
                if logs and re.search(
                    r"\sMISSION\s+\S+\s+complete", logs[0].read_text(errors="replace")
                ):
                    found = logs[0]
                    break
                time.sleep(0.5)
            time.sleep(2.0)
        finally:
            antler.send_signal(signal.SIGINT)
            try:
                antler.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(antler.pid, signal.SIGKILL)
                antler.wait(5)
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=32, help="batch runs (replicas)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--loop", type=int, default=3, help="pAntler runs of the shell loop")
    ap.add_argument("--out", type=Path, default=None, help="JSON report")
    args = ap.parse_args()
    bindir = os.environ.get("MARINESIM_MOOS_BIN")
    if not bindir:
        sys.exit("MARINESIM_MOOS_BIN must name a MOOS-IvP bin folder (the real apps)")
    src = SHARED / "missions" / "survey"
    if not src.is_dir():
        sys.exit(f"{src} not present (../shared)")
    work = Path(tempfile.mkdtemp(prefix="bench_moos_batch_"))
    res: dict[str, Any] = {"loadavg_start": os.getloadavg()}
    # the shell loop first: one mission at a time
    t0 = time.monotonic()
    loop_runs = []
    for i in range(args.loop):
        log = pantler_once(src, work / f"loop{i}", bindir)
        loop_runs.append({"completed": log is not None, **(judge(log, src) if log else {})})
    loop_wall = time.monotonic() - t0
    n_loop = sum(r["completed"] for r in loop_runs)
    res["loop"] = {
        "runs": loop_runs,
        "wall_s": loop_wall,
        "missions_per_hour": n_loop / loop_wall * 3600.0,
        "in_bands": sum(bool(r.get("in_bands")) for r in loop_runs),
    }
    print(f"shell loop: {n_loop}/{args.loop} completed in {loop_wall:.0f} s: "
          f"{res['loop']['missions_per_hour']:.0f} missions/h, "
          f"{res['loop']['in_bands']} in the bands")  # fmt: skip
    t0 = time.monotonic()
    b = run_batch(
        src / "survey.moos",
        replicas=args.runs,
        workers=args.workers,
        outdir=work / "batch",
        reference=src / "survey_usm_run1.alog",
        timeout_moos=400.0,
        bindir=bindir,
    )
    batch_wall = time.monotonic() - t0
    runs = b.runs
    judged = []
    for rid, done in zip(runs["run_id"], runs["completed"], strict=True):
        log = work / "batch" / "runs" / f"{int(rid):05d}" / "observer.alog"
        j = judge(log, src) if done else {"in_bands": False, "why": "not completed"}
        judged.append({"run_id": int(rid), "completed": bool(done), **j})
    n_done = int(runs["completed"].sum())
    res["batch"] = {
        "runs": judged,
        "wall_s": batch_wall,
        "completed": n_done,
        "in_bands": sum(bool(r["in_bands"]) for r in judged),
        "missions_per_hour": n_done / batch_wall * 3600.0,
        "late_iterations_max": float(runs["late_iterations"].max()),
        "reasons": [str(r) for r in runs["reason"].fillna("") if str(r)],
    }
    res["loadavg_end"] = os.getloadavg()
    print(f"moos batch: {n_done}/{args.runs} completed in {batch_wall:.0f} s: "
          f"{res['batch']['missions_per_hour']:.0f} missions/h, "
          f"{res['batch']['in_bands']} in the bands")  # fmt: skip
    for r in judged:
        if not r["in_bands"]:
            print(f"  run {r['run_id']}: {r['why']}")
    print(f"ratio batch / loop: "
          f"{res['batch']['missions_per_hour'] / max(res['loop']['missions_per_hour'], 1e-9):.2f}; "
          f"load average at start {res['loadavg_start']}, at end {res['loadavg_end']}")  # fmt: skip
    write_report(
        "bench_moos_batch",
        "PYTHONPATH=src python benchmarks/bench_moos_batch.py " + " ".join(sys.argv[1:]),
        res,
        args.out,
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
