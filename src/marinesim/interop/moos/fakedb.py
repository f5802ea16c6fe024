"""A stand-in MOOSDB on 127.0.0.1 for tests, benchmarks and ``marinesim moos batch`` in CI.

It answers as the real MOOSDB 10.5 does in ``reference/moos_live/captures`` (that folder's
README §1.4): the WELCOME (source-aux ``hostname=…``, community, double = DB time − the
client's stamp, string ``asynchronous``), a NOTIFY delivered to every subscriber with the
community filled in, the stored value sent at once (id −1) to a new subscriber, TIMING
echoed with the DB time, POISON for a duplicate name, and a client silent for more than
``ClientTimeout`` wall seconds (5 by default) disconnected, as the real MOOSDB's client
thread does (``ThreadedCommServer``: a 1 s ``select`` per client; on a timeout, a client
whose last data came more than ``ClientTimeout`` unwarped seconds ago is dropped with
``Disconnecting "NAME" after 5 seconds of silence``).  It is not the MOOSDB: no
``DB_*`` variables, no synchronous clients, no ``VAR_SUMMARY``.

Tests use :class:`FakeMoosDB` in-process (inject mail, kill every connection, restart on the
same port, push raw bytes); ``python -m marinesim.interop.moos.fakedb MISSION.moos`` runs it
as a program reading ``ServerPort``, ``Community`` and ``MOOSTimeWarp`` from the mission, as
``MOOSDB MISSION.moos`` does, until SIGINT or SIGTERM.
"""

from __future__ import annotations

import contextlib
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from marinesim.interop.moos.wire import MoosMsg, PacketReader, WireError, encode_packet

__all__ = ["FakeMoosDB", "main"]


@dataclass
class _Conn:
    sock: socket.socket
    reader: PacketReader = field(default_factory=lambda: PacketReader(expect_protocol_string=True))
    name: str = ""
    subs: dict[str, float] = field(default_factory=dict)
    received: list[tuple[float, list[MoosMsg]]] = field(default_factory=list)
    last_good: float = field(default_factory=time.monotonic)
    last_check: float = field(default_factory=time.monotonic)


