"""SIM_JSON codec: every recorded servo packet and reply, SITL's reading rules, SITL's clock."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.interop.sitl.protocol import (
    MAGIC_16,
    MAGIC_32,
    PacketError,
    ReplyRejected,
    SensorReply,
    SitlClock,
    decode_servo,
    encode_reply,
    encode_servo,
    parse_reply_like_sitl,
)

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]
LOCAL, REF, SESSIONS, needs_shared = H.LOCAL, H.REF, H.SESSIONS, H.needs_shared
pairs, read_capture = H.pairs, H.read_capture


def _check_pairs(rows: list[dict]) -> tuple[int, int]:
    n16 = n32 = 0
    first = True
    for data, reply in pairs(rows):
        pkt = decode_servo(data)
        assert encode_servo(pkt.frame_rate, pkt.frame_count, pkt.pwm) == data
        assert len(data) == (40 if pkt.channels == 16 else 72)
        n16 += pkt.channels == 16
        n32 += pkt.channels == 32
        text = reply["text"]
        if reply.get("note") or not text.startswith("\n"):
            first = first and not text.startswith("\n")
            continue
        try:
            got = parse_reply_like_sitl(text, first=first)
        except ReplyRejected:
            continue  # the probe's deliberate faults
        first = False
        # what the key search read is what the JSON says
        obj = json.loads(text.strip().replace("NaN", "null"))
        assert got["timestamp"] == obj["timestamp"]
        assert got["gyro"] == obj["imu"]["gyro"]
        # our encoder writes the same bytes for the same values (compact, repr floats)
        rep = SensorReply(
            timestamp=obj["timestamp"], gyro=obj["imu"]["gyro"],
            accel_body=obj["imu"]["accel_body"], position=obj["position"],
            velocity=obj["velocity"], attitude=obj.get("attitude"),
            quaternion=obj.get("quaternion"),
            rng={1: obj["rng_1"]} if obj.get("rng_1") is not None else {},
        )  # fmt: skip
        if "attitude" in obj and list(obj)[:4] == ["timestamp", "imu", "position", "attitude"]:
            assert encode_reply(rep).decode() == text
    return n16, n32


def test_recorded_excerpt_round_trips_offline():
    rows = read_capture(LOCAL / "capture_excerpt.jsonl.gz")
    n16, n32 = _check_pairs(rows)
    assert n16 > 200 and n32 > 5


@needs_shared
@pytest.mark.parametrize("session", SESSIONS)
def test_every_recorded_packet_and_reply(session):
    rows = read_capture(REF / session / "capture.jsonl.gz")
    n16, n32 = _check_pairs(rows)
    meta = json.loads((REF / session / "session.json").read_text())["capture"]
    assert n16 + n32 == meta["servo_packets"]
    assert (n32 > 0) == (session == "p_protocol_probe")


def test_first_packet_fields():
    data = bytes.fromhex("1a48b00400000000" + "dc05" * 8 + "e803" * 8)
    pkt = decode_servo(data)
    assert (pkt.frame_rate, pkt.frame_count) == (1200, 0)
    assert pkt.pwm.tolist() == [1500] * 8 + [1000] * 8
    assert int.from_bytes(data[:2], "little") == MAGIC_16
    assert len(encode_servo(1200, 5, [1500] * 32)) == 72
    assert int.from_bytes(encode_servo(1200, 5, [1500] * 32)[:2], "little") == MAGIC_32


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "byte offset 0"),
        (b"\x1a\x48\xb0", "byte offset 3"),
        (bytes.fromhex("1a48b00400000000") + b"\x00" * 30, "byte offset 38"),
        (b"\x00\x01" + b"\x00" * 38, "byte offset 0: magic 256"),
        (bytes.fromhex("8173b00400000000") + b"\x00" * 32, "72 bytes, got 40"),
    ],
)
def test_malformed_packets_name_the_offset(data, needle):
    with pytest.raises(PacketError, match=needle):
        decode_servo(data)


@given(st.binary(max_size=100))
def test_decoder_never_raises_anything_else(data):
    try:
        pkt = decode_servo(data)
    except PacketError:
        return
    assert len(data) in (40, 72) and pkt.channels in (16, 32)


def _reply(**kw) -> SensorReply:
    base = dict(timestamp=0.001, gyro=[0, 0, 0], accel_body=[0, 0, -9.80665],
                position=[0, 0, 0.1], velocity=[0, 0, 0], attitude=[0, 0, 0])  # fmt: skip
    base.update(kw)
    return SensorReply(**base)


def test_own_reply_is_accepted_and_sitl_rules_reject_the_faults():
    data = encode_reply(_reply(rng={1: float("nan")}))
    assert data.startswith(b"\n{") and data.endswith(b"}\n") and b": " not in data
    got = parse_reply_like_sitl(data)
    assert math.isnan(got["rng_1"]) and got["accel_body"] == [0, 0, -9.80665]
    obj = json.loads(data.decode().replace("NaN", "null"))
    # default json.dumps writes a space after the colon: SITL cannot read the vectors
    with pytest.raises(ReplyRejected, match="Vector3f for imu/gyro"):
        parse_reply_like_sitl("\n" + json.dumps(obj) + "\n")
    # first reply without the leading newline is ignored
    with pytest.raises(ReplyRejected, match="newline"):
        parse_reply_like_sitl(data[1:])
    assert parse_reply_like_sitl(data[1:], first=False)["timestamp"] == 0.001
    del obj["velocity"]
    with pytest.raises(ReplyRejected, match="velocity"):
        parse_reply_like_sitl("\n" + json.dumps(obj, separators=(",", ":")) + "\n")
    obj["velocity"] = [0, 0, 0]
    del obj["attitude"]
    with pytest.raises(ReplyRejected, match="attitude or quaternion"):
        parse_reply_like_sitl("\n" + json.dumps(obj, separators=(",", ":")) + "\n")
    q = parse_reply_like_sitl(encode_reply(_reply(attitude=None, quaternion=[1, 0, 0, 0])))
    assert q["quaternion"] == [1, 0, 0, 0]
    with pytest.raises(ValueError):
        encode_reply(_reply(attitude=None))


def test_sitl_clock_truncates_each_step_and_jumps_after_a_reset():
    c = SitlClock()
    assert c.advance(1 / 1200) == 0
    assert c.advance(2 / 1200) == 833
    assert c.advance(3 / 1200) == 1666
    c.advance(3 / 1200 - 1.0)  # backwards: "Detected physics reset", step 0
    assert c.time_us == 1666
    assert c.advance(4 / 1200) == 1666 + int((4 / 1200 - (3 / 1200 - 1.0)) * 1e6)


@needs_shared
def test_sitl_clock_reproduces_the_recorded_sitl_time():
    """truth.csv's sitl_time_us (= the .BIN TimeUS) from the timestamps alone (session a has
    no faults; rows every 0.05 s, so the clock is advanced over every frame in between)."""
    with gzip.open(REF / "a_manual_descent" / "truth.csv.gz", "rt") as fh:
        rows = list(csv.DictReader(fh))
    c = SitlClock()
    n = 0
    for r in rows[:400]:
        fc = int(r["frame_count"])
        while n <= fc:
            c.advance((n + 1) / 1200)
            n += 1
        assert c.time_us == int(r["sitl_time_us"]), r["t"]
    assert float(rows[399]["t"]) == pytest.approx(19.95)  # 20 s of clock checked
