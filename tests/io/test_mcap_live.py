"""``marinesim run --live``: a real WebSocket client speaks the Foxglove protocol to the server,
subscribes, decodes the CDR messages and checks their content and pacing."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("foxglove")
pytest.importorskip("websockets")
pytest.importorskip("mcap_ros2")

from mcap.records import Schema  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
WARP = 2.0
END = 12.0


def _serve(out: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [
        sys.executable,
        "-m",
        "marinesim",
        "run",
        "auv_survey_ins",
        "--set",
        f"time.end={END}",
        "--set",
        f"time.time_warp={WARP}",
        "--no-plot",
        "--no-progress",
        "--live",
        "--port",
        "0",
        "-o",
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "ws://" in line:
            return proc, "ws://" + line.split("ws://")[1].split()[0]
    proc.wait()
    pytest.fail("the run printed no live URL")


def test_live_server_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc, url = _serve(out)
    channels: dict[int, dict[str, Any]] = {}
    got: list[tuple[float, int, int, bytes]] = []  # wall arrival, subscription, stamp, payload
    ops: list[dict[str, Any]] = []
    try:
        with connect(url, subprotocols=["foxglove.sdk.v1", "foxglove.websocket.v1"]) as ws:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 60:
                try:
                    frame = ws.recv(timeout=1.0)
                except TimeoutError:
                    if proc.poll() is not None:
                        break
                    continue
                except Exception:  # the server closed when the run ended
                    break
                if isinstance(frame, str):
                    msg = json.loads(frame)
                    ops.append(msg)
                    if msg["op"] == "advertise":
                        new = [c for c in msg["channels"] if c["id"] not in channels]
                        channels.update({c["id"]: c for c in new})
                        ws.send(
                            json.dumps(
                                {
                                    "op": "subscribe",
                                    "subscriptions": [
                                        {"id": c["id"], "channelId": c["id"]} for c in new
                                    ],
                                }
                            )
                        )
                    continue
                assert frame[0] == 1  # opcode: message data
                sub, stamp = struct.unpack_from("<IQ", frame, 1)
                got.append((time.monotonic(), sub, stamp, bytes(frame[13:])))
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == 0
    assert channels and got
    factory = DecoderFactory()
    decoders = {
        cid: factory.decoder_for(
            "cdr",
            Schema(
                id=cid,
                name=c["schemaName"],
                encoding=c["schemaEncoding"],
                data=c["schema"].encode(),
            ),
        )
        for cid, c in channels.items()
    }
    topics = {cid: c["topic"] for cid, c in channels.items()}
    assert all(
        c["encoding"] == "cdr" and c["schemaEncoding"] == "ros2msg" for c in channels.values()
    )
    # content: the truth odometry equals the run's Parquet log at the message's stamp
    df = pd.read_parquet(out / "log.parquet")
    rows = {
        (e, round(t * 1e9)): i for i, (e, t) in enumerate(zip(df["entity"], df["t"], strict=True))
    }
    pos = df[["truth.pos.north", "truth.pos.east", "truth.pos.down"]].to_numpy()
    n_odom = 0
    for _w, sub, stamp, payload in got:
        m = decoders[sub](payload)
        if topics[sub] == "/ins_auv_0/odom/truth":
            h = m.header.stamp
            assert h.sec * 1_000_000_000 + h.nanosec == stamp
            p = m.pose.pose.position
            assert np.array_equal([p.y, p.x, -p.z], pos[rows[("ins_auv[0]", stamp)]])
            n_odom += 1
    assert n_odom >= 0.5 * len(np.unique(df["t"]))
    seen = {topics[s] for _w, s, _t, _p in got}
    want = {"/clock", "/tf", "/scene", "/ins_auv_0/imu", "/ins_auv_0/location"}
    assert want <= seen, (want - seen, [o for o in ops if o["op"] != "advertise"])
    # timing: simulation time advances at the warp against the client's wall clock
    clock = [(w, t * 1e-9) for w, s, t, _p in got if topics[s] == "/clock"]
    stamps = np.array([c[1] for c in clock])
    assert np.all(np.diff(stamps) > 0)
    sim = stamps[-1] - stamps[0]
    assert sim > 0.5 * END
    # paced: the rate at which simulation time reaches the client (slope of stamp against
    # arrival time, after the first chunk, which can hold up to 2 s of frames flushed before
    # the subscription) is the warp; an unpaced run goes > 10x here, a loaded machine may lag
    late = stamps >= stamps[0] + 0.4 * sim
    arrival = np.array([c[0] for c in clock])
    rate = np.polyfit(arrival[late], stamps[late], 1)[0]
    assert 0.5 * WARP < rate < 1.25 * WARP, (rate, sim, arrival[-1] - arrival[0])


def _one_vehicle_server(**kw: Any) -> Any:
    from marinesim.io.mcap.live import LiveServer

    return LiveServer([{"name": "auv[0]", "block": "auv"}], {"scenario": "t"}, **kw)


def test_port_in_use_is_an_error_before_the_run() -> None:
    import socket

    from marinesim.core.errors import ConfigError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as err:
            _one_vehicle_server(port=port)
    assert err.value.param == "--port" and str(port) in str(err.value)


def test_server_listens_once_the_first_channels_exist() -> None:
    """A client cannot connect before the first chunk; when it can, every channel of that chunk
    is advertised to it at once (foxglove-sdk's send-before-record race needs a channel made
    while the client is connected)."""
    urls: list[str] = []
    live = _one_vehicle_server(port=0, on_start=urls.append)
    try:
        with pytest.raises(OSError):
            connect(live.url, open_timeout=2)
        assert urls == []
        t = np.array([0.0, 0.1])
        values = {"truth.pos": np.zeros((3, 2, 1))}
        live.write(t, values, {"truth.pos": ("m", ("north", "east", "down"))})
        assert urls == [live.url]
        with connect(live.url, subprotocols=["foxglove.sdk.v1", "foxglove.websocket.v1"]) as ws:
            topics: set[str] = set()
            while "/clock" not in topics:
                msg = json.loads(ws.recv(timeout=5))
                if msg["op"] == "advertise":
                    topics |= {c["topic"] for c in msg["channels"]}
        assert {"/clock", "/tf"} <= topics
    finally:
        live.finish()
