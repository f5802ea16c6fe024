"""The topics of ``log.mcap``, served live over the Foxglove WebSocket protocol while a run goes.

:class:`LiveServer` is a chunk consumer of the run-log writer (``Simulation.log_writer.taps``):
it starts a Foxglove SDK WebSocket server on loopback, advertises one channel per topic of
:class:`~marinesim.io.mcap.topics.RunTopics` (schema ``ros2msg``, message encoding ``cdr``: the
same schemas and bytes as the MCAP file, which Foxglove decodes natively) and logs every message
with its simulation time.  Pacing is the engine's (``time.time_warp``; ``marinesim run --live``
runs at real time unless the scenario sets a warp).  While a client is subscribed the recorder
flushes every :data:`LIVE_FLUSH_S` of wall time, so messages arrive in small bursts as the run
goes; with no client subscribed the flush interval is the usual one and nothing is encoded, so
a run without a viewer pays nothing for the server.

The server starts listening once the channels of the run's first chunk exist (``on_start``
announces its URL then); the port is checked when the server is made.  The reason: foxglove-sdk
(0.30.3, its newest release) sends a channel's advertisement to a connected client before it
records the channel for that client, so a fast client that subscribes at once can be answered
"Unknown channel ID" and never gets the topic (a WebSocket client racing 20 new channels met it
in 4 of 120 connections).  A client connecting after the channels exist is not exposed: the
server advertises existing channels before it reads anything from the client.  Topics that
appear later in a run (a signal first logged mid-run) still go through the SDK's path.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.io.mcap.msgdefs import full_definition, schema_name
from marinesim.io.mcap.topics import RunTopics, Topic
from marinesim.io.mcap.writer import write_batches

__all__ = ["LIVE_FLUSH_S", "LiveServer", "attach_live"]

#: Wall-clock flush interval of the recorder while serving live [s].
LIVE_FLUSH_S = 0.1


class _ChannelWriter:
    """Adapter: ``add_message`` of :func:`write_batches` → Foxglove channel ``log``."""

    def __init__(self, channels: dict[int, Any]) -> None:
        self.channels = channels

    def add_message(
        self, *, channel_id: int, log_time: int, publish_time: int, sequence: int, data: bytes
    ) -> None:
        self.channels[channel_id].log(data, log_time=log_time)


class _Watchers:
    """Server listener: calls ``on_change(True)`` at the first subscription, ``False`` after the
    last one ended (clients unsubscribe or disconnect)."""

    def __init__(self, on_change: Any) -> None:
        self.subs: set[tuple[int, int]] = set()
        self.on_change = on_change

    def on_subscribe(self, client: Any, channel: Any) -> None:
        was = bool(self.subs)
        self.subs.add((int(client.id), int(channel.id)))
        if not was and self.on_change is not None:
            self.on_change(True)

    def on_unsubscribe(self, client: Any, channel: Any) -> None:
        self.subs.discard((int(client.id), int(channel.id)))
        if not self.subs and self.on_change is not None:
            self.on_change(False)


class LiveServer:
    """A Foxglove WebSocket server publishing a run's topics.

    Parameters
    ----------
    entities : list of dict
        The run's entity rows.
    manifest : dict
        The run manifest (plugins, origin).
    host : str
        Loopback address only (``127.0.0.1`` or ``::1``).
    port : int
        TCP port (0: any free port; see :attr:`port`).
    on_watch : callable, optional
        ``on_watch(True)`` when a client first subscribes, ``on_watch(False)`` when none is left.
    on_start : callable, optional
        ``on_start(url)`` once the server listens (at the first chunk, its channels made).

    Raises
    ------
    ConfigError
        A non-loopback host, a port out of range or already in use.
    """

    def __init__(
        self,
        entities: list[dict[str, Any]],
        manifest: dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        on_watch: Any = None,
        on_start: Callable[[str], None] | None = None,
    ) -> None:
        from marinesim.io.mcap import require

        require("foxglove", "--live")
        import foxglove

        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ConfigError(
                f"the live server listens on loopback only, not {host!r}", param="--host"
            )
        if not 0 <= int(port) <= 65535:
            raise ConfigError(f"port must be 0..65535, got {port}", param="--port")
        self.host = host
        self.port = _free_port(host, int(port))
        self.name = f"marinesim {manifest.get('scenario', '')}".strip()
        self.context = foxglove.Context()
        self.watchers = _Watchers(on_watch)
        self.on_start = on_start
        self.server: Any = None
        self.topics = RunTopics(entities, manifest)
        self._channels: dict[str, Any] = {}
        self._by_id: dict[int, Any] = {}
        self._ids: dict[str, int] = {}
        self._seq: dict[int, int] = {}
        self.published = 0
        self.skipped_chunks = 0

    def start(self) -> None:
        """Listen on :attr:`port` (once; :meth:`write` calls it after the first chunk's channels).

        Raises
        ------
        ConfigError
            The port was taken since the server was made.
        """
        if self.server is not None:
            return
        import foxglove

        try:
            self.server = foxglove.start_server(
                name=self.name,
                host=self.host,
                port=self.port,
                context=self.context,
                server_listener=self.watchers,
                message_backlog_size=1 << 16,
            )
        except Exception as exc:  # the SDK raises its own error types
            raise ConfigError(
                f"cannot start the live server on {self.host}:{self.port}: {exc}", param="--port"
            ) from None
        if self.on_start is not None:
            self.on_start(self.url)

    @property
    def url(self) -> str:
        """``ws://host:port`` for Foxglove's "Open connection"."""
        return f"ws://{self.host}:{self.port}"

    def _advertise(self, topics: list[Topic]) -> None:
        import foxglove

        for tp in topics:
            schema = foxglove.Schema(
                name=schema_name(tp.pkg_type),
                encoding="ros2msg",
                data=full_definition(tp.pkg_type).encode(),
            )
            ch = foxglove.Channel(
                tp.name, schema=schema, message_encoding="cdr", context=self.context
            )
            self._channels[tp.name] = ch
            cid = len(self._ids) + 1
            self._ids[tp.name] = cid
            self._by_id[cid] = ch

    def write(self, t: np.ndarray, values: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Publish one chunk of frames (nothing is encoded while no client subscribes)."""
        self._advertise(self.topics.update(meta))
        self.start()
        if not any(ch.has_sinks() for ch in self._channels.values()):
            self.skipped_chunks += 1
            return
        batches = self.topics.encode(t, values, meta, True)  # /tf_static again for late joiners
        write_batches(_ChannelWriter(self._by_id), batches, lambda b: self._ids[b.topic], self._seq)
        self.published += sum(len(b.data) for b in batches)

    def finish(self, manifest: dict[str, Any] | None = None) -> None:
        """Stop the server (if it started)."""
        if self.server is not None:
            self.server.stop()


def _free_port(host: str, port: int) -> int:
    """``port`` if nothing listens on it (0: a free port the system picks).

    Raises
    ------
    ConfigError
        The port is in use.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"cannot start the live server on {host}:{port}: {exc.strerror or exc}",
                param="--port",
            ) from None
        return int(probe.getsockname()[1])


def attach_live(
    sim: Any,
    *,
    port: int = 8765,
    host: str = "127.0.0.1",
    pace: bool = True,
    on_start: Callable[[str], None] | None = None,
) -> LiveServer:
    """Serve ``sim``'s topics live: call after ``sim.stream_to(...)`` and before the run.

    With ``pace``, paces the run at real time unless the scenario set ``time.time_warp`` (a run
    driven by an external clock, SITL's lockstep, passes False); flushes the log every
    :data:`LIVE_FLUSH_S` while a client is subscribed, and for the first chunk (the server
    listens once its channels exist: ``on_start(url)`` says so).
    """
    writer = sim.log_writer
    if writer is None:
        raise ConfigError("the run must stream its log (stream_to) before serving it live")
    if pace and sim.clock.time_warp <= 0:
        sim.clock.time_warp = 1.0
    usual = sim.flush_s

    def on_watch(watching: bool) -> None:
        sim.flush_s = LIVE_FLUSH_S if watching else usual

    def started(url: str) -> None:
        if not live.watchers.subs:
            sim.flush_s = usual
        if on_start is not None:
            on_start(url)

    live = LiveServer(
        sim.entity_rows(),
        sim.manifest("running"),
        host=host,
        port=port,
        on_watch=on_watch,
        on_start=started,
    )
    sim.flush_s = LIVE_FLUSH_S  # the first chunk soon: the server starts with its channels
    writer.taps.append(live)
    return live
