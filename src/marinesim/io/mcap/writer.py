"""Stream a run to a rosbag2-compatible MCAP file (``log.mcap``), one MCAP chunk per flush.

The file has profile ``ros2``, one schema per message type (encoding ``ros2msg``, the full
definition of :mod:`marinesim.io.mcap.msgdefs`), one channel per topic (message encoding
``cdr``, with the rosbag2 ``offered_qos_profiles`` metadata; ``/tf_static`` is transient-local),
and the run's identity (version, scenario, seed) as an MCAP metadata record.  Every recorder
chunk becomes one MCAP chunk written, with its message indexes, before the call returns and
flushed to the operating system: a run killed at any moment leaves a file whose complete chunks
:func:`marinesim.io.mcap.reader.read_messages` reads (the summary section at the end is written
by :meth:`McapLog.finish`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from marinesim.io.mcap.msgdefs import full_definition, schema_name
from marinesim.io.mcap.topics import Batch, RunTopics

__all__ = ["MCAP_FILE", "McapLog", "qos_profile"]

MCAP_FILE = "log.mcap"
_LIMIT = "    sec: 2147483647\n    nsec: 4294967295\n"


def qos_profile(latched: bool = False) -> str:
    """rosbag2's ``offered_qos_profiles`` YAML: reliable, keep-last, volatile or latched."""
    return (
        "- history: 1\n  depth: 10\n  reliability: 1\n"
        f"  durability: {1 if latched else 2}\n"
        f"  deadline:\n{_LIMIT}  lifespan:\n{_LIMIT}  liveliness: 1\n"
        f"  liveliness_lease_duration:\n{_LIMIT}  avoid_ros_namespace_conventions: false\n"
    )


class McapLog:
    """Writes the ROS 2 topics of a run to an MCAP file as the recorder flushes.

    Parameters
    ----------
    path : Path
        The file (replaced).
    entities : list of dict
        The run's entity rows.
    manifest : dict
        The ``running`` manifest (plugins, origin, identity).
    """

    def __init__(self, path: str | Path, entities: list[dict[str, Any]], manifest: dict[str, Any]):
        import mcap
        from mcap.writer import CompressionType, Writer

        self.path = Path(path)
        self.topics = RunTopics(entities, manifest)
        self._fh = self.path.open("wb")
        self._w = Writer(self._fh, chunk_size=1 << 40, compression=CompressionType.ZSTD)
        from marinesim.core.version import __version__

        self._w.start(profile="ros2", library=f"marinesim {__version__}; mcap {mcap.__version__}")
        self._w.add_metadata(
            "marinesim",
            {
                k: str(manifest.get(k))
                for k in ("marinesim_version", "scenario", "seed", "scenario_sha256", "origin")
            },
        )
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self.messages = 0
        self._first = True
        self._seq: dict[int, int] = {}
        self.closed = False

    def _channel(self, b: Batch) -> int:
        cid = self._channels.get(b.topic)
        if cid is None:
            sid = self._schemas.get(b.pkg_type)
            if sid is None:
                sid = self._w.register_schema(
                    schema_name(b.pkg_type), "ros2msg", full_definition(b.pkg_type).encode()
                )
                self._schemas[b.pkg_type] = sid
            latched = b.topic == "/tf_static"
            cid = self._w.register_channel(
                b.topic, "cdr", sid, {"offered_qos_profiles": qos_profile(latched)}
            )
            self._channels[b.topic] = cid
        return cid

    def write(self, t: np.ndarray, values: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Encode and write one chunk of frames, then flush it (one MCAP chunk)."""
        batches = self.topics.encode(t, values, meta, self._first)
        self._first = False
        write_batches(self._w, batches, self._channel, self._seq)
        self.messages += sum(len(b.data) for b in batches)
        self._w.flush()

    def finish(self, manifest: dict[str, Any] | None = None) -> None:
        """Write the run's final status and the summary section; close the file."""
        if self.closed:
            return
        if manifest is not None:
            self._w.add_metadata(
                "marinesim.end",
                {k: str(manifest.get(k)) for k in ("status", "ended_by", "frames", "t_end")},
            )
        self._w.finish()
        self._fh.close()
        self.closed = True


def write_batches(writer: Any, batches: list[Batch], channel: Any, seq: dict[int, int]) -> None:
    """Add the messages of ``batches`` to ``writer`` in time order (log = publish time).

    ``channel(batch)`` gives the channel id; ``seq`` holds each channel's next sequence number.
    """
    if not batches:
        return
    ids = [channel(b) for b in batches]
    t = np.concatenate([b.t for b in batches])
    ns = np.round(t * 1e9).astype(np.int64)
    which = np.concatenate([np.full(len(b.t), i) for i, b in enumerate(batches)])
    pos = np.concatenate([np.arange(len(b.t)) for b in batches])
    order = np.argsort(ns, kind="stable")
    for k in order:
        i = int(which[k])
        cid = ids[i]
        n = seq.get(cid, 0)
        seq[cid] = n + 1
        writer.add_message(
            channel_id=cid,
            log_time=int(ns[k]),
            publish_time=int(ns[k]),
            sequence=n,
            data=batches[i].data[int(pos[k])],
        )
