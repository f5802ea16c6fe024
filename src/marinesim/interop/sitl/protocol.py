"""ArduPilot SITL ``--model JSON`` (SIM_JSON) wire format: servo packets, replies, SITL's clock.

Servo packet (SITL → backend, little-endian, no padding): ``uint16 magic`` (18458 for 16
channels, 29569 for 32), ``uint16 frame_rate`` [Hz], ``uint32 frame_count``, then 16 or 32
``uint16`` PWM values [µs] (0 = no pulse).  40 or 72 bytes.

Reply (backend → SITL): one JSON object per datagram, framed by newlines ``"\\n{...}\\n"``, in
the compact form (no space after a colon: SITL's key search skips exactly ``len(key) + 2``
characters).  :func:`parse_reply_like_sitl` applies SITL's own reading rules (text between
the last two newlines, a key search per section, ``[a, b, c]`` vectors, ``atof`` scalars) so
that tests can tell whether SITL would accept a reply.

:class:`SitlClock` reproduces ArduPilot's microsecond clock driven by the reply timestamps
(each step truncated to whole µs, the first accepted reply does not advance it, a backwards
timestamp is a "physics reset" with a zero step and a forward jump at the next reply).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAGIC_16",
    "MAGIC_32",
    "PacketError",
    "ReplyRejected",
    "ServoPacket",
    "SensorReply",
    "SitlClock",
    "decode_servo",
    "encode_reply",
    "encode_servo",
    "parse_reply_like_sitl",
]

#: Magic of a 16-channel servo packet (0x481a).
MAGIC_16 = 18458
#: Magic of a 32-channel servo packet (0x7381), sent once ``SERVO_32_ENABLE`` = 1.
MAGIC_32 = 29569
_SIZES = {MAGIC_16: 16, MAGIC_32: 32}
_HEAD = struct.Struct("<HHI")
_U16 = np.dtype("<u2")


class PacketError(ValueError):
    """A datagram that is not a SIM_JSON servo packet (the text names the byte offset)."""


class ReplyRejected(ValueError):
    """SITL would not use this reply (the text is what SITL prints)."""


@dataclass(frozen=True)
class ServoPacket:
    """One decoded servo packet.

    Attributes
    ----------
    frame_rate : int
        SITL's physics rate [Hz].
    frame_count : int
        Count of replies SITL has accepted (repeats keep it; 0 after a SITL restart).
    pwm : ndarray of uint16, shape (16,) or (32,)
        Servo outputs SERVO1… [µs]; 0 = no pulse (a read-only view of the datagram).
    """

    frame_rate: int
    frame_count: int
    pwm: NDArray[np.uint16]

    @property
    def channels(self) -> int:
        """16 or 32."""
        return int(self.pwm.shape[0])


def decode_servo(data: bytes) -> ServoPacket:
    """Decode one servo datagram.

    Raises
    ------
    PacketError
        Wrong length or magic, or a frame rate of 0 Hz (the message names the offending
        byte offset).
    """
    if len(data) < _HEAD.size:
        raise PacketError(
            f"servo packet truncated at byte offset {len(data)}: need at least {_HEAD.size} "
            "bytes of header"
        )
    magic, rate, count = _HEAD.unpack_from(data, 0)
    n = _SIZES.get(magic)
    if n is None:
        raise PacketError(
            f"byte offset 0: magic {magic} is not a SIM_JSON servo packet "
            f"({MAGIC_16} for 16 channels, {MAGIC_32} for 32)"
        )
    size = _HEAD.size + 2 * n
    if len(data) != size:
        off = min(len(data), size)
        raise PacketError(
            f"byte offset {off}: a {n}-channel servo packet has {size} bytes, got {len(data)}"
        )
    if rate == 0:
        raise PacketError(
            "byte offset 2: frame rate 0 Hz (SITL always sends its physics rate, e.g. 1200)"
        )
    pwm = np.frombuffer(data, dtype=_U16, count=n, offset=_HEAD.size)
    if _U16 != np.uint16:  # a big-endian host: native values
        pwm = pwm.astype(np.uint16)
    return ServoPacket(int(rate), int(count), pwm)


def encode_servo(frame_rate: int, frame_count: int, pwm: Sequence[int] | NDArray[Any]) -> bytes:
    """Encode a servo packet (16 or 32 channels) as SITL sends it (for fake SITLs and tests)."""
    p = np.asarray(pwm, dtype=np.int64)
    if p.shape not in ((16,), (32,)):
        raise ValueError(f"a servo packet carries 16 or 32 channels, got shape {p.shape}")
    if np.any((p < 0) | (p > 0xFFFF)):
        raise ValueError("PWM values must fit in uint16")
    magic = MAGIC_16 if p.shape[0] == 16 else MAGIC_32
    return (
        _HEAD.pack(magic, int(frame_rate), int(frame_count) & 0xFFFFFFFF)
        + p.astype("<u2").tobytes()
    )


@dataclass
class SensorReply:
    """What the backend tells SITL for one physics frame (SI, NED earth / FRD body).

    Attributes
    ----------
    timestamp : float
        Physics time [s], absolute and increasing.
    gyro : (3,) float
        Body rates p, q, r [rad/s].
    accel_body : (3,) float
        Specific force in the body frame [m/s²] (level at rest: [0, 0, −g]).
    position : (3,) float
        NED position from home [m] (z = depth).
    velocity : (3,) float
        NED velocity [m/s].
    attitude : (3,) float or None
        Roll, pitch, yaw [rad] (ZYX, body → NED).
    quaternion : (4,) float or None
        [w, x, y, z] body → NED (used instead of ``attitude`` when given).
    rng : dict
        Rangefinder instance (1…6) → distance [m] (NaN = no data); an instance left out is
        not sent (SITL then keeps its previous value).
    """

    timestamp: float
    gyro: Sequence[float]
    accel_body: Sequence[float]
    position: Sequence[float]
    velocity: Sequence[float]
    attitude: Sequence[float] | None = None
    quaternion: Sequence[float] | None = None
    rng: dict[int, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON object (key order as the recording backend wrote it)."""
        out: dict[str, Any] = {
            "timestamp": float(self.timestamp),
            "imu": {
                "gyro": [float(v) for v in self.gyro],
                "accel_body": [float(v) for v in self.accel_body],
            },
            "position": [float(v) for v in self.position],
        }
        if self.quaternion is not None:
            out["quaternion"] = [float(v) for v in self.quaternion]
        else:
            if self.attitude is None:
                raise ValueError("a reply needs 'attitude' or 'quaternion'")
            out["attitude"] = [float(v) for v in self.attitude]
        out["velocity"] = [float(v) for v in self.velocity]
        for i in sorted(self.rng):
            if not 1 <= i <= 6:
                raise ValueError(f"rangefinder instance {i} outside 1..6")
            out[f"rng_{i}"] = float(self.rng[i])
        return out


