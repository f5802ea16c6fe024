"""``marinesim moos ... --format mcap`` / ``--live``: the app's published navigation as ROS 2
topics, read back and compared with the .alog the same run wrote (against the fake MOOSDB)."""

from __future__ import annotations

import json
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mcap")
pytest.importorskip("mcap_ros2")
pytest.importorskip("rosbags")

from marinesim.cli.main import main  # noqa: E402
from marinesim.core.geodesy import MoosGeodesy  # noqa: E402
from marinesim.io.alog import read_alog  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "io"))
import test_mcap as tm  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"


def _mission(tmp_path: Path, port: int, warp: float) -> Path:
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", f"MOOSTimeWarp = {warp:g}")
    p = tmp_path / "m.moos"
    p.write_text(text, encoding="utf-8")
    return p


def _wait(cond: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def _drive(fake_db: Any, tmp_path: Path, *extra: str) -> tuple[int, str]:
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port, 10.0)
    box: dict[str, int] = {}
    argv = ["moos", str(mission), "--duration", "30", "-o", str(tmp_path / "s.alog"), *extra]

    def target() -> None:
        box["rc"] = main(argv)

    th = threading.Thread(target=target, daemon=True)
    th.start()
    _wait(lambda: len(db.received("uSimMarine")) > 20)
    db.inject("DESIRED_THRUST", 80.0, src="pMarinePID")
    db.inject("DESIRED_RUDDER", 30.0, src="pMarinePID")
    th.join(90)  # 30 MOOS s at warp 10: 3 s wall, unless the machine is very busy
    return box.get("rc", -1), db


#: The .alog holds times and doubles with 5 decimals (pLogger's format): half a unit of the
#: last one, and a little for the binary value of the text.
ALOG = 0.5e-5 + 1e-12


class _At:
    """An .alog variable by time: ``at[t]`` is the value logged at ``t`` (within ALOG)."""

    def __init__(self, log: Any, key: str) -> None:
        t, v = log.numeric(key)
        order = np.argsort(t, kind="stable")
        self.t, self.v = np.asarray(t, dtype=float)[order], np.asarray(v, dtype=float)[order]

    def __getitem__(self, t: float) -> float:
        i = int(np.argmin(np.abs(self.t - t)))
        assert abs(self.t[i] - t) <= ALOG, (t, self.t[i])
        return float(self.v[i])

    def values(self) -> np.ndarray:
        return self.v


def _alog_at(log: Any, key: str) -> _At:
    return _At(log, key)


