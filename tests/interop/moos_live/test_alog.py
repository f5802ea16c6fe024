"""``.alog``: pLogger's line and header format, reading real pLogger logs (multi-line values
included) into the run tables, round trips, and the CLI writing / plotting ``.alog``."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.main import main
from marinesim.io.alog import (
    AlogWriter,
    alog_to_result,
    format_line,
    load_alog_result,
    read_alog,
    write_result_alog,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present")
PLOGGER = DATA / "d_plogger.CAPD.alog"  # written by the real pLogger (capture session d)


def _real_logs() -> list[Path]:
    logs = [PLOGGER]
    if SHARED.is_dir():
        logs += sorted((SHARED / "missions").glob("*/*.alog"))
    return logs


@pytest.mark.parametrize("path", _real_logs(), ids=lambda p: p.name)
def test_single_line_records_reformat_to_the_same_bytes(path: Path) -> None:
    """Every single-line record of a real pLogger log is rewritten byte for byte."""
    lines = path.read_text(encoding="utf-8").splitlines()
    log = read_alog(path)
    checked = 0
    for r in log.records:
        if isinstance(r.value, str) and "\n" in r.value:
            continue
        original = lines[r.line - 1]
        assert format_line(r.t, r.var, r.src, r.value) == original, original
        checked += 1
    assert checked > 0.9 * len(log.records)


def test_real_plogger_log_reads(tmp_path: Path) -> None:
    log = read_alog(PLOGGER)
    assert log.logstart == 1795508741.511142
    assert log.header[0] == "%" * 59 and log.header[3].startswith("%% LOGSTART")
    summaries = [r for r in log.records if r.var == "DB_VARSUMMARY"]
    assert len(summaries) == 5
    text = summaries[0].value
    assert (
        isinstance(text, str) and text.count("\n") == 36 and "BUOYANCY_RATE" in text
    )  # 36 continuation lines
    note = log.series("NOTE")[1]
    assert note and isinstance(note[0], str)
    t, h = log.numeric("NAV_HEADING")
    assert len(t) == 14 and len(log.numeric("NAV_X")[0]) == 63  # NAV_HEADING logged '@ 0.5'
    res = alog_to_result(log)
    assert res.entities[0]["name"] == "uSimMarine"
    assert res["truth.pos"].shape == (1, len(np.unique(log.numeric("NAV_X")[0])), 3)
    df = log.to_pandas()
    assert list(df.columns) == ["t", "var", "src", "dval", "sval"] and len(df) == len(log.records)


@needs_shared
def test_real_mission_log_into_run_tables() -> None:
    """README §2.2: 2462 NAV samples, path 431.8 m from DEPLOY to MISSION=complete."""
    path = SHARED / "missions" / "survey" / "survey_usm_run1.alog"
    res = load_alog_result(path)
    assert len(res.t) == 2462
    log = read_alog(path)
    deploy = next(r.t for r in log.records if r.var == "DEPLOY" and r.value == "true")
    done = next(r.t for r in log.records if r.var == "MISSION" and r.value == "complete")
    keep = (res.t >= deploy) & (res.t <= done)
    ne = res["truth.pos"][0, keep, :2]
    path_m = float(np.sum(np.hypot(*np.diff(ne, axis=0).T)))
    assert abs(path_m - 431.8) < 0.05
    assert "helm.desired_heading" in res.signals and "moos.DESIRED_THRUST" in res.signals
    assert res.to_pandas().shape[0] == len(res.t)


def test_writer_header_and_streaming(tmp_path: Path) -> None:
    p = tmp_path / "a.alog"
    w = AlogWriter(p, logstart=17955095816.23682, flush_every=1)
    w.write(17955095816.23682 + 2.7869, "NAV_X", "uSimMarine", 0.0)
    w.write(17955095816.23682 + 6.71627, "MISSION", "pHelmIvP", "pending")
    w.write(17955095816.23682 + 7.0, "NAV_X", "uSimMarine", float("nan"))  # skipped
    lines = p.read_text(encoding="utf-8").splitlines()  # readable before close
    assert lines[3] == "%% LOGSTART           17955095816.23682"
    assert lines[5] == "2.78690         NAV_X                uSimMarine      0.00000      "
    assert lines[6] == "6.71627         MISSION              pHelmIvP        pending "
    assert len(lines) == 7
    w.close()


def test_run_result_round_trip(tmp_path: Path) -> None:
    from marinesim.scenario import load_simulation

    res = load_simulation("remus100_survey", sets=["time.end=6"]).run()
    write_result_alog(res, tmp_path / "r.alog")
    back = load_alog_result(tmp_path / "r.alog")
    assert np.allclose(back.t, res.t)
    for name in ("truth.pos", "truth.heading", "truth.speed"):
        assert np.max(np.abs(back[name] - res[name])) <= 5.1e-6  # 5 printed decimals
    # what alogview draws from: one NODE_REPORT_LOCAL per entity and frame, a real LOGSTART
    log = read_alog(tmp_path / "r.alog")
    assert abs(log.logstart - time.time()) < 600
    t, reps = log.series("NODE_REPORT_LOCAL")
    assert len(reps) == len(res.t) * len(res.entities)
    last = dict(kv.split("=", 1) for kv in reps[-1].split(","))
    assert last["MODE"] == "NOHELM-EVER" and last["TYPE"] == "kayak"
    east, north = res["truth.pos"][-1, -1, 1], res["truth.pos"][-1, -1, 0]
    assert abs(float(last["X"]) - east) <= 0.006 and abs(float(last["Y"]) - north) <= 0.006
    # one vehicle: its MOOSDB's clock names it (alogview's vehicle name), once per second
    name = str(res.entities[0]["name"])
    db = [r for r in log.records if r.var == "DB_TIME"]
    assert {r.src for r in db} == {f"MOOSDB_{name}"} and not log.series("NODE_REPORT")[1]
    secs = [math.floor(log.logstart + r.t) for r in db]
    assert secs == sorted(set(secs)) and len(db) >= 6  # one per second of MOOS time
    assert all(r.value == pytest.approx(log.logstart + r.t, abs=1e-6) for r in db)


def test_several_vehicles_log_shoreside_node_reports(tmp_path: Path) -> None:
    # one log of several vehicles: NODE_REPORT per vehicle (the shoreside form, which
    # alogview draws as one vessel per NAME); no DB_TIME: no one vehicle owns the log
    from marinesim.scenario import load_simulation

    res = load_simulation("demo_survey", sets=["time.end=3"]).run()
    write_result_alog(res, tmp_path / "r.alog")
    log = read_alog(tmp_path / "r.alog")
    names = [str(e["name"]) for e in res.entities]
    assert len(names) == 3
    t, reps = log.series("NODE_REPORT")
    assert len(reps) == len(res.t) * 3 and not log.series("NODE_REPORT_LOCAL")[1]
    assert [r.split(",", 1)[0] for r in reps[:3]] == [f"NAME={n}" for n in names]
    assert not [r for r in log.records if r.var == "DB_TIME"]
    last = dict(kv.split("=", 1) for kv in reps[-1].split(","))
    east, north = res["truth.pos"][2, -1, 1], res["truth.pos"][2, -1, 0]
    assert abs(float(last["X"]) - east) <= 0.006 and abs(float(last["Y"]) - north) <= 0.006


def test_usm_run_writes_alog_and_plot_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mission = tmp_path / "m.moos"
    mission.write_text(
        "LatOrigin = 42.358456\nLongOrigin = -71.087589\nProcessConfig = uSimMarine\n{\n"
        " AppTick = 10\n prefix = NAV\n thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5\n}\n",
        encoding="utf-8",
    )
    events = tmp_path / "ev.txt"
    events.write_text(
        "event = var=DESIRED_THRUST, val=40, time=1\nevent = var=DESIRED_RUDDER, val=20, time=3\n",
        encoding="utf-8",
    )
    common = ["usm", "run", str(mission), "--duration", "12", "--script", str(events)]
    assert main([*common, "-o", str(tmp_path / "run.alog")]) == 0
    assert main([*common, "-o", str(tmp_path / "run.csv")]) == 0
    text = (tmp_path / "run.alog").read_text(encoding="utf-8")
    assert text.startswith("%" * 59) and "," not in text.splitlines()[6]  # not CSV
    import pandas as pd

    csv = pd.read_csv(tmp_path / "run.csv")
    t, x = read_alog(tmp_path / "run.alog").numeric("NAV_X")
    assert len(x) == 120
    assert np.max(np.abs(x - csv["NAV_X"].to_numpy()[1:])) <= 5e-6
    assert np.allclose(t, csv["t"].to_numpy()[1:])
    log = read_alog(tmp_path / "run.alog")
    # the inputs, as posted (on change), the node reports, a real LOGSTART
    tt, thrust = log.series("DESIRED_THRUST")
    assert thrust == [0.0, 40.0] and abs(tt[1] - 1.0) < 0.11
    assert log.series("DESIRED_RUDDER")[1][-1] == 20.0
    t_rep, reps = log.series("NODE_REPORT_LOCAL")
    assert len(reps) == 120 and np.allclose(t_rep, t)
    f = dict(kv.split("=", 1) for kv in reps[-1].split(","))
    assert f["NAME"] == "uSimMarine" and abs(float(f["X"]) - x[-1]) <= 0.006
    assert abs(log.logstart - time.time()) < 600
    # the vehicle's name for alogview: DB_TIME from its MOOSDB (no Community: the process)
    assert {r.src for r in log.records if r.var == "DB_TIME"} == {"MOOSDB_uSimMarine"}
    named = tmp_path / "named.moos"
    named.write_text("Community = alpha\n" + mission.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["usm", "run", str(named), "--duration", "3", "-o", str(tmp_path / "a.alog")]) == 0
    db = [r for r in read_alog(tmp_path / "a.alog").records if r.var == "DB_TIME"]
    assert {r.src for r in db} == {"MOOSDB_alpha"} and 3 <= len(db) <= 4
    capsys.readouterr()
    assert main(["plot", str(tmp_path / "run.alog"), "-o", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig" / "trajectory.png").stat().st_size > 10_000


def test_missing_and_garbage_alog_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", str(tmp_path / "none.alog")]) == 2
    assert "none.alog" in capsys.readouterr().err
    bad = tmp_path / "bad.alog"
    bad.write_text("hello world\n", encoding="utf-8")
    assert main(["plot", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.alog:1" in err and "Traceback" not in err