def encode_reply(reply: SensorReply | Mapping[str, Any]) -> bytes:
    """Compact JSON framed by newlines: ``b"\\n{...}\\n"`` (NaN written as ``NaN``).

    Every float keeps its shortest round-trip form (Python ``repr``), as SITL reads them with
    ``atof``.
    """
    obj = reply.as_dict() if isinstance(reply, SensorReply) else dict(reply)
    text = json.dumps(obj, separators=(",", ":"), allow_nan=True)
    return ("\n" + text + "\n").encode("ascii")


# ------------------------------------------------------------------------------------------
# SITL's reading rules


_KEYS: tuple[tuple[str, str, str, bool], ...] = (
    # (section, key, kind, required)
    ("", "timestamp", "double", True),
    ("imu", "gyro", "vec3", True),
    ("imu", "accel_body", "vec3", True),
    ("", "position", "vec3", True),
    ("", "attitude", "vec3", False),
    ("", "quaternion", "quat", False),
    ("", "velocity", "vec3", True),
    *(("", f"rng_{i}", "float", False) for i in range(1, 7)),
)


def _atof(text: str) -> float:
    """C ``atof``: the longest numeric prefix (after blanks), 0.0 when there is none."""
    s = text.lstrip(" \t\r\n")
    best = 0.0
    for end in range(1, min(len(s), 40) + 1):
        chunk = s[:end]
        if chunk.strip() != chunk:
            break
        try:
            best = float(chunk)
        except ValueError:
            if chunk.lower() in ("n", "na", "i", "in", "inf", "infi", "infin", "infini"):
                continue
            if chunk in ("-", "+", ".", "-.", "+.") or chunk[-1] in "eE+-":
                continue
            break
    return best