class FakeMoosDB:
    """A tiny asynchronous MOOSDB on 127.0.0.1 (a thread with a selector loop).

    Parameters
    ----------
    community : str
    warp : float
        ``MOOSTimeWarp``.
    port : int
        0 picks a free port.
    client_timeout : float or None
        Silence [wall s] after which a client is disconnected (the mission's
        ``ClientTimeout``, 5 s by default as in the MOOSDB); None never drops one.
    """

    def __init__(
        self,
        community: str = "fake",
        *,
        warp: float = 1.0,
        port: int = 0,
        client_timeout: float | None = 5.0,
    ) -> None:
        self.community = community
        self.client_timeout = client_timeout
        #: Names of the clients dropped for silence, in order.
        self.dropped: list[str] = []
        self.warp = warp
        self.port = port
        self.conns: dict[int, _Conn] = {}
        self.values: dict[str, MoosMsg] = {}
        self.history: list[_Conn] = []  # every connection ever made
        self.errors: list[str] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lsock: socket.socket | None = None

    # -------------------------------------------------------------- lifecycle
    def start(self) -> FakeMoosDB:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(8)
        ls.setblocking(False)
        self.port = ls.getsockname()[1]
        self._lsock = ls
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: every connection and the listening socket close (the DB dies)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self._thread = None

    def now(self) -> float:
        return time.time() * self.warp

    # -------------------------------------------------------------- helpers for tests
    def client(self, name: str) -> _Conn | None:
        with self._lock:
            for c in reversed(self.history):
                if c.name == name:
                    return c
        return None

    def received(self, name: str) -> list[MoosMsg]:
        """Every message a client sent (all its connections), in order."""
        with self._lock:
            return [m for c in self.history if c.name == name for _, p in c.received for m in p]

    def packets(self, name: str) -> list[tuple[float, list[MoosMsg]]]:
        with self._lock:
            return [pk for c in self.history if c.name == name for pk in c.received]

    def inject(self, key: str, value: float | str, *, src: str = "uTimerScript") -> None:
        """Deliver a post as if another client had made it."""
        t = self.now()
        if isinstance(value, str):
            m = MoosMsg("N", "S", key, t, -1.0, -1.0, value, src, "", "", 0)
        else:
            m = MoosMsg("N", "D", key, t, float(value), -1.0, "", src, "", "", 0)
        with self._lock:
            self._notify(m)

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            for c in list(self.conns.values()):
                with contextlib.suppress(OSError):
                    c.sock.sendall(data)

    # -------------------------------------------------------------- the server
    def _send(self, c: _Conn, msgs: list[MoosMsg]) -> None:
        try:
            c.sock.setblocking(True)
            c.sock.sendall(encode_packet(msgs))
            c.sock.setblocking(False)
        except OSError:
            pass

    def _notify(self, m: MoosMsg) -> None:
        m = m._replace(community=self.community)
        self.values[m.key] = m
        for c in list(self.conns.values()):
            if m.key in c.subs:
                self._send(c, [m])

    def _handle(self, c: _Conn, msgs: list[MoosMsg]) -> None:
        c.received.append((time.time(), msgs))
        for m in msgs:
            if m.type == "i":
                if any(o.name == m.sval for o in self.conns.values() if o is not c):
                    self._send(
                        c,
                        [
                            MoosMsg(
                                "K",
                                "S",
                                "",
                                self.now(),
                                -1.0,
                                -1.0,
                                f'A client of this name ("{m.sval}") already exists',
                            )
                        ],
                    )
                    continue
                c.name = m.sval
                self.history.append(c)
                now = self.now()
                self._send(
                    c,
                    [
                        MoosMsg(
                            "W",
                            "D",
                            "",
                            now,
                            now - m.time,
                            -1.0,
                            "asynchronous",
                            "",
                            "hostname=fake",
                            self.community,
                            -1,
                        )
                    ],
                )
            elif m.type == "R":
                # as the real MOOSDB (OnRegisterRxd): the subscription is filed under the
                # message's source, so a REGISTER without our name subscribes nobody
                owner = next((o for o in self.conns.values() if o.name == m.src), None)
                if owner is None:
                    continue
                owner.subs[m.key] = m.dval
                if m.key in self.values:
                    self._send(owner, [self.values[m.key]._replace(id=-1)])
            elif m.type == "N":
                self._notify(m)
            elif m.type == "T":
                self._send(c, [m._replace(dval=self.now(), dval2=0.0)])

    def _drop_silent(self, sel: selectors.BaseSelector) -> None:
        """The MOOSDB's rule: each client is checked when 1 s has passed without its data,
        and dropped when its last data is more than ``client_timeout`` s old."""
        if self.client_timeout is None:
            return
        now = time.monotonic()
        with self._lock:
            for fd, c in list(self.conns.items()):
                if now - c.last_check < 1.0:
                    continue
                c.last_check = now
                if now - c.last_good > self.client_timeout:
                    print(
                        f'Disconnecting "{c.name}" after {self.client_timeout:g} seconds of '
                        "silence",
                        file=sys.stderr,
                    )
                    self.dropped.append(c.name)
                    with contextlib.suppress(KeyError, ValueError):
                        sel.unregister(c.sock)
                    self.conns.pop(fd, None)
                    c.sock.close()

    def _loop(self) -> None:
        sel = selectors.DefaultSelector()
        assert self._lsock is not None
        sel.register(self._lsock, selectors.EVENT_READ, None)
        try:
            while not self._stop.is_set():
                self._drop_silent(sel)
                for key, _ev in sel.select(timeout=0.02):
                    if key.data is None:
                        try:
                            s, _addr = self._lsock.accept()
                        except BlockingIOError:
                            continue
                        s.setblocking(False)
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        conn = _Conn(s)
                        with self._lock:
                            self.conns[s.fileno()] = conn
                        sel.register(s, selectors.EVENT_READ, conn)
                        continue
                    conn = key.data
                    try:
                        data = conn.sock.recv(1 << 20)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    conn.last_good = conn.last_check = time.monotonic()
                    if not data:
                        sel.unregister(conn.sock)
                        with self._lock:
                            self.conns.pop(conn.sock.fileno(), None)
                        conn.sock.close()
                        continue
                    try:
                        pkts = conn.reader.feed(data)
                    except WireError as exc:
                        self.errors.append(str(exc))
                        continue
                    with self._lock:
                        for p in pkts:
                            self._handle(conn, p)
        finally:
            with self._lock:
                for c in self.conns.values():
                    with contextlib.suppress(OSError):
                        c.sock.close()
                self.conns.clear()
            sel.close()
            self._lsock.close()


def main(argv: list[str] | None = None) -> int:
    """``fakedb MISSION.moos``: serve the mission's port until SIGINT / SIGTERM."""
    from marinesim.interop.moos.moosfile import read_moos_file

    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m marinesim.interop.moos.fakedb MISSION.moos", file=sys.stderr)
        return 2
    mf = read_moos_file(args[0])
    port = int(float(mf.global_value("ServerPort") or 9000))
    warp = float(mf.global_value("MOOSTimeWarp") or 1.0)
    timeout = float(mf.global_value("ClientTimeout") or 5.0)
    db = FakeMoosDB(
        (mf.global_value("Community") or "fake").strip(),
        warp=warp,
        port=port,
        client_timeout=timeout if timeout >= 0 else 5.0,  # the DB ignores a negative one
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    db.start()
    print(f"fake MOOSDB: 127.0.0.1:{db.port}, community {db.community}", flush=True)
    stop.wait()
    db.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
