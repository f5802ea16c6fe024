"""MOOS wire protocol: messages, packets and a streaming framer (MOOS 10, as MOOSDB speaks it).

Layout (all integers int32 little-endian, doubles IEEE-754 binary64 little-endian; see
``reference/moos_live/README.md`` §1.4):

* connection start: the client sends the 32-byte protocol string :data:`PROTOCOL_STRING`
  (``ELKS CAN'T DANCE 2/8/10`` padded with NUL bytes), then one packet with a DATA message
  (key ``asynchronous``, string value = client name); the DB answers with a WELCOME (or a
  POISON refusing a duplicate name);
* packet: int32 total length (header included), int32 number of messages, one flag byte
  (0: no compression), then the messages back to back;
* message: int32 length (this field included), int32 id, type char, data-type char, then
  source, source-aux, community, key (each int32 byte count + bytes), time, double value,
  second double value (3 doubles), string value (int32 count + bytes).

Strings are kept as Python ``str`` decoded with UTF-8 and ``surrogateescape``, so any byte
sequence (binary data included) re-encodes to the very same bytes.

Example
-------
>>> m = MoosMsg("N", "D", "NAV_X", 12.5, dval=3.0, src="uSimMarine", id=7)
>>> decode_packet(encode_packet([m]))[0] == [m]
True
"""

from __future__ import annotations

import math
import struct
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "MAX_PACKET",
    "MSG_TYPES",
    "PROTOCOL_STRING",
    "MoosMsg",
    "PacketReader",
    "WireError",
    "decode_message",
    "decode_packet",
    "encode_message",
    "encode_notifies",
    "encode_packet",
    "notify",
]

#: The 32 bytes a client sends first (MOOS 10 protocol string, NUL padded).
PROTOCOL_STRING = b"ELKS CAN'T DANCE 2/8/10".ljust(32, b"\0")

#: Message type characters and their MOOS names.
MSG_TYPES = {
    "N": "NOTIFY",
    "R": "REGISTER",
    "U": "UNREGISTER",
    "W": "WELCOME",
    "i": "DATA",
    "K": "POISON",
    "T": "TIMING",
    "Q": "SERVER_REQUEST",
    ".": "NULL",
    "~": "TERMINATE_CONNECTION",
    "*": "WILDCARD_REGISTER",
}
#: Data-type characters: double, string, binary.
DATA_TYPES = {"D": "double", "S": "string", "B": "binary"}

#: Largest packet accepted [bytes] (a length beyond it means the stream lost its framing).
MAX_PACKET = 64 * 1024 * 1024

_HDR = struct.Struct("<iiB")  # packet: length, count, flag
_MHDR = struct.Struct("<iicc")  # message: length, id, type, data type
_I32 = struct.Struct("<i")
_D3 = struct.Struct("<ddd")
_MIN_MSG = 4 + 4 + 1 + 1 + 4 * 4 + 24 + 4  # 54 bytes: every string empty


class WireError(ValueError):
    """Bytes that are not a valid MOOS packet or message (offset and reason in the text)."""


_MoosMsgBase = namedtuple(  # a tuple, not a dataclass: cheaper to import and to build
    "_MoosMsgBase",
    "type dtype key time dval dval2 sval src src_aux community id",
    defaults=(-1.0, -1.0, "", "", "", "", -1),
)


class MoosMsg(_MoosMsgBase):
    """One MOOS message.

    Attributes
    ----------
    type : str
        Message type character (``N`` notify, ``R`` register, ``T`` timing, …).
    dtype : str
        ``D`` double, ``S`` string, ``B`` binary.
    key : str
        Variable name.
    time : float
        MOOS time of the message [s] (warped UNIX time).
    dval, dval2 : float
        Double value and second double value (−1 when unused, as MOOS-IvP apps send).
    sval : str
        String value ("" for a double message).
    src, src_aux, community : str
        Source process, source auxiliary text, community.
    id : int
        Message id (the sender's running counter; −1 for handshake and timing).
    """

    __slots__ = ()

    @property
    def is_double(self) -> bool:
        """True for a double message."""
        return self.dtype == "D"

    @property
    def value(self) -> float | str:
        """The value: the double for a double message, else the string."""
        return self.dval if self.dtype == "D" else self.sval


def notify(key: str, value: float | str, time: float, *, src: str = "", id: int = -1) -> MoosMsg:
    """A NOTIFY message as a MOOS-IvP app posts it (unused fields −1 / "")."""
    if isinstance(value, str):
        return MoosMsg("N", "S", key, time, -1.0, -1.0, value, src, "", "", id)
    return MoosMsg("N", "D", key, time, float(value), -1.0, "", src, "", "", id)