def test_usm_app_format_mcap_equals_the_alog(
    fake_db: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _db = _drive(fake_db, tmp_path, "--format", "mcap")
    err = capsys.readouterr().err
    assert rc == 0, err
    assert f"wrote {tmp_path / 's.mcap'}" in err
    log = read_alog(tmp_path / "s.alog")
    x, y = _alog_at(log, "NAV_X"), _alog_at(log, "NAV_Y")
    head, spd = _alog_at(log, "NAV_HEADING"), _alog_at(log, "NAV_SPEED")
    lat, lon = _alog_at(log, "NAV_LAT"), _alog_at(log, "NAV_LONG")
    bag = tm._rosbags_messages(tmp_path / "s.mcap")
    n = {"odom": 0, "fix": 0}
    for topic, _typ, ts, m in bag:
        k = ts * 1e-9  # the alog's time: the same MOOS clock since the same start
        if topic == "/uSimMarine/odom/truth":
            p = m.pose.pose.position
            assert (p.x, p.y) == pytest.approx((x[k], y[k]), abs=ALOG)
            assert tm._dheading(tm._heading(m.pose.pose.orientation), head[k]) <= ALOG + 1e-9
            assert m.twist.twist.linear.x == pytest.approx(spd[k], abs=ALOG)
            n["odom"] += 1
        elif topic == "/uSimMarine/gps/fix":
            assert (m.latitude, m.longitude) == pytest.approx((lat[k], lon[k]), abs=ALOG)
            n["fix"] += 1
    iterations = len(log.numeric("NAV_X")[0])
    assert n["odom"] == iterations > 20 and n["fix"] > 20
    assert spd.values().max() > 1.0 and np.ptp(head.values()) > 20  # it moved
    topics = {b[0] for b in bag}
    assert {"/clock", "/tf", "/tf_static", "/scene", "/uSimMarine/location"} <= topics


def test_scenario_app_streams_its_engine_log_as_mcap(
    fake_db: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --scenario the engine log goes to s/ (Parquet + log.mcap, every engine topic); its
    truth is what the app posted as NAV_*_GT, iteration by iteration."""
    scen = str(DATA / "remus100_moos.yaml")
    # a first run fills the compiled tick's cache: compiling it (first run of this plugin set,
    # tens of seconds) would take the 30 MOOS s of the run below (3 s wall at warp 10)
    (tmp_path / "warm").mkdir()
    _drive(fake_db, tmp_path / "warm", "--scenario", scen)
    capsys.readouterr()
    rc, _db = _drive(fake_db, tmp_path, "--scenario", scen, "--format", "mcap")
    err = capsys.readouterr().err
    assert rc == 0, err
    run = tmp_path / "s"
    assert f"wrote {run / 'log.mcap'}" in err
    man = json.loads((run / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["ended_by"] == "MOOS app stopped"
    pq = tm.ParquetRows(run)
    geo = MoosGeodesy(*man["origin"]) if man.get("origin") else None
    checks: dict[str, int] = {}
    east: dict[int, float] = {}  # by stamp [ns]
    for topic, _typ, ts, msg in tm._rosbags_messages(run / "log.mcap"):
        checks[topic] = checks.get(topic, 0) + tm._check_message(topic, msg, ts * 1e-9, pq, geo)
        if topic.endswith("/odom/truth"):
            east[ts] = msg.pose.pose.position.x
    (v,) = pq.names
    assert {f"/{v}/odom/truth", f"/{v}/odom/belief", f"/{v}/imu"} <= set(checks)
    # the k-th NAV_X_GT the app posted is the truth after k AppTick periods of engine time
    log = read_alog(tmp_path / "s.alog")
    _t, x_gt = log.numeric("NAV_X_GT")
    period_ns = 100_000_000  # AppTick 10 = one engine tick of 0.1 s per iteration
    for k, xk in enumerate(x_gt, start=1):
        assert east[k * period_ns] == pytest.approx(xk, abs=ALOG)
    assert len(x_gt) > 20 and len(east) >= len(x_gt)


def test_moos_live_serves_the_navigation(
    fake_db: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("foxglove")
    pytest.importorskip("websockets")
    from websockets.sync.client import connect

    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port, 10.0)
    box: dict[str, int] = {}
    argv = ["moos", str(mission), "--duration", "40", "-o", str(tmp_path / "s.alog")]

    def target() -> None:
        box["rc"] = main([*argv, "--live", "--live-port", "0"])

    th = threading.Thread(target=target, daemon=True)
    th.start()
    url = ""

    def have_url() -> bool:
        nonlocal url
        err = capsys.readouterr().err
        if "ws://" in err:
            url = "ws://" + err.split("ws://")[1].split()[0]
        return bool(url)

    _wait(have_url, 30.0)
    channels: dict[int, str] = {}
    got: list[str] = []
    with connect(url, subprotocols=["foxglove.sdk.v1", "foxglove.websocket.v1"]) as ws:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and th.is_alive():
            try:
                frame = ws.recv(timeout=0.5)
            except TimeoutError:
                continue
            except Exception:  # the server stopped with the app
                break
            if isinstance(frame, str):
                msg = json.loads(frame)
                if msg["op"] == "advertise":
                    new = {c["id"]: c["topic"] for c in msg["channels"] if c["id"] not in channels}
                    channels.update(new)
                    subs = [{"id": i, "channelId": i} for i in new]
                    ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
                continue
            sub, _stamp = struct.unpack_from("<IQ", frame, 1)
            got.append(channels[sub])
    th.join(90)
    assert box.get("rc") == 0
    n_odom = got.count("/uSimMarine/odom/truth")
    iterations = len(read_alog(tmp_path / "s.alog").numeric("NAV_X")[0])
    assert n_odom >= 0.5 * iterations and iterations > 20  # from the first iterations on
    assert "/clock" in got and "/tf" in got
    assert not (tmp_path / "s.mcap").exists()  # --live alone writes no file
