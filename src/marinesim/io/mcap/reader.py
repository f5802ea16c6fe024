"""Read a run's MCAP back: every message decoded, also from a file cut short by a crash.

:func:`read_messages` walks the file record by record (the MCAP stream reader), so it needs
neither the summary section nor the footer: a run killed with SIGKILL leaves every complete
chunk readable, and the reader stops at the first incomplete record with a note saying so.
:func:`load_mcap_result` rebuilds the core signals of a run (truth and belief position,
heading, speed) from the odometry topics, for ``marinesim plot RUN.mcap``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import DataError

__all__ = ["McapMessages", "load_mcap_result", "read_messages"]


@dataclass
class McapMessages:
    """The messages of an MCAP file, iterated as (topic, schema name, log time [s], message).

    Attributes
    ----------
    path : Path
    topics : list of str
        Restrict to these topics (None: all).
    note : str or None
        After iteration: why the file ended early (no summary section, cut-off record), or None
        for a complete file.
    profile : str
        The header's profile (``ros2`` for marinesim's files).
    metadata : dict
        The MCAP metadata records by name.
    """

    path: Path
    topics: list[str] | None = None
    note: str | None = None
    profile: str = ""
    metadata: dict[str, dict[str, str]] = field(default_factory=dict)
    count: int = 0

    def __iter__(self) -> Iterator[tuple[str, str, float, Any]]:
        from mcap.exceptions import McapError
        from mcap.records import Channel, Footer, Header, Message, Metadata, Schema
        from mcap.stream_reader import StreamReader
        from mcap_ros2.decoder import DecoderFactory

        factory = DecoderFactory()
        schemas: dict[int, Any] = {}
        channels: dict[int, Any] = {}
        decoders: dict[int, Any] = {}
        complete = False
        last_t = math.nan
        self.count = 0
        try:
            fh = self.path.open("rb")
        except OSError as exc:
            raise DataError(f"cannot open: {exc.strerror or exc}", file=str(self.path)) from None
        with fh:
            try:
                for rec in StreamReader(fh).records:
                    if isinstance(rec, Header):
                        self.profile = rec.profile
                    elif isinstance(rec, Schema):
                        schemas[rec.id] = rec
                    elif isinstance(rec, Channel):
                        channels[rec.id] = rec
                    elif isinstance(rec, Metadata):
                        self.metadata[rec.name] = dict(rec.metadata)
                    elif isinstance(rec, Footer):
                        complete = True
                    elif isinstance(rec, Message):
                        ch = channels.get(rec.channel_id)
                        if ch is None or (self.topics is not None and ch.topic not in self.topics):
                            continue
                        dec = decoders.get(rec.channel_id)
                        if dec is None:
                            sch = schemas.get(ch.schema_id)
                            dec = factory.decoder_for(ch.message_encoding, sch)
                            if dec is None:
                                raise DataError(
                                    f"channel {ch.topic!r}: no decoder for {ch.message_encoding!r}",
                                    file=str(self.path),
                                )
                            decoders[rec.channel_id] = dec
                        last_t = rec.log_time * 1e-9
                        self.count += 1
                        name = schemas[ch.schema_id].name if ch.schema_id in schemas else ""
                        yield ch.topic, name, last_t, dec(rec.data)
            except (McapError, EOFError, ValueError, OSError, Exception) as exc:
                if isinstance(exc, DataError):
                    raise
                if self.count == 0 and not channels:
                    raise DataError(
                        f"not a readable MCAP file: {type(exc).__name__}: {exc}",
                        file=str(self.path),
                    ) from None
                self.note = (
                    f"{self.path.name} ends without its summary section (the run was stopped "
                    f"before it finished writing, e.g. killed): read {self.count} messages up "
                    f"to t = {last_t:g} s, the last complete chunk"
                )
                return
        if not complete:
            self.note = f"{self.path.name} has no footer: read {self.count} messages"


def read_messages(path: str | Path, topics: list[str] | None = None) -> McapMessages:
    """The decoded messages of ``path`` (iterate the result; see :class:`McapMessages`)."""
    p = Path(path)
    if not p.is_file():
        raise DataError("MCAP file not found", file=str(p))
    return McapMessages(p, topics)


def _yaw_heading(q: Any) -> float:
    yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
    return (90.0 - math.degrees(yaw)) % 360.0


def load_mcap_result(path: str | Path) -> Any:
    """A :class:`~marinesim.engine.results.RunResult` of the odometry in a run's MCAP.

    Signals: ``truth.pos`` (NED) / ``truth.heading`` / ``truth.speed`` from
    ``/<v>/odom/truth`` and ``belief.pos`` / ``belief.heading`` from ``/<v>/odom/belief``
    (frames ENU/FLU converted back); ``active`` is 1.  The note of a file cut short is in the
    manifest (``mcap_note``).

    Raises
    ------
    DataError
        No ``/<v>/odom/truth`` topic.
    """
    from marinesim.engine.results import RunResult, Signal

    msgs = read_messages(path)
    truth: dict[str, dict[float, tuple[float, ...]]] = {}
    belief: dict[str, dict[float, tuple[float, ...]]] = {}
    for topic, _typ, t, m in msgs:
        parts = topic.strip("/").split("/")
        if len(parts) != 3 or parts[1] != "odom" or parts[2] not in ("truth", "belief"):
            continue
        p = m.pose.pose.position
        lin = m.twist.twist.linear
        speed = (
            lin.x
            if lin.y == 0.0 and lin.z == 0.0
            else math.sqrt(lin.x * lin.x + lin.y * lin.y + lin.z * lin.z)
        )
        row = (p.y, p.x, -p.z, _yaw_heading(m.pose.pose.orientation), speed)
        (truth if parts[2] == "truth" else belief).setdefault(parts[0], {})[t] = row
    if not truth:
        raise DataError("no /<vehicle>/odom/truth topic in the file", file=str(path))
    names = list(truth)
    times = np.array(sorted({t for d in truth.values() for t in d}))
    n, tt = len(names), len(times)

    def table(src: dict[str, dict[float, tuple[float, ...]]]) -> np.ndarray:
        out = np.full((n, tt, 5), np.nan)
        index = {t: k for k, t in enumerate(times)}
        for i, v in enumerate(names):
            for t, row in src.get(v, {}).items():
                if t in index:
                    out[i, index[t]] = row
        return out

    tv = table(truth)
    signals: dict[str, Any] = {
        "truth.pos": Signal(tv[:, :, 0:3], "m", ("north", "east", "down")),
        "truth.heading": Signal(tv[:, :, 3:4], "deg", ("",)),
        "truth.speed": Signal(tv[:, :, 4:5], "m/s", ("",)),
        "active": Signal(np.ones((n, tt, 1)), "", ("",)),
    }
    if belief:
        bv = table(belief)
        signals["belief.pos"] = Signal(bv[:, :, 0:3], "m", ("north", "east", "down"))
        signals["belief.heading"] = Signal(bv[:, :, 3:4], "deg", ("",))
    entities = [
        {"id": i, "name": v, "block": v, "index": 0, "team": 0} for i, v in enumerate(names)
    ]
    meta = msgs.metadata.get("marinesim", {})
    manifest: dict[str, Any] = {
        "scenario": meta.get("scenario", Path(path).name),
        "status": msgs.metadata.get("marinesim.end", {}).get("status", "unknown"),
        "source_format": "mcap",
        "seed": meta.get("seed"),
    }
    if msgs.note:
        manifest["mcap_note"] = msgs.note
    return RunResult(times, signals, entities, [], [], manifest)
