"""MOOS wire protocol: every recorded capture decodes to the recorded messages and re-encodes
byte for byte; framing survives arbitrary TCP chunking; malformed bytes are reported."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.interop.moos.wire import (
    PROTOCOL_STRING,
    MoosMsg,
    PacketReader,
    WireError,
    decode_packet,
    encode_message,
    encode_packet,
)

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "captures"
OFFLINE = Path(__file__).resolve().parents[2] / "data" / "moos_live"


def _captures() -> list[Path]:
    if SHARED.is_dir():
        return sorted(SHARED.glob("*.capture.jsonl"))
    return sorted(OFFLINE.glob("*.capture.jsonl"))


def _streams(path: Path) -> dict[tuple[int, str], tuple[bytes, list[bytes]]]:
    """Per (connection, direction): all bytes, and the recv() chunks as recorded."""
    out: dict[tuple[int, str], tuple[bytearray, list[bytes]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("event"):
            continue
        b = bytes.fromhex(r["hex"])
        whole, chunks = out.setdefault((r["conn"], r["direction"]), (bytearray(), []))
        whole.extend(b)
        chunks.append(b)
    return {k: (bytes(v[0]), v[1]) for k, v in out.items()}


def test_offline_copy_is_the_recording() -> None:
    """The shipped capture is byte-identical to the one in ../shared (when present)."""
    if not SHARED.is_dir():
        pytest.skip("../shared not present")
    for f in OFFLINE.glob("a_upokedb.*.jsonl"):
        assert f.read_bytes() == (SHARED / f.name).read_bytes()


@pytest.mark.parametrize("capture", _captures(), ids=lambda p: p.name.split(".")[0])
def test_capture_decodes_and_reencodes_byte_for_byte(capture: Path) -> None:
    decoded = capture.with_name(capture.name.replace(".capture.", ".decoded."))
    expected: dict[tuple[int, str], list[dict]] = {}
    protos: dict[int, dict] = {}
    for line in decoded.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if e.get("kind") == "msg":
            expected.setdefault((e["conn"], e["direction"]), []).append(e)
        elif e.get("kind") == "protocol_string":
            protos[e["conn"]] = e
    total = 0
    for (conn, direction), (data, chunks) in _streams(capture).items():
        to_db = direction == "client->db"
        reader = PacketReader(expect_protocol_string=to_db)
        packets: list[list[MoosMsg]] = []
        for c in chunks:  # exactly as recv() returned them
            packets += reader.feed(c)
        assert reader.pending == 0 and reader.malformed == 0
        if to_db:
            assert reader.protocol_string == PROTOCOL_STRING
            assert reader.protocol_string.hex() == protos[conn]["raw_hex"]
        again = (PROTOCOL_STRING if to_db else b"") + b"".join(encode_packet(p) for p in packets)
        assert again == data
        got = [m for p in packets for m in p]
        want = expected.get((conn, direction), [])
        assert len(got) == len(want)
        for m, e in zip(got, want, strict=True):
            assert (m.type, m.dtype, m.key, m.src, m.src_aux, m.community, m.id) == (
                e["type"],
                e["dtype"],
                e["key"],
                e["src"],
                e["src_aux"],
                e["community"],
                e["id"],
            )
            assert (m.time, m.dval, m.dval2) == (e["time"], e["dval"], e["dval2"])
            assert len(encode_message(m)) == e["len"]
            raw = m.sval.encode("utf-8", "surrogateescape")
            assert m.sval == e["sval"] or raw.hex() == e["sval"]
        total += len(got)
    assert total > 0


def test_handshake_bytes_of_usimmarine() -> None:
    """Our DATA handshake message has the recorded layout (76 bytes for 'uSimMarine')."""
    m = MoosMsg("i", "S", "asynchronous", 1795508721.168049, sval="uSimMarine")
    assert len(encode_message(m)) == 76  # as uSimMarine's in b2_usim_warp1
    assert len(PROTOCOL_STRING) == 32 and PROTOCOL_STRING.startswith(b"ELKS CAN'T DANCE 2/8/10\0")
    assert len(encode_message(MoosMsg("N", "D", "", 0.0))) == 54  # the smallest message


_text = st.text(max_size=30)
_msgs = st.builds(
    MoosMsg,
    type=st.sampled_from(list("NRTWiKQ.")),
    dtype=st.sampled_from(list("DSB")),
    key=_text,
    time=st.floats(allow_nan=False),
    dval=st.floats(allow_nan=False),
    dval2=st.floats(allow_nan=False),
    sval=_text,
    src=_text,
    src_aux=_text,
    community=_text,
    id=st.integers(-(2**31), 2**31 - 1),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_msgs, max_size=5), min_size=1, max_size=4), st.data())
def test_any_chunking_gives_the_same_packets(
    pkts: list[list[MoosMsg]], data: st.DataObject
) -> None:
    stream = b"".join(encode_packet(p) for p in pkts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    reader = PacketReader()
    got: list[list[MoosMsg]] = []
    prev = 0
    for c in [*cuts, len(stream)]:
        got += reader.feed(stream[prev:c])
        prev = c
    assert got == pkts
    assert [decode_packet(encode_packet(p))[0] for p in pkts] == pkts


def test_malformed_packet_is_counted_and_skipped() -> None:
    good = encode_packet([MoosMsg("N", "D", "NAV_X", 1.0, 2.0)])
    bad = bytearray(good)
    bad[9 + 8] = ord("?")  # unknown type character, framing intact
    reader = PacketReader()
    got = reader.feed(bytes(bad) + good)
    assert len(got) == 1 and got[0][0].key == "NAV_X"
    assert reader.malformed == 1 and "unknown message type" in reader.errors[0]
    # a packet whose count promises more messages than it holds
    short = bytearray(good)
    struct.pack_into("<i", short, 4, 2)
    assert reader.feed(bytes(short)) == [] and reader.malformed == 2


def test_lost_framing_raises() -> None:
    with pytest.raises(WireError, match="framing"):
        PacketReader().feed(struct.pack("<i", 3) + b"xxxxxx")
    with pytest.raises(WireError, match="protocol string"):
        PacketReader(expect_protocol_string=True).feed(b"GET / HTTP/1.1\r\n".ljust(32, b" "))


def test_notify_packets_from_cached_bytes_are_the_general_encoding() -> None:
    from marinesim.interop.moos.wire import encode_notifies, encode_packet, notify

    items = [("NAV_X", 1.5), ("NAV_Y", -0.0), ("MODE", "a b,ç"), ("EMPTY", ""), ("NAV_X", 1e300)]
    for t, src, first in ((123.25, "uSimMarine", 7), (-1.0, "", 0)):
        want = encode_packet(
            [notify(k, v, t, src=src, id=first + i) for i, (k, v) in enumerate(items)]
        )
        assert encode_notifies(items, t, src, first) == want
        assert encode_notifies(items, t, src, first) == want  # from the cache
    assert encode_notifies([], 1.0, "x", 0) == encode_packet([])