def _enc(s: str) -> bytes:
    b = s.encode("utf-8", "surrogateescape")
    return _I32.pack(len(b)) + b


def encode_message(m: MoosMsg) -> bytes:
    """Serialise one message (its int32 length field included)."""
    body = b"".join(
        (
            _enc(m.src),
            _enc(m.src_aux),
            _enc(m.community),
            _enc(m.key),
            _D3.pack(m.time, m.dval, m.dval2),
            _enc(m.sval),
        )
    )
    n = _MHDR.size + len(body)
    return _MHDR.pack(n, m.id, m.type.encode("latin-1"), m.dtype.encode("latin-1")) + body


def encode_packet(msgs: Sequence[MoosMsg], flag: int = 0) -> bytes:
    """Serialise a packet holding ``msgs`` (header: length, count, flag byte)."""
    body = b"".join(encode_message(m) for m in msgs)
    return _HDR.pack(_HDR.size + len(body), len(msgs), flag) + body


_NO_STRING = _I32.pack(0)
#: source -> key -> (the encoded source, source-aux, community and key of a NOTIFY; the pack
#: of a whole double NOTIFY: length, id, types, those bytes, time, value, −1, empty string).
_NOTIFY_PLANS: dict[str, dict[str, tuple[bytes, Callable[..., bytes], int]]] = {}


def _notify_plan(src: str, key: str) -> tuple[bytes, Callable[..., bytes], int]:
    plans = _NOTIFY_PLANS.get(src)
    if plans is None:
        if len(_NOTIFY_PLANS) > 64:  # ever new sources: do not grow forever
            _NOTIFY_PLANS.clear()
        plans = _NOTIFY_PLANS[src] = {}
    if len(plans) > 4096:  # a stream of ever new names: do not grow forever
        plans.clear()
    mid = _enc(src) + _NO_STRING + _NO_STRING + _enc(key)
    pack = struct.Struct(f"<ii2s{len(mid)}sdddi").pack
    plan = plans[key] = (mid, pack, _MIN_MSG - 16 + len(mid))
    return plan


def encode_notifies(
    items: Sequence[tuple[str, float | str]], moos_time: float, src: str, first_id: int
) -> bytes:
    """The packet of :func:`encode_packet` for ``[notify(k, v, moos_time, src=src,
    id=first_id + i) ...]``, built from cached per-variable bytes (the simulator posts the
    same variables every iteration: only the id, time and value change; a double NOTIFY is
    one ``struct`` pack)."""
    parts = []
    plans = _NOTIFY_PLANS.get(src) or {}
    mhdr = _MHDR.pack
    d3 = _D3.pack
    i = first_id
    for key, value in items:
        plan = plans.get(key)
        if plan is None:
            plan = _notify_plan(src, key)
            plans = _NOTIFY_PLANS[src]
        mid, pack, n = plan
        if isinstance(value, str):
            sv = _enc(value)
            parts.append(
                mhdr(n + len(sv) - 4, i, b"N", b"S") + mid + d3(moos_time, -1.0, -1.0) + sv
            )
        else:
            parts.append(pack(n, i, b"ND", mid, moos_time, float(value), -1.0, 0))
        i += 1
    body = b"".join(parts)
    return _HDR.pack(_HDR.size + len(body), len(items), 0) + body


def _str(buf: bytes | memoryview, pos: int, end: int, what: str) -> tuple[str, int]:
    if pos + 4 > end:
        raise WireError(f"message truncated in the length of {what} at byte {pos}")
    (n,) = _I32.unpack_from(buf, pos)
    pos += 4
    if n < 0 or pos + n > end:
        raise WireError(f"{what} length {n} at byte {pos - 4} runs past the message end")
    return bytes(buf[pos : pos + n]).decode("utf-8", "surrogateescape"), pos + n