def _vector(text: str, n: int) -> list[float] | None:
    """``[a, b, c]`` → floats (spaces after commas allowed), None when it does not parse."""
    if not text.startswith("["):
        return None
    close = text.find("]")
    if close < 0:
        return None
    parts = text[1:close].split(",")
    if len(parts) < n:
        return None
    out = []
    for p in parts[:n]:
        q = p.strip()
        try:
            out.append(float(q))
        except ValueError:
            return None
    return out


def parse_reply_like_sitl(buffer: str | bytes, *, first: bool = True) -> dict[str, Any]:
    """Read a reply the way ArduPilot's SIM_JSON does; raise what SITL would print otherwise.

    Parameters
    ----------
    buffer : str or bytes
        The received text (one datagram, or several concatenated as SITL's buffer holds them).
    first : bool
        No reply accepted yet: the text must start with a newline.

    Returns
    -------
    dict
        ``{key: value}`` for every key found (vectors as lists).

    Raises
    ------
    ReplyRejected
        With SITL's message (``Failed to parse Vector3f for imu/gyro``, ``Did not contain all
        mandatory fields``, ``Did not receive attitude or quaternion``, ...).
    """
    text = buffer.decode("latin-1") if isinstance(buffer, bytes) else buffer
    if first and not text.startswith("\n"):
        raise ReplyRejected("first reply does not start with a newline (ignored by SITL)")
    pieces = text.split("\n")
    # SITL turns newlines into terminators and parses the text between the last two.
    if len(pieces) < 3:
        body = pieces[-2] if len(pieces) == 2 else pieces[0]
    else:
        body = pieces[-2]
    found: dict[str, Any] = {}
    missing: list[str] = []
    for section, key, kind, required in _KEYS:
        base = 0
        if section:
            base = body.find(f'"{section}"')
            if base < 0:
                if required:
                    missing.append(f"{section}/{key}")
                continue
        pos = body.find(key, base)
        if pos < 0:
            if required:
                missing.append(f"{section}/{key}")
            continue
        rest = body[pos + len(key) + 2 :]
        if kind in ("vec3", "quat"):
            vec = _vector(rest, 3 if kind == "vec3" else 4)
            if vec is None:
                name = "Vector3f" if kind == "vec3" else "Quaternion"
                raise ReplyRejected(f"Failed to parse {name} for {section}/{key}")
            found[key] = vec
        else:
            found[key] = _atof(rest)
    if missing:
        raise ReplyRejected(
            f"Failed to find key {missing[0]}; Did not contain all mandatory fields"
        )
    if "attitude" not in found and "quaternion" not in found:
        raise ReplyRejected("Did not receive attitude or quaternion")
    return found


class SitlClock:
    """ArduPilot's µs clock as driven by the reply timestamps (for aligning logs and tests).

    ``advance(timestamp)`` returns the clock after an accepted reply: the first reply sets the
    reference without advancing; later replies add ``int((t − t_prev)·1e6)`` µs; a timestamp
    that goes backwards counts as a physics reset (step 0) and the next normal reply jumps by
    the whole gap.
    """

    def __init__(self) -> None:
        self.time_us = 0
        self._last: float | None = None

    def advance(self, timestamp: float) -> int:
        """Apply one accepted reply; return the clock [µs]."""
        if self._last is None or not math.isfinite(timestamp):
            self._last = timestamp
            return self.time_us
        step = timestamp - self._last
        self._last = timestamp
        if step < 0:  # "Detected physics reset": no step; the next reply jumps by the gap
            return self.time_us
        self.time_us += int(step * 1e6)
        return self.time_us
