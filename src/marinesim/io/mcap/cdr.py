"""Vectorised CDR encoding of fixed-layout ROS 2 messages (a whole chunk of frames at once).

On one channel every message of marinesim's topics has the same shape: the frame ids and other
strings are constant, and so is the length of every sequence (the number of vehicles in a
``TFMessage``, of thrusters in a ``Float64MultiArray``).  The byte layout of such a message is
therefore fixed, and a chunk of ``T`` frames is encoded by filling one NumPy structured array of
``T`` records, with no per-message Python serialisation.  The encoding is plain little-endian
XCDR1 as rosbag2 writes it: a 4-byte encapsulation header ``00 01 00 00``, then the fields in
order, each primitive aligned to its own size counted from the end of the header, strings as a
``uint32`` length (with the terminating NUL) followed by the bytes and the NUL, sequences as a
``uint32`` count followed by the elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["CDR_HEADER", "Layout", "stamps"]

#: Encapsulation header of little-endian plain CDR.
CDR_HEADER = b"\x00\x01\x00\x00"

_KINDS = {
    "bool": "u1",
    "int8": "i1",
    "uint8": "u1",
    "int16": "<i2",
    "uint16": "<u2",
    "int32": "<i4",
    "uint32": "<u4",
    "float32": "<f4",
    "float64": "<f8",
}


def stamps(t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``builtin_interfaces/Time`` (sec, nanosec) of times ``t`` [s] (rounded to the ns)."""
    ns = np.round(np.asarray(t, dtype=float) * 1e9).astype(np.int64)
    return (ns // 1_000_000_000).astype(np.int32), (ns % 1_000_000_000).astype(np.uint32)


class Layout:
    """The byte layout of one message type on one channel.

    Fields are appended in the order of the message definition: :meth:`field` for a value that
    changes from message to message (filled by :meth:`pack`), :meth:`const`, :meth:`string` and
    :meth:`count` for what is the same in every message of the channel.
    """

    def __init__(self) -> None:
        self.size = 0
        self._template = bytearray()
        self._names: list[str] = []
        self._formats: list[Any] = []
        self._offsets: list[int] = []

    def _align(self, n: int) -> None:
        pad = (-self.size) % n
        self._template += b"\0" * pad
        self.size += pad

    def field(self, name: str, kind: str, count: int = 1) -> None:
        """A value per message: ``count`` items of primitive type ``kind`` (e.g. ``float64``)."""
        dt = np.dtype(_KINDS[kind])
        self._align(dt.itemsize)
        if name in self._names:
            raise ValueError(f"field {name!r} appears twice in the layout")
        self._names.append(name)
        self._formats.append((dt, (count,)) if count != 1 else dt)
        self._offsets.append(self.size)
        self._template += b"\0" * (dt.itemsize * count)
        self.size += dt.itemsize * count

    def const(self, kind: str, *values: float) -> None:
        """Values that are the same in every message (a fixed array when several)."""
        dt = np.dtype(_KINDS[kind])
        self._align(dt.itemsize)
        data = np.asarray(values, dtype=dt).tobytes()
        self._template += data
        self.size += len(data)

    def count(self, n: int) -> None:
        """The length of the sequence that follows (constant on the channel)."""
        self.const("uint32", n)

    def string(self, text: str) -> None:
        """A constant string."""
        data = text.encode("utf-8") + b"\0"
        self.const("uint32", len(data))
        self._template += data
        self.size += len(data)

    def pack(self, n: int, values: dict[str, Any]) -> list[bytes]:
        """``n`` encoded messages (header included) with ``values[name]`` of shape (n,) or (n, k).

        Raises
        ------
        KeyError
            A field of the layout has no value.
        """
        dtype = np.dtype(
            {
                "names": self._names,
                "formats": self._formats,
                "offsets": self._offsets,
                "itemsize": self.size,
            }
        )
        rec = np.zeros(n, dtype=dtype)
        rec.view(np.uint8).reshape(n, self.size)[:] = np.frombuffer(bytes(self._template), np.uint8)
        for name in self._names:
            rec[name] = values[name]
        raw = rec.tobytes()
        s = self.size
        return [CDR_HEADER + raw[i * s : (i + 1) * s] for i in range(n)]
