"""Closed loop with the real MOOS-IvP programs (opt-in: ``pytest -m live`` with
``MARINESIM_MOOS_BIN`` = the directory holding MOOSDB, pLogger, pMarinePID(V22), pHelmIvP,
uTimerScript).

The recorded ``survey`` missions run as they were recorded (README §2.1 of
``reference/moos_live``: the ANTLER list started one program at a time 0.2 s apart, stopped
2 s wall after MISSION=complete with SIGINT in reverse order), with ``marinesim moos`` in
place of uSimMarine / uSimMarineV22.  Pass criteria: README §2.4 A (about 1.5x the 10-run
spread of the real simulator).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from marinesim.interop.moos.moosfile import read_moos_file
from marinesim.interop.moos.spread import compare_tracks, mission_track

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "missions"
MOOS_BIN = os.environ.get("MARINESIM_MOOS_BIN")
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not MOOS_BIN, reason="MARINESIM_MOOS_BIN not set (real MOOS-IvP)"),
    pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present"),
]

#: README §2.2 / §2.4: WPT_INDEX change times after motion start (means), and the criteria.
CASES = {
    "survey": dict(
        moos="survey.moos",
        stem="survey_usm",
        wpt=[16.55, 56.81, 93.53, 129.24, 163.19, 189.32],
        duration=(220.50, 0.75),
        wpt_tol=0.6,
        along=0.7,
        hausdorff=0.6,
        equal_time=0.75,
    ),
    "survey_v22": dict(
        moos="survey_v22.moos",
        stem="survey_v22",
        wpt=[18.65, 61.69, 103.56, 143.65, 182.95, 212.58],
        duration=(243.85, 1.0),
        wpt_tol=1.0,
        along=1.0,
        hausdorff=1.0,
        equal_time=1.6,
    ),
}
SIMULATORS = ("usimmarine", "usimmarinev22")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _launch(mission: Path, cwd: Path) -> list[subprocess.Popen[bytes]]:
    """Start the ANTLER list in order, 0.2 s apart, as pAntler does.

    A MOOS-IvP app takes its configuration block from its process name, which is its
    ``argv[0]`` as pAntler runs it (a bare name found on the PATH): started by full path, the
    app looks for ``ProcessConfig = /path/to/pHelmIvP`` and runs on defaults (AppTick 5, no
    behaviours).  ``marinesim moos`` needs 0.5 to 1.5 s of CPU to start (Python imports,
    the model's first calls) where uSimMarine needs milliseconds; the programs launched
    after it would be slowed by that start-up on a small machine and see DEPLOY at other
    moments than in the recordings, so the next program starts 0.2 s after marinesim has
    joined the DB.
    """
    mf = read_moos_file(mission)
    runs = [v for k, v, _line in mf.block("ANTLER").entries if k.lower() == "run"]
    procs = []
    for run in runs:
        name = run.split("@")[0].strip()
        out_path = cwd / f"{name}.out"
        out = out_path.open("wb")
        if name.lower() in SIMULATORS:
            cmd = [sys.executable, "-m", "marinesim", "moos", str(mission), name,
                   "-o", str(cwd / "marinesim.alog"), "--connect-timeout", "20"]  # fmt: skip
            p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
            end = time.monotonic() + 30
            while b"connected to MOOSDB" not in out_path.read_bytes():
                assert p.poll() is None and time.monotonic() < end, out_path.read_text()
                time.sleep(0.02)
        else:
            exe = str(Path(MOOS_BIN or "") / name)
            p = subprocess.Popen(
                [name, str(mission)], executable=exe, cwd=cwd, stdout=out, stderr=subprocess.STDOUT
            )
        procs.append(p)
        time.sleep(0.2)  # pAntler's MSBetweenLaunches = 200
    return procs


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)


@pytest.mark.parametrize("folder", list(CASES))
def test_real_helm_flies_marinesim(folder: str, tmp_path: Path) -> None:
    case = CASES[folder]
    src = SHARED / folder
    text = (src / str(case["moos"])).read_text(encoding="utf-8")
    text = re.sub(r"ServerPort\s*=\s*\d+", f"ServerPort = {_free_port()}", text, count=1)
    mission = tmp_path / str(case["moos"])
    mission.write_text(text, encoding="utf-8")
    (tmp_path / "survey.bhv").write_bytes((src / "survey.bhv").read_bytes())
    (tmp_path / "logs").mkdir()  # pLogger's PATH: it does not create missing parents
    procs = _launch(mission, tmp_path)
    log: Path | None = None
    try:
        end = time.monotonic() + 90
        while time.monotonic() < end:
            logs = sorted((tmp_path / "logs").glob("**/*.alog"))
            if logs and re.search(
                r"\sMISSION\s+\S+\s+complete", logs[0].read_text(errors="replace")
            ):
                log = logs[0]
                break
            assert all(p.poll() is None for p in procs), "a program of the mission exited early"
            time.sleep(0.5)
        time.sleep(2.0)  # coast to a stop, as recorded
    finally:
        _stop(procs)
    assert log is not None, "MISSION=complete was never posted"
    tr = mission_track(log)
    values = [v for _t, v in tr.wpt_changes]
    assert values == [0, 1, 2, 3, 4, 5, 0]
    mean, tol = case["duration"]
    assert abs(tr.duration_from_motion - mean) <= tol, tr.duration_from_motion
    for (t, _v), want in zip(tr.wpt_changes[1:], case["wpt"], strict=True):
        assert abs(t - want) <= case["wpt_tol"], (t, want)
    for i in (1, 2, 3):
        ref = mission_track(src / f"{case['stem']}_run{i}.alog")
        m = compare_tracks(tr, ref)
        assert m["max_dist_equal_along_track_m"] <= case["along"], (i, m)
        assert m["hausdorff_m"] <= case["hausdorff"], (i, m)
        assert m["max_dist_equal_time_from_motion_start_m"] <= case["equal_time"], (i, m)
