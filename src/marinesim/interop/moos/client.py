"""A small asynchronous MOOS client (the protocol MOOS-IvP 10 programs speak to a MOOSDB).

One thread, no polling: the client writes a packet whenever it has something to send, and
reads whatever the DB pushes (:meth:`MoosClient.fetch`).  Behaviour read off the captures
of ``reference/moos_live`` (README §1.4):

* handshake: protocol string, a DATA message (key ``asynchronous``, string value = name,
  time = our MOOS time); the DB answers WELCOME (double value = its time minus our
  stamp: the skew estimate, kept in :attr:`MoosClient.skew`, not applied — on one host it is
  the 0.1 s answer delay) or POISON (a name already connected);
* REGISTER (double value = minimum interval, source = our name: the DB files the
  subscription under it) and NOTIFY carry a running id from 0;
  handshake and TIMING messages carry −1; NOTIFY leaves the community empty;
* a TIMING message (key ``_async_timing``, double 0) goes out about once per *wall*
  second; the DB's echo is consumed here;
* MOOS time = UNIX time × ``MOOSTimeWarp`` (the warp is never sent: every process reads it
  from the mission file).

Connection trouble is not fatal: :meth:`MoosClient.connect` retries (as MOOS apps do, once a
second) until its deadline and then raises :class:`MoosConnectionError` naming host:port;
a DB that goes away mid-run marks the client disconnected (``connected`` False) and the
owner reconnects with :meth:`MoosClient.try_connect`.  Malformed packets are counted
(:attr:`MoosClient.malformed`) and skipped.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from marinesim.core.errors import EngineError
from marinesim.interop.moos.wire import (
    PROTOCOL_STRING,
    MoosMsg,
    PacketReader,
    WireError,
    encode_notifies,
    encode_packet,
    notify,
)

__all__ = ["MoosClient", "MoosConnectionError"]

#: Seconds (wall) between connection attempts, as MOOS apps retry.
RETRY_PERIOD = 1.0
#: Seconds (wall) to wait for the DB's WELCOME.
HANDSHAKE_TIMEOUT = 5.0


class MoosConnectionError(EngineError):
    """The MOOSDB could not be reached or refused us (exit status 1)."""


class MoosClient:
    """Client side of one MOOSDB connection.

    Parameters
    ----------
    host, port : str, int
        The MOOSDB (``ServerHost`` / ``ServerPort`` of the mission file).
    name : str
        Our process name (``--alias`` or the app name).
    time_warp : float
        ``MOOSTimeWarp``.
    clock : callable
        Wall clock [s] (``time.time``); replaced in tests.
    log : callable
        Receives one line of text per connection event.

    Attributes
    ----------
    connected : bool
    community : str
        From the WELCOME.
    skew : float
        WELCOME's double value [s] (DB time − our handshake stamp).
    malformed : int
        Packets received that did not decode (skipped).
    reconnects : int
        Successful connections after the first.
    """

    def __init__(
        self,
        host: str,
        port: int,
        name: str,
        *,
        time_warp: float = 1.0,
        clock: Callable[[], float] = time.time,
        log: Callable[[str], None] = lambda s: None,
    ) -> None:
        self.host, self.port, self.name = host, int(port), name
        self.time_warp = float(time_warp)
        self._clock = clock
        self._log = log
        self._sock: socket.socket | None = None
        self._reader = PacketReader()
        self._next_id = 0
        self._last_timing = -1e300
        self._registered: dict[str, float] = {}
        self._send_lock = threading.Lock()  # a reconnection thread may register meanwhile
        self._closed = False
        self.connected = False
        self.community = ""
        self.db_host = ""
        self.skew = 0.0
        self.malformed = 0
        self.malformed_reasons: list[str] = []
        self.connections = 0
        self.reconnects = 0
        self.sent_packets = 0
        self.received = 0

    @property
    def where(self) -> str:
        """``host:port`` of the DB."""
        return f"{self.host}:{self.port}"

    def moos_time(self) -> float:
        """MOOS time now [s] (UNIX time × warp)."""
        return self._clock() * self.time_warp

    # ------------------------------------------------------------------ connection
    def try_connect(self, timeout: float = 1.0) -> bool:
        """One connection attempt with handshake; True on success.

        Raises
        ------
        MoosConnectionError
            The DB refused our name (POISON) or answered nonsense.
        """
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except OSError as exc:
            self._last_error = exc.strerror or str(exc)
            return False
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            hello = MoosMsg("i", "S", "asynchronous", self.moos_time(), sval=self.name)
            sock.sendall(PROTOCOL_STRING + encode_packet([hello]))
            reader = PacketReader()
            deadline = time.monotonic() + HANDSHAKE_TIMEOUT
            welcome: MoosMsg | None = None
            while welcome is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._last_error = "no WELCOME from the MOOSDB"
                    sock.close()
                    return False
                sock.settimeout(left)
                data = sock.recv(65536)
                if not data:
                    self._last_error = "the MOOSDB closed the connection during the handshake"
                    sock.close()
                    return False
                for pkt in reader.feed(data):
                    for m in pkt:
                        if m.type == "K":
                            sock.close()
                            raise MoosConnectionError(
                                f"MOOSDB at {self.where} refused {self.name!r}: {m.sval}"
                            )
                        if m.type == "W" and welcome is None:
                            welcome = m
        except (OSError, WireError) as exc:
            self._last_error = f"handshake failed: {exc}"
            sock.close()
            return False
        sock.settimeout(None)
        sock.setblocking(False)
        if self._closed:  # closed while we were connecting
            sock.close()
            return False
        self._sock = sock
        self._reader = reader
        self.connected = True
        self.community = welcome.community
        self.db_host = welcome.src_aux.partition("=")[2]
        self.skew = welcome.dval
        self.connections += 1
        if self.connections > 1:
            self.reconnects += 1
        self._log(
            f"connected to MOOSDB at {self.where} (community {self.community!r}, "
            f"skew {self.skew:.3f} s)"
        )
        if self._registered:  # a reconnection: register again
            self.register(list(self._registered.items()))
        return True

    def connect(self, retry_for: float | None = 30.0) -> None:
        """Connect, retrying once a second (wall) for ``retry_for`` seconds (None: forever).

        Raises
        ------
        MoosConnectionError
            Still unreachable at the deadline (the message names host:port and the reason).
        """
        start = time.monotonic()
        attempts = 0
        self._last_error = ""
        while True:
            attempts += 1
            if self.try_connect():
                return
            waited = time.monotonic() - start
            if attempts == 1:
                self._log(
                    f"MOOSDB at {self.where} not reachable ({self._last_error}); "
                    f"retrying every {RETRY_PERIOD:g} s"
                    + ("" if retry_for is None else f" for {retry_for:g} s")
                )
            if retry_for is not None and waited + RETRY_PERIOD > retry_for:
                raise MoosConnectionError(
                    f"cannot connect to the MOOSDB at {self.where}: {self._last_error} "
                    f"({attempts} attempts over {waited:.1f} s; is MOOSDB running, and do "
                    "ServerHost/ServerPort of the mission file match it?)"
                )
            time.sleep(RETRY_PERIOD)

    def _drop(self, why: str) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None
        if self.connected:
            self._log(f"lost the MOOSDB at {self.where} ({why}); reconnecting")
        self.connected = False

    def close(self) -> None:
        """Close the connection (no reconnection, nothing reported)."""
        self._closed = True
        self.connected = False
        self._drop("closed")

    # ------------------------------------------------------------------ sending
    def _send(self, msgs: Sequence[MoosMsg]) -> bool:
        if not self.connected or self._sock is None:
            return False
        now = self._clock()
        if now - self._last_timing >= 1.0:
            self._last_timing = now
            msgs = [MoosMsg("T", "D", "_async_timing", self.moos_time(), 0.0, -1.0), *msgs]
        return self._send_bytes(encode_packet(list(msgs)))

    def _send_bytes(self, data: bytes) -> bool:
        with self._send_lock:
            try:
                try:  # the socket is non-blocking: most packets go in one call
                    sent = self._sock.send(data)
                except BlockingIOError:
                    sent = 0
                if sent < len(data):  # a full buffer: wait for the rest, at most 2 s
                    self._sock.settimeout(2.0)
                    self._sock.sendall(data[sent:])
                    self._sock.setblocking(False)
            except (OSError, AttributeError) as exc:  # AttributeError: dropped meanwhile
                self._drop(getattr(exc, "strerror", None) or str(exc))
                return False
        self.sent_packets += 1
        return True

    def _id(self) -> int:
        i = self._next_id
        self._next_id += 1
        return i

    def register(self, names: Iterable[str | tuple[str, float]]) -> bool:
        """Subscribe (REGISTER messages, one packet); kept for re-registration."""
        msgs = []
        for item in names:
            name, interval = (item, 0.0) if isinstance(item, str) else item
            self._registered[name] = float(interval)
            # the source names the subscriber: the real MOOSDB files the registration under
            # it, so an empty source subscribes nobody (mail never arrives)
            msgs.append(
                MoosMsg(
                    "R", "D", name, self.moos_time(), float(interval), -1.0,
                    src=self.name, id=self._id(),
                )
            )  # fmt: skip
        return self._send(msgs)

    def post(self, items: Sequence[tuple[str, float | str]], moos_time: float) -> bool:
        """Publish ``(key, value)`` pairs in one packet, all stamped ``moos_time``."""
        if not items:
            return True
        if not self.connected or self._sock is None:
            self._next_id += len(items)
            return False
        if self._clock() - self._last_timing >= 1.0:  # the TIMING message leads the packet
            msgs = [notify(k, v, moos_time, src=self.name, id=self._id()) for k, v in items]
            return self._send(msgs)
        first = self._next_id
        self._next_id += len(items)
        return self._send_bytes(encode_notifies(items, moos_time, self.name, first))

    def heartbeat(self) -> None:
        """Send the TIMING message when a wall second has passed since the last one."""
        if self._clock() - self._last_timing >= 1.0:
            self._send([])

    # ------------------------------------------------------------------ receiving
    def fetch(self, timeout: float = 0.0) -> list[MoosMsg]:
        """Mail that arrived (NOTIFY messages), waiting at most ``timeout`` wall seconds."""
        out: list[MoosMsg] = []
        if not self.connected or self._sock is None:
            if timeout > 0:
                time.sleep(timeout)
            return out
        end = time.monotonic() + max(timeout, 0.0)
        while True:
            left = max(end - time.monotonic(), 0.0)
            try:
                ready, _, _ = select.select([self._sock], [], [], left)
            except (OSError, ValueError) as exc:
                self._drop(str(exc))
                return out
            if not ready:
                return out
            try:
                data = self._sock.recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError as exc:
                self._drop(exc.strerror or str(exc))
                return out
            if not data:
                self._drop("connection closed by the MOOSDB")
                return out
            before = self._reader.malformed
            try:
                pkts = self._reader.feed(data)
            except WireError as exc:
                self._note_malformed(str(exc))
                self._drop(f"unreadable stream: {exc}")
                return out
            for reason in self._reader.errors[
                len(self._reader.errors) - (self._reader.malformed - before) :
            ]:
                self._note_malformed(reason)
            for pkt in pkts:
                for m in pkt:
                    if m.type == "N":
                        out.append(m)
                        self.received += 1
                    elif m.type == "K":
                        self._drop(f"POISON from the MOOSDB: {m.sval}")
                        return out
            if out and time.monotonic() >= end:
                return out

    def _note_malformed(self, reason: str) -> None:
        self.malformed += 1
        self.malformed_reasons.append(reason)
        del self.malformed_reasons[:-20]
        self._log(f"malformed packet from the MOOSDB skipped ({reason})")
