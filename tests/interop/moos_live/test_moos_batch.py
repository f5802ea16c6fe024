"""``marinesim moos batch`` end to end in CI: the stand-in MOOSDB and a small pilot program
in place of the real apps (the live test flies the real ones), two workers on Dask, a sweep
over the start position and the pilot's thrust, one run that hangs (cut at the timeout), one
whose program is missing."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pandas as pd
import pytest

from marinesim.batch.moos import mission_for_run, parse_moos_sweep, plan_runs, run_batch
from marinesim.core.alog import read_alog
from marinesim.core.errors import ConfigError

SRC = Path(__file__).resolve().parents[3] / "src"

MISSION = """ServerHost   = localhost
ServerPort   = 9000
Community    = batch
MOOSTimeWarp = 10
LatOrigin    = 42.358456
LongOrigin   = -71.087589

ProcessConfig = ANTLER
{
  MSBetweenLaunches = 200
  Run = MOOSDB      @ NewConsole = false
  Run = usim_marinesim @ NewConsole = false ~ uSimMarine
  Run = uPilot      @ NewConsole = false ~ uPilot
}

ProcessConfig = uSimMarine
{
  AppTick    = 10
  CommsTick  = 10
  start_pos  = x=0, y=0, heading=90, speed=0, depth=0
  prefix     = NAV
  turn_rate  = 70
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}

ProcessConfig = uPilot
{
  thrust = 40
  run_for = 10
}
"""

# A pilot: posts DEPLOY and DESIRED_THRUST, then MISSION=complete after run_for MOOS s
# (thrust < 0: never completes, as a hung mission).
PILOT = r"""#!{python}
import sys, time
sys.path.insert(0, {src!r})
from marinesim.interop.moos.client import MoosClient
from marinesim.interop.moos.moosfile import read_moos_file
mf = read_moos_file(sys.argv[1])
blk = dict((k.lower(), v) for k, v, _ in mf.block("uPilot").entries)
warp = float(mf.global_value("MOOSTimeWarp"))
c = MoosClient("127.0.0.1", int(mf.global_value("ServerPort")), "uPilot", time_warp=warp)
c.connect(retry_for=10)
thrust, run_for = float(blk["thrust"]), float(blk["run_for"])
t0 = c.moos_time()
c.post([("DEPLOY", "true"), ("DESIRED_THRUST", abs(thrust))], t0)
while True:
    c.fetch(timeout=0.05)
    c.heartbeat()
    if thrust >= 0 and c.moos_time() - t0 >= run_for:
        c.post([("MISSION", "complete")], c.moos_time())
        time.sleep(0.5)
        break
"""


def _bin(tmp_path: Path) -> Path:
    b = tmp_path / "bin"
    b.mkdir()
    db = b / "MOOSDB"
    db.write_text(
        f'#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m marinesim.interop.moos.fakedb "$1"\n'
    )
    pilot = b / "uPilot"
    pilot.write_text(PILOT.format(python=sys.executable, src=str(SRC)))
    for f in (db, pilot):
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    return b


def test_mission_text_per_run() -> None:
    text = mission_for_run(MISSION, 41234, {"uSimMarine.start_pos": "x=5, y=0", "uPilot.new": "1"})
    assert "ServerPort = 41234" in text and "ServerHost = 127.0.0.1" in text
    assert "  start_pos = x=5, y=0" in text and "  new = 1" in text
    with pytest.raises(ConfigError, match="no 'ProcessConfig = pNothing'"):
        mission_for_run(MISSION, 1, {"pNothing.x": "1"})
    assert len(plan_runs({"a": ["1", "2"], "b": ["x", "y", "z"]}, 2)) == 12


def test_bad_sweep_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("grid:\n  uPilot.thrust: []\n")
    with pytest.raises(ConfigError, match="non-empty list") as e:
        parse_moos_sweep(p)
    assert "uPilot.thrust" in str(e.value)


def test_batch_end_to_end_with_the_stand_in_db(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    b = _bin(tmp_path)
    # the simulator wrapper of the docs is not needed by the batch: marinesim takes its place
    mdir = tmp_path / "mission"
    mdir.mkdir()
    (mdir / "m.moos").write_text(MISSION)
    (mdir / "extra.bhv").write_text("// copied into every run\n")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "grid:\n  uPilot.thrust: [40, 80, -40]\n  uSimMarine.start_pos: ['x=0, y=0, heading=90']\n"
    )
    monkeypatch.setenv("PATH", f"{b}:{os.environ.get('PATH', '')}")
    res = run_batch(
        mdir / "m.moos",
        replicas=2,
        sweep=sweep,
        workers=2,
        outdir=tmp_path / "out",
        timeout_moos=250.0,  # 25 s wall: a loaded CI machine starts a Python app in seconds
        bindir=str(b),
        say=print,
    )
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert len(runs) == 6 and list(runs["run_id"]) == list(range(6))
    ok = runs[runs["uPilot.thrust"] != -40]
    hung = runs[runs["uPilot.thrust"] == -40]
    assert ok["completed"].all(), runs[["run_id", "status", "reason"]]
    assert (hung["status"] == "not completed").all() and hung["reason"].str.contains(
        "timeout"
    ).all()
    # 10 MOOS s of pilot time at 2 m/s (thrust 40) or 4 m/s (thrust 80), after the speed ramp
    for thrust, speed in ((40, 2.0), (80, 4.0)):
        r = runs[runs["uPilot.thrust"] == thrust]
        assert (r["path_length_m"] < 10.5 * speed).all() and (r["path_length_m"] > 5 * speed).all()
        assert ((r["t_complete_s"] > 8.0) & (r["t_complete_s"] < 11.0)).all()
    # each run flew in its own folder with the mission's files and logs
    one = tmp_path / "out" / "runs" / "00000"
    assert (one / "extra.bhv").is_file() and "ServerPort = " in (one / "mission.moos").read_text()
    assert len(read_alog(one / "marinesim.alog").numeric("NAV_X")[0]) > 50
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    rate = summary[summary["metric"] == "completion_rate"].iloc[0]
    assert rate["mean"] == pytest.approx(4 / 6) and rate["ci95_low"] < 4 / 6 < rate["ci95_high"]
    t = summary[summary["metric"] == "t_complete_s"].iloc[0]
    assert t["n"] == 4 and t["ci95_low"] <= t["mean"] <= t["ci95_high"]
    assert res.runs["completed"].sum() == 4


def test_missing_program_fails_the_run_not_the_batch(tmp_path: Path) -> None:
    b = _bin(tmp_path)
    (b / "uPilot").unlink()
    mdir = tmp_path / "mission"
    mdir.mkdir()
    (mdir / "m.moos").write_text(MISSION)
    res = run_batch(mdir / "m.moos", workers=1, outdir=tmp_path / "o", bindir=str(b), say=print)
    row = res.runs.iloc[0]
    assert row["status"] == "failed" and "uPilot" in row["reason"]
