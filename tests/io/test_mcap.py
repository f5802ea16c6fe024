"""``--format mcap``: the rosbag2-compatible MCAP log of a run, read back and checked number by
number against the Parquet log of the same run."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("mcap")
pytest.importorskip("mcap_ros2")
rosbags = pytest.importorskip("rosbags")

from rosbags.highlevel import AnyReader  # noqa: E402
from rosbags.typesys import Stores, get_types_from_msg, get_typestore  # noqa: E402

from marinesim.core.geodesy import MoosGeodesy  # noqa: E402
from marinesim.core.units import G0, RHO_SEAWATER  # noqa: E402
from marinesim.io.mcap.msgdefs import DEFINITIONS, full_definition, schema_name  # noqa: E402
from marinesim.io.mcap.reader import load_mcap_result, read_messages  # noqa: E402
from marinesim.io.mcap.topics import ros_name  # noqa: E402
from marinesim.scenario import load_simulation  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
RUNS = {  # bundled scenario, end [s]: IMU/GPS/DVL/depth/EKF; thrusters/battery/wrench; rangefinder
    "auv_survey_ins": 12.0,
    "bluerov2_station_keeping": 2.0,
    "surftrak_sawtooth": 3.0,
}


def test_definitions_match_the_released_ros2_interfaces() -> None:
    """Every standard type's fields and constants equal those of rosbags' ROS 2 Humble store."""
    ref = get_typestore(Stores.ROS2_HUMBLE)
    checked = 0
    for pkg_type in DEFINITIONS:
        name = schema_name(pkg_type)
        mine = get_typestore(Stores.EMPTY)
        mine.register(get_types_from_msg(full_definition(pkg_type), name))
        if name in ref.fielddefs:
            assert mine.fielddefs[name] == ref.fielddefs[name], name
            checked += 1
    assert checked >= 25


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, end in RUNS.items():
        d = tmp_path_factory.mktemp(name)
        sim = load_simulation(name, sets=[f"time.end={end}"])
        sim.stream_to(d, "mcap")
        res = sim.run()
        assert res.status == "completed"
        out[name] = d
    return out


def _rosbags_messages(path: Path) -> list[tuple[str, str, int, Any]]:
    with AnyReader([path], default_typestore=get_typestore(Stores.EMPTY)) as r:
        return [
            (c.topic, c.msgtype, ts, r.deserialize(raw, c.msgtype)) for c, ts, raw in r.messages()
        ]


def _stamp(h: Any) -> float:
    return h.sec + h.nanosec * 1e-9


def _flu(v: Any) -> np.ndarray:
    return np.array([v.x, -v.y, -v.z])  # FLU message vector back to FRD


def _enu(v: Any) -> np.ndarray:
    return np.array([v.y, v.x, -v.z])  # ENU message vector back to NED


def _heading(q: Any) -> float:
    yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
    return (90.0 - math.degrees(yaw)) % 360.0


def _dheading(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


class ParquetRows:
    def __init__(self, run: Path) -> None:
        self.df = pd.read_parquet(run / "log.parquet")
        self.rows = {  # stamps are the frame times rounded to the nanosecond
            (e, round(t * 1e9)): i
            for i, (e, t) in enumerate(zip(self.df["entity"], self.df["t"], strict=True))
        }
        self.names = {ros_name(e): e for e in self.df["entity"].unique()}

    def get(self, v: str, t: float, cols: list[str]) -> np.ndarray:
        i = self.rows[(self.names[v], round(t * 1e9))]
        return self.df.iloc[i][cols].to_numpy(dtype=float)


def _check_message(topic: str, m: Any, t: float, pq: ParquetRows, geo: Any) -> int:
    """Compare one decoded message with the Parquet row of its vehicle and time; return checks."""
    parts = topic.strip("/").split("/")
    v = parts[0]
    if topic == "/clock":
        assert round(_stamp(m.clock) * 1e9) == round(t * 1e9)
        return 1
    if topic in ("/tf", "/tf_static", "/scene", "/scene/tracks"):
        if topic == "/tf":
            for tr in m.transforms:
                vv = tr.child_frame_id.split("/")[0]
                pos = pq.get(vv, t, ["truth.pos.north", "truth.pos.east", "truth.pos.down"])
                assert np.array_equal(_enu(tr.transform.translation), pos)
        if topic == "/scene":
            for e in m.entities:
                pos = pq.get(e.id, t, ["truth.pos.north", "truth.pos.east", "truth.pos.down"])
                assert np.array_equal(_enu(e.arrows[0].pose.position), pos)
        return 1
    kind = "/".join(parts[1:])
    if kind in ("odom/truth", "odom/belief"):
        pre = "truth" if kind == "odom/truth" else "belief"
        pos = pq.get(v, t, [f"{pre}.pos.north", f"{pre}.pos.east", f"{pre}.pos.down"])
        assert np.array_equal(_enu(m.pose.pose.position), pos)
        head = pq.get(v, t, [f"{pre}.heading"])[0]
        eul = [c for c in pq.df.columns if c.endswith(".euler.yaw")]
        if pre == "truth" and eul:
            head = pq.get(v, t, eul)[0]
        assert _dheading(_heading(m.pose.pose.orientation), head) < 1e-9
        if pre == "truth":
            nu = [c for c in pq.df.columns if ".nu." in c]
            if nu:
                u, vv, w, p, q, r = pq.get(v, t, nu)
                assert np.array_equal(_flu(m.twist.twist.linear), [u, vv, w])
                assert np.array_equal(_flu(m.twist.twist.angular), [p, q, r])
            else:
                assert m.twist.twist.linear.x == pq.get(v, t, ["truth.speed"])[0]
        return 1
    if kind == "imu":
        a = pq.get(v, t, ["imu.accel.x", "imu.accel.y", "imu.accel.z"])
        g = pq.get(v, t, ["imu.gyro.x", "imu.gyro.y", "imu.gyro.z"])
        assert np.array_equal(_flu(m.linear_acceleration), a)
        assert np.array_equal(_flu(m.angular_velocity), g)
        assert m.orientation_covariance[0] == -1.0
        return 1
    if kind == "pressure":
        d = pq.get(v, t, ["depth.depth"])[0]
        assert m.fluid_pressure == 101325.0 + RHO_SEAWATER * G0 * d
        return 1
    if kind == "gps/fix":
        ne = pq.get(v, t, ["gps.ne.north", "gps.ne.east"])
        lat, lon = geo.local_to_latlon(ne[1], ne[0])
        assert (m.latitude, m.longitude) == (float(lat), float(lon))
        return 1
    if kind == "location":
        pos = pq.get(v, t, ["truth.pos.north", "truth.pos.east", "truth.pos.down"])
        lat, lon = geo.local_to_latlon(pos[1], pos[0])
        assert (m.latitude, m.longitude, m.altitude) == (float(lat), float(lon), -pos[2])
        return 1
    if kind == "dvl/twist":
        assert np.array_equal(
            _flu(m.twist.twist.linear), pq.get(v, t, ["dvl.vel.u", "dvl.vel.v", "dvl.vel.w"])
        )
        return 1
    if kind == "dvl/altitude":
        assert m.range == np.float32(pq.get(v, t, ["dvl.altitude"])[0])
        return 1
    if kind == "rangefinder":
        assert m.range == np.float32(pq.get(v, t, ["rangefinder.rf_cm"])[0] * 0.01)
        return 1
    if kind.startswith("wrench/"):
        pre = "hold" if kind == "wrench/commanded" else "fossen6dof"
        w = pq.get(v, t, [f"{pre}.wrench.{c}" for c in "XYZKMN"])
        assert np.array_equal(_flu(m.wrench.force), w[0:3])
        assert np.array_equal(_flu(m.wrench.torque), w[3:6])
        return 1
    if kind.startswith("thrusters/"):
        cols = [c for c in pq.df.columns if c.startswith(f"alloc.{parts[2]}.")]
        assert np.array_equal(np.asarray(m.data), pq.get(v, t, cols))
        assert m.layout.dim[0].size == len(cols)
        return 1
    if kind == "battery":
        volt, cur, soc = pq.get(
            v, t, ["fossen6dof.voltage", "fossen6dof.current_total", "fossen6dof.soc"]
        )
        assert (m.voltage, m.current, m.percentage) == (
            np.float32(volt),
            np.float32(-cur),
            np.float32(soc),
        )
        return 1
    raise AssertionError(f"unchecked topic {topic}")


@pytest.mark.parametrize("name", list(RUNS))
def test_every_topic_decodes_in_both_readers_and_equals_the_parquet_log(
    runs: dict[str, Path], name: str
) -> None:
    run = runs[name]
    path = run / "log.mcap"
    bag = _rosbags_messages(path)
    ours = list(read_messages(path))
    assert len(bag) == len(ours) > 0
    pq = ParquetRows(run)
    man = pd.read_json(run / "manifest.json", typ="series")
    geo = MoosGeodesy(*man["origin"]) if man.get("origin") is not None else None
    checks: dict[str, int] = {}
    for (topic, typ, ts, msg), (t2, typ2, tsec, _msg2) in zip(bag, ours, strict=True):
        assert (topic, typ) == (t2, typ2)
        assert ts == round(tsec * 1e9)
        checks[topic] = checks.get(topic, 0) + _check_message(topic, msg, tsec, pq, geo)
    times = np.unique(pq.df["t"])
    assert checks["/clock"] == len(times)  # one /clock per frame
    expected = {
        "auv_survey_ins": [
            "odom/truth",
            "odom/belief",
            "imu",
            "pressure",
            "gps/fix",
            "dvl/twist",
            "dvl/altitude",
            "location",
        ],
        "bluerov2_station_keeping": [
            "odom/truth",
            "wrench/commanded",
            "wrench/applied",
            "thrusters/pwm",
            "thrusters/force",
            "battery",
        ],
        "surftrak_sawtooth": ["odom/truth", "rangefinder"],
    }[name]
    vehicles = {ros_name(e) for e in pq.df["entity"].unique()}
    for kind in expected:
        assert any(f"/{v}/{kind}" in checks for v in vehicles), kind
    for topic in ("/tf", "/tf_static", "/scene", "/scene/tracks"):
        assert checks[topic] >= 1


def test_reader_reads_a_file_cut_short_with_a_note(runs: dict[str, Path], tmp_path: Path) -> None:
    data = (runs["surftrak_sawtooth"] / "log.mcap").read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: len(data) - 200])
    msgs = read_messages(cut)
    n = sum(1 for _ in msgs)
    assert n > 0 and msgs.note is not None and "summary" in msgs.note
    full = read_messages(runs["surftrak_sawtooth"] / "log.mcap")
    assert sum(1 for _ in full) >= n and full.note is None


def test_a_sigkilled_run_keeps_every_flushed_chunk(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    code = (
        "from marinesim.scenario import load_simulation\n"
        "sim = load_simulation('auv_survey_ins', sets=['time.end=100000'])\n"
        "sim.compiled = False\n"  # (the logs' durability is the subject: no compile to wait for)
        f"sim.stream_to({str(out)!r}, 'mcap')\n"
        "sim.flush_s = 0.2\n"
        "sim.run()\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    mcap = out / "log.mcap"

    def clock_of() -> list[float]:
        return [t for topic, _typ, t, _m in read_messages(mcap) if topic == "/clock"]

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            parts = list((out / "log.parquet").glob("part-*.parquet")) if out.exists() else []
            # (the MCAP's writer encodes message by message: it may trail the Parquet's by
            # several chunks on a busy machine)
            if len(parts) >= 4 and mcap.is_file() and len(before := clock_of()) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the run wrote no log")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    msgs = read_messages(mcap)
    clock = [t for topic, _typ, t, _m in msgs if topic == "/clock"]
    assert msgs.note is not None and "summary" in msgs.note
    pq_t = np.unique(pd.read_parquet(out / "log.parquet")["t"])
    # every chunk the MCAP held before the kill is still there, and it is a prefix of the
    # Parquet frames
    assert len(clock) >= len(before) >= 2
    ns = np.round(np.array(clock) * 1e9).astype(np.int64)
    assert np.array_equal(ns, np.round(pq_t[: len(clock)] * 1e9).astype(np.int64))


def test_plot_reads_the_mcap(runs: dict[str, Path], tmp_path: Path) -> None:
    res = load_mcap_result(runs["auv_survey_ins"] / "log.mcap")
    pq = ParquetRows(runs["auv_survey_ins"])
    name = res.entities[0]["name"]
    sel = pq.df[pq.df["entity"] == pq.names[name]]
    assert np.array_equal(
        res["truth.pos"][0], sel[["truth.pos.north", "truth.pos.east", "truth.pos.down"]].to_numpy()
    )
    from typer.testing import CliRunner

    from marinesim.cli.main import app

    r = CliRunner().invoke(
        app, ["plot", str(runs["auv_survey_ins"] / "log.mcap"), "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "trajectory.png").stat().st_size > 10_000
