"""Opt-in, with the real MOOS-IvP programs (``pytest -m live``, ``MARINESIM_MOOS_BIN``):

* the pAntler recipe of ``docs/guide/moos-batch.md`` as written (the two-line wrapper on the
  PATH, the simulator's ``Run =`` line given to it, ``pAntler MISSION.moos``), repeated, judged
  by the recorded bands (``reference/moos_live`` README §2.4);
* a uSimMarineV22 depth mission (pMarinePIDV22 with depth control, the helm holding 4 m):
  completes and dives with marinesim, as with the real uSimMarineV22;
* ``marinesim moos batch`` of the survey with the real apps on two workers.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from marinesim.batch.moos import run_batch
from marinesim.core.alog import read_alog
from marinesim.interop.moos.spread import compare_tracks, mission_track

_spec = importlib.util.spec_from_file_location(
    "_live_mission", Path(__file__).with_name("test_live_mission.py")
)
assert _spec is not None and _spec.loader is not None
_live = importlib.util.module_from_spec(_spec)
sys.modules["_live_mission"] = _live
_spec.loader.exec_module(_live)
CASES, SHARED, _free_port = _live.CASES, _live.SHARED, _live._free_port

MOOS_BIN = os.environ.get("MARINESIM_MOOS_BIN")
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not MOOS_BIN, reason="MARINESIM_MOOS_BIN not set (real MOOS-IvP)"),
    pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present"),
]
SIM_LINE = re.compile(r"^(\s*)Run\s*=\s*(uSimMarine(?:V22)?)\b.*$", re.MULTILINE)


def _judge(log: Path, case: dict, src: Path) -> dict[str, float]:
    tr = mission_track(log)
    assert [v for _t, v in tr.wpt_changes] == [0, 1, 2, 3, 4, 5, 0]
    mean, tol = case["duration"]
    assert abs(tr.duration_from_motion - mean) <= tol, tr.duration_from_motion
    worst: dict[str, float] = {}
    for i in (1, 2, 3):
        m = compare_tracks(tr, mission_track(src / f"{case['stem']}_run{i}.alog"))
        assert m["max_dist_equal_along_track_m"] <= case["along"], (i, m)
        assert m["hausdorff_m"] <= case["hausdorff"], (i, m)
        assert m["max_dist_equal_time_from_motion_start_m"] <= case["equal_time"], (i, m)
        for k, v in m.items():
            worst[k] = max(worst.get(k, 0.0), v)
    return worst


def _pantler(mission: Path, cwd: Path, until: str, timeout: float) -> Path | None:
    """The recipe: wrapper on the PATH, ``marinesim moos MISSION NAME --prepare`` (when the
    mission runs marinesim), ``pAntler MISSION``; the pLogger log once ``until``
    is in it (None if never), after 2 s of coasting; pAntler stopped with SIGINT."""
    wrapper = cwd / "usim_marinesim"
    wrapper.write_text('#!/bin/sh\nexec marinesim moos "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(cwd), str(MOOS_BIN), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])  # fmt: skip
    # the docs' recipe stores the simulator's start record first (no MOOSDB needed)
    sim = re.search(r"usim_marinesim\s*@.*~\s*(uSimMarine\w*)", mission.read_text())
    if sim is not None:
        subprocess.run(["marinesim", "moos", mission.name, sim.group(1), "--prepare"], cwd=cwd,
                       env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
    out = (cwd / "antler.out").open("wb")
    antler = subprocess.Popen(["pAntler", mission.name], cwd=cwd, env=env, stdout=out,
                              stderr=out, start_new_session=True)  # fmt: skip
    found = None
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end and antler.poll() is None:
            logs = sorted((cwd / "logs").glob("**/*.alog"))
            if logs and re.search(until, logs[0].read_text(errors="replace")):
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


def _setup(folder: str, cwd: Path, sim: str | None) -> Path:
    case = CASES[folder]
    src = SHARED / folder
    text = (src / str(case["moos"])).read_text(encoding="utf-8")
    text = re.sub(r"ServerPort\s*=\s*\d+", f"ServerPort   = {_free_port()}", text, count=1)
    text = re.sub(r"ServerHost\s*=\s*\S+", "ServerHost   = 127.0.0.1", text, count=1)
    if sim is not None:  # the docs' one-line change
        text = SIM_LINE.sub(lambda m: f"{m.group(1)}Run = usim_marinesim @ NewConsole = false ~ "
                            f"{m.group(2)}", text)  # fmt: skip
    mission = cwd / str(case["moos"])
    mission.write_text(text, encoding="utf-8")
    (cwd / "survey.bhv").write_bytes((src / "survey.bhv").read_bytes())
    (cwd / "logs").mkdir(exist_ok=True)
    return mission


@pytest.mark.parametrize("rep", [1, 2, 3])
@pytest.mark.parametrize("folder", ["survey", "survey_v22"])
def test_pantler_recipe_as_documented(folder: str, rep: int, tmp_path: Path) -> None:
    mission = _setup(folder, tmp_path, sim="marinesim")
    log = _pantler(mission, tmp_path, r"\sMISSION\s+\S+\s+complete", 150)
    assert log is not None, (tmp_path / "antler.out").read_text(errors="replace")[-3000:]
    worst = _judge(log, CASES[folder], SHARED / folder)
    print(folder, rep, {k: round(v, 3) for k, v in worst.items()})


DEPTH_BHV = """
Behavior = BHV_ConstantDepth
{
  name      = hold_depth
  pwt       = 100
  condition = DEPLOY = true
  depth     = 4
  duration  = no-time-limit
}
"""


def _depth_mission(cwd: Path, sim: str) -> Path:
    mission = _setup("survey_v22", cwd, sim=sim if sim == "marinesim" else None)
    text = mission.read_text(encoding="utf-8")
    text = text.replace("depth_control = false", "depth_control = true\n"
        "  z_to_pitch_pid_kp = 0.12\n  z_to_pitch_pid_kd = 0.1\n  z_to_pitch_pid_ki = 0.004\n"
        "  z_to_pitch_pid_integral_limit = 0.05\n  pitch_pid_kp = 0.5\n  pitch_pid_kd = 1.0\n"
        "  pitch_pid_ki = 0\n  pitch_pid_integral_limit = 0\n  maxpitch = 15\n"
        "  maxelevator = 13")  # fmt: skip
    text = text.replace(
        "domain    = speed:0:4:41", "domain    = speed:0:4:41\n  domain    = depth:0:10:101"
    )
    text = text.replace("Log = NAV_DEPTH @ 0", "Log = NAV_DEPTH @ 0\n  Log = NAV_PITCH @ 0")
    mission.write_text(text, encoding="utf-8")
    with (cwd / "survey.bhv").open("a", encoding="utf-8") as fh:
        fh.write(DEPTH_BHV)
    return mission


@pytest.mark.parametrize("sim", ["marinesim", "uSimMarineV22"])
def test_v22_depth_mission_dives_and_completes(sim: str, tmp_path: Path) -> None:
    mission = _depth_mission(tmp_path, sim)
    log = _pantler(mission, tmp_path, r"\sMISSION\s+\S+\s+complete", 200)
    assert log is not None, (tmp_path / "antler.out").read_text(errors="replace")[-3000:]
    alog = read_alog(log)
    _t, depth = alog.numeric("NAV_DEPTH")
    _t, elev = alog.numeric("DESIRED_ELEVATOR")
    print(sim, "max depth", depth.max(), "final depth", depth[-1])
    assert np.any(elev != 0.0)  # pMarinePIDV22 acted on depth
    assert 3.5 <= float(np.median(depth[len(depth) // 2 :])) <= 4.5


def test_moos_batch_survey_with_real_apps(tmp_path: Path) -> None:
    src = SHARED / "survey"
    res = run_batch(src / "survey.moos", replicas=4, workers=2, outdir=tmp_path / "b",
                    reference=src / "survey_usm_run1.alog", timeout_moos=400.0)  # fmt: skip
    runs = res.runs
    print(runs[["run_id", "status", "reason", "t_complete_s", "hausdorff_to_reference_m",
                "late_iterations", "wall_s"]].to_string())  # fmt: skip
    assert runs["completed"].all()
    for rid in runs["run_id"]:
        _judge(tmp_path / "b" / "runs" / f"{int(rid):05d}" / "observer.alog", CASES["survey"], src)
