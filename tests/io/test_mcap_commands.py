"""``--format mcap`` of the commands beside ``run``: ``demo``, ``usm run`` and ``batch``.

Each MCAP is decoded with rosbags (an independent reader) and compared number by number with
the command's own table log (Parquet, CSV or the batch track log).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("mcap")
pytest.importorskip("mcap_ros2")
pytest.importorskip("rosbags")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_mcap as tm  # noqa: E402

from marinesim.cli.main import main  # noqa: E402
from marinesim.core.geodesy import MoosGeodesy  # noqa: E402
from marinesim.io.mcap.reader import read_messages  # noqa: E402

MISSION = """LatOrigin = 42.358456
LongOrigin = -71.087589

ProcessConfig = uSimMarine
{
  AppTick = 10
  prefix = NAV
  start_heading = 90
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}
"""
EVENTS = "event = var=DESIRED_THRUST, val=50, time=0\nevent = var=DESIRED_RUDDER, val=20, time=2\n"


def _decoded(path: Path) -> list[tuple[str, str, float, Any]]:
    """rosbags' messages, checked against our reader's (same topics, types and times)."""
    bag = tm._rosbags_messages(path)
    ours = list(read_messages(path))
    assert len(bag) == len(ours) > 0
    out = []
    for (topic, typ, ts, msg), (t2, typ2, tsec, _m) in zip(bag, ours, strict=True):
        assert (topic, typ) == (t2, typ2) and ts == round(tsec * 1e9)
        out.append((topic, typ, tsec, msg))
    return out


def test_demo_format_mcap_equals_its_parquet_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "demo"
    rc = main(["demo", "--end", "4", "--no-plot", "--format", "mcap", "-o", str(out)])
    assert rc == 0, capsys.readouterr()
    assert "log.mcap" in capsys.readouterr().out
    pq = tm.ParquetRows(out)
    geo = MoosGeodesy(*pd.read_json(out / "manifest.json", typ="series")["origin"])
    checks: dict[str, int] = {}
    for topic, _typ, t, msg in _decoded(out / "log.mcap"):
        checks[topic] = checks.get(topic, 0) + tm._check_message(topic, msg, t, pq, geo)
    frames = len(np.unique(pq.df["t"]))
    assert checks["/clock"] == frames
    vehicles = sorted(pq.names)
    assert len(vehicles) == 3
    for v in vehicles:  # every frame of every vehicle's odometry equals the Parquet row
        assert checks[f"/{v}/odom/truth"] == frames
        assert checks[f"/{v}/location"] == frames


def test_usm_run_format_mcap_equals_its_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mission = tmp_path / "m.moos"
    mission.write_text(MISSION)
    ev = tmp_path / "ev.txt"
    ev.write_text(EVENTS)
    out = tmp_path / "out"
    argv = ["usm", "run", str(mission), "--duration", "20", "--script", str(ev)]
    rc = main([*argv, "-o", str(out), "--format", "mcap"])
    assert rc == 0, capsys.readouterr()
    csv = pd.read_csv(out / "log.csv")
    rows = {round(t * 1e9): i for i, t in enumerate(csv["t"])}
    geo = MoosGeodesy(42.358456, -71.087589)
    counts: dict[str, int] = {}
    for topic, _typ, t, m in _decoded(out / "log.mcap"):
        counts[topic] = counts.get(topic, 0) + 1
        r = csv.iloc[rows[round(t * 1e9)]]
        north, east, depth = r["y"], r["x"], r["depth"]
        if topic == "/uSimMarine/odom/truth":
            assert np.array_equal(tm._enu(m.pose.pose.position), [north, east, depth])
            assert tm._dheading(tm._heading(m.pose.pose.orientation), r["heading"]) < 1e-9
            assert m.twist.twist.linear.x == r["speed"]
            assert m.header.frame_id == "map" and m.child_frame_id == "uSimMarine/base_link"
        elif topic == "/uSimMarine/gps/fix":  # the published NAV_LAT / NAV_LONG, as published
            assert (m.latitude, m.longitude) == (r["NAV_LAT"], r["NAV_LONG"])
        elif topic == "/uSimMarine/location":
            lat, lon = geo.local_to_latlon(east, north)
            assert (m.latitude, m.longitude, m.altitude) == (float(lat), float(lon), -depth)
        elif topic == "/tf":
            (tr,) = m.transforms
            assert np.array_equal(tm._enu(tr.transform.translation), [north, east, depth])
        elif topic == "/clock":
            assert round(tm._stamp(m.clock) * 1e9) == round(t * 1e9)
    assert counts["/clock"] == counts["/uSimMarine/odom/truth"] == len(csv) == 201
    published = int(csv["NAV_LAT"].notna().sum())
    assert counts["/uSimMarine/gps/fix"] == published > 0
    assert counts["/tf_static"] == 1 and counts["/scene"] == len(csv)
    # the vehicle turns: the odometry carries a changing heading (not a constant default)
    assert csv["heading"].max() - csv["heading"].min() > 30


def test_usm_run_without_datum_has_no_geographic_topics(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mission = tmp_path / "m.moos"
    mission.write_text(MISSION.split("\n", 2)[2])  # no LatOrigin / LongOrigin
    out = tmp_path / "log.csv"
    rc = main(["usm", "run", str(mission), "--duration", "2", "-o", str(out), "--format", "mcap"])
    assert rc == 0, capsys.readouterr()
    topics = {topic for topic, *_ in read_messages(tmp_path / "log.mcap")}
    assert "/uSimMarine/odom/truth" in topics
    assert not {tp for tp in topics if tp.endswith(("gps/fix", "location"))}


def test_usm_run_bad_format_is_a_config_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mission = tmp_path / "m.moos"
    mission.write_text(MISSION)
    rc = main(["usm", "run", str(mission), "--duration", "1", "-o", str(tmp_path), "--format", "x"])
    err = capsys.readouterr().err
    assert rc == 2 and "--format" in err and "csv, mcap" in err
    assert not (tmp_path / "log.mcap").exists()


SMALL = str(Path(__file__).resolve().parents[1] / "data" / "batch" / "mc_small.yaml")


def test_batch_format_mcap_one_file_per_run_equal_to_its_track_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "b"
    argv = ["batch", SMALL, "--replicas", "3", "--workers", "1", "--set", "time.end=12"]
    rc = main([*argv, "--format", "mcap", "--no-plot", "-o", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert f"mcap: {out / 'mcap'}" in text
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(p.stem for p in (out / "mcap").glob("*.mcap")) == sorted(runs["run_id"])
    rid = sorted(runs["run_id"])[1]  # a stacked replica other than the first
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(out / "logs" / f"run_id={rid}" / "part.parquet", one / "log.parquet")
    pq = tm.ParquetRows(one)
    geo = MoosGeodesy(42.358456, -71.087589)  # the scenario's origin
    checks: dict[str, int] = {}
    for topic, _typ, t, msg in _decoded(out / "mcap" / f"{rid}.mcap"):
        checks[topic] = checks.get(topic, 0) + tm._check_message(topic, msg, t, pq, geo)
    frames = len(np.unique(pq.df["t"]))
    assert frames >= 10 and checks["/clock"] == frames
    assert sorted(pq.names) == ["auv_0", "auv_1"]  # namespaced per vehicle as in run
    for v in pq.names:
        assert checks[f"/{v}/odom/truth"] == checks[f"/{v}/location"] == frames
    # the replicas differ (spawn spread): each file holds its own run, not the first one's
    other = tm.ParquetRows(one)
    other.df = pd.read_parquet(out / "logs" / f"run_id={sorted(runs['run_id'])[0]}")
    assert not np.array_equal(other.df["truth.pos.north"], pq.df["truth.pos.north"])


def test_batch_format_mcap_needs_the_track_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["batch", SMALL, "--replicas", "1", "--workers", "1", "-o", str(tmp_path / "b")]
    assert main([*argv, "--format", "mcap", "--no-logs"]) == 2
    assert "drop --no-logs" in capsys.readouterr().err
    assert main([*argv, "--format", "csv"]) == 2
    assert "unknown log format 'csv'" in capsys.readouterr().err