def decode_message(buf: bytes | memoryview, pos: int = 0) -> tuple[MoosMsg, int]:
    """Decode the message starting at ``pos``; return it and the offset after it.

    Raises
    ------
    WireError
        A length that does not fit, a field that runs past the message, unknown type
        characters or trailing bytes inside the message.
    """
    if pos + _MHDR.size > len(buf):
        raise WireError(f"message header truncated at byte {pos}")
    n, mid, tch, dch = _MHDR.unpack_from(buf, pos)
    if n < _MIN_MSG or pos + n > len(buf):
        raise WireError(f"message length {n} at byte {pos} is impossible here")
    end = pos + n
    typ, dtype = tch.decode("latin-1"), dch.decode("latin-1")
    if typ not in MSG_TYPES:
        raise WireError(f"unknown message type {typ!r} at byte {pos + 8}")
    if dtype not in DATA_TYPES:
        raise WireError(f"unknown data type {dtype!r} at byte {pos + 9}")
    p = pos + _MHDR.size
    src, p = _str(buf, p, end, "source")
    aux, p = _str(buf, p, end, "source-aux")
    com, p = _str(buf, p, end, "community")
    key, p = _str(buf, p, end, "key")
    if p + 24 > end:
        raise WireError(f"message truncated in its doubles at byte {p}")
    t, d1, d2 = _D3.unpack_from(buf, p)
    p += 24
    sval, p = _str(buf, p, end, "string value")
    if p != end:
        raise WireError(f"{end - p} stray bytes at the end of the message at byte {pos}")
    return MoosMsg(typ, dtype, key, t, d1, d2, sval, src, aux, com, mid), end


def decode_packet(buf: bytes | memoryview) -> tuple[list[MoosMsg], int]:
    """Decode one whole packet; return its messages and flag byte.

    Raises
    ------
    WireError
        Wrong length field, count mismatch, compression flag, malformed messages.
    """
    if len(buf) < _HDR.size:
        raise WireError(f"packet of {len(buf)} bytes is shorter than its header")
    n, count, flag = _HDR.unpack_from(buf, 0)
    if n != len(buf):
        raise WireError(f"packet length field {n} but {len(buf)} bytes")
    if flag != 0:
        raise WireError(f"packet flag {flag} (compressed packets are not supported)")
    if count < 0:
        raise WireError(f"negative message count {count}")
    msgs: list[MoosMsg] = []
    pos = _HDR.size
    for _ in range(count):
        m, pos = decode_message(buf, pos)
        msgs.append(m)
    if pos != n:
        raise WireError(f"{n - pos} bytes after the {count} messages of the packet")
    return msgs, flag


class PacketReader:
    """Reassemble packets from a TCP byte stream (chunks split or merge packets freely).

    Parameters
    ----------
    expect_protocol_string : bool
        True on the DB side: the stream starts with the 32-byte protocol string, which is
        checked and stored in :attr:`protocol_string`.

    Attributes
    ----------
    malformed : int
        Packets whose framing was intact but whose content did not decode (skipped).
    errors : list of str
        The reasons, newest last (at most 100 kept).
    """

    def __init__(self, *, expect_protocol_string: bool = False) -> None:
        self._buf = bytearray()
        self._need_proto = expect_protocol_string
        self.protocol_string: bytes | None = None
        self.malformed = 0
        self.errors: list[str] = []

    def _note(self, text: str) -> None:
        self.malformed += 1
        self.errors.append(text)
        del self.errors[:-100]

    def feed(self, data: bytes) -> list[list[MoosMsg]]:
        """Add received bytes; return the complete packets (each a list of messages).

        Raises
        ------
        WireError
            The stream cannot be framed any more (a bad protocol string, or a packet
            length below the header size or above :data:`MAX_PACKET`): the connection
            must be dropped.
        """
        self._buf += data
        out: list[list[MoosMsg]] = []
        if self._need_proto:
            if len(self._buf) < 32:
                return out
            proto = bytes(self._buf[:32])
            del self._buf[:32]
            self._need_proto = False
            self.protocol_string = proto
            if proto != PROTOCOL_STRING:
                raise WireError(f"unknown protocol string {proto.rstrip(bytes(1))!r}")
        while len(self._buf) >= 4:
            (n,) = _I32.unpack_from(self._buf, 0)
            if n < _HDR.size or n > MAX_PACKET:
                raise WireError(f"packet length {n} is impossible: the stream lost its framing")
            if len(self._buf) < n:
                break
            pkt = bytes(self._buf[:n])
            del self._buf[:n]
            try:
                msgs, _flag = decode_packet(pkt)
            except WireError as exc:
                self._note(str(exc))
                continue
            out.append(msgs)
        return out

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete packet."""
        return len(self._buf)


def with_community(msgs: Iterable[MoosMsg], community: str) -> list[MoosMsg]:
    """Copies of ``msgs`` with the community filled in (what the DB does on delivery)."""
    return [m._replace(community=community) for m in msgs]


def finite_or_none(x: float) -> float | None:
    """``x`` when finite, else None (for JSON reports)."""
    return x if math.isfinite(x) else None
