"""The UDP end of a SIM_JSON backend: bind the port SITL sends to, answer every packet.

SITL instance I sends its servo packets to UDP ``9002 + 10·I`` (ArduPilot applies the stride
for ``-I``/``--instance`` itself) from an ephemeral port and reads the reply on that same
socket, so the backend answers to the packet's source address.  One backend per instance:
run several :func:`serve` (or ``marinesim sitl``) with different ports at once.

A repeat arriving while a newer packet is already queued (or arrives within ``grace``
seconds) is not answered: SITL resent it only because our reply was late, and it has
accepted that reply meanwhile (answering twice would make SITL run one frame late for good,
see the protocol README §2.6).
"""

from __future__ import annotations

import select
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from marinesim.core.errors import ConfigError
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import ScenarioEnded
from marinesim.interop.sitl.protocol import _HEAD, MAGIC_16, MAGIC_32

__all__ = ["BASE_PORT", "ServeResult", "instance_port", "serve"]

#: SITL's default SIM_JSON port (instance 0).
BASE_PORT = 9002


def instance_port(instance: int, base: int = BASE_PORT) -> int:
    """Port SITL instance ``instance`` sends to: ``base + 10·instance``."""
    if instance < 0:
        raise ConfigError(f"instance must be >= 0, got {instance}", param="--instance")
    port = base + 10 * int(instance)
    if not 0 < port < 65536:
        raise ConfigError(f"port {port} out of range", param="--port")
    return port


@dataclass
class ServeResult:
    """Why and when :func:`serve` returned."""

    reason: str
    wall_s: float
    sim_t: float


def _is_repeat(lock: Lockstep, data: bytes, addr: object) -> bool:
    if len(data) < 8 or lock.last_count is None or addr != lock.addr:
        return False
    magic, _, count = _HEAD.unpack_from(data, 0)
    return magic in (MAGIC_16, MAGIC_32) and count == lock.last_count


#: A frame that took this long [s] may have been resent by SITL meanwhile (it resends after
#: ~1 s without a reply): resends already queued when its reply goes out are dropped.
SLOW_FRAME_S = 0.5


def _drop_queued_resends(sock: socket.socket, lock: Lockstep) -> tuple[bytes, object] | None:
    """After a slow frame: read what is queued without waiting; SITL's resends of the frame
    just answered are dropped (counted as repeats: they were sent before the reply existed,
    and answering them would hand SITL a second reply that it takes for its next frame); the
    first other datagram is returned to be handled next."""
    while select.select([sock], [], [], 0)[0]:
        nxt = sock.recvfrom(65535)
        if not _is_repeat(lock, nxt[0], nxt[1]):
            return nxt
        lock.stats.packets += 1
        lock.stats.repeats += 1
    return None


def _poll_timeout(sock: socket.socket, seconds: float) -> None:
    """Let ``recvfrom`` give up after ``seconds`` without a datagram.

    On Linux the socket stays blocking and the kernel's receive timeout (``SO_RCVTIMEO``) ends
    the wait (a ``BlockingIOError``): one system call per datagram.  Python's own socket
    timeout polls before each read (two calls, and a second wake-up), which cost about a
    third of the backend's CPU per frame in lockstep with SITL (``bench_sitl_replay.py
    --udp``: 63 → 47 µs/frame).  Elsewhere, Python's timeout (a ``TimeoutError``).
    """
    if sys.platform.startswith("linux"):
        whole = int(seconds)
        tv = struct.pack("ll", whole, int(round((seconds - whole) * 1e6)))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    else:
        sock.settimeout(seconds)


def _why(value: object) -> str:
    return value if isinstance(value, str) else "stopped"


def serve(
    lock: Lockstep,
    *,
    host: str = "127.0.0.1",
    port: int = BASE_PORT,
    idle_timeout: float | None = None,
    max_frames: int | None = None,
    grace: float = 0.02,
    on_bound: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool | str | None] | None = None,
) -> ServeResult:
    """Serve SITL until idle, a frame budget, the scenario's end or ``should_stop()``.

    Parameters
    ----------
    lock : Lockstep
    host, port : str, int
        Address to bind (127.0.0.1 by default; port 0 picks a free one, see ``on_bound``).
    idle_timeout : float, optional
        Return after this many seconds without a datagram (after the first one).
    max_frames : int, optional
        Return after this many physics frames.
    grace : float
        How long a repeat waits for a newer packet before it is answered [s].
    on_bound : callable, optional
        Called with the bound port.
    should_stop : callable, optional
        Polled about every 0.2 s (and every 256 datagrams); a true value stops the loop
        between two datagrams (never inside a frame); a string is returned as the reason.

    Raises
    ------
    ConfigError
        The port cannot be bound (in use: another backend for this instance?).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot bind UDP {host}:{port}: {exc.strerror or exc} (is another backend serving "
            "this SITL instance?)",
            param="--port",
        ) from None
    _poll_timeout(sock, 0.2)
    if on_bound is not None:
        on_bound(sock.getsockname()[1])
    wall0 = time.perf_counter()
    last_rx: float | None = None
    plant_t = lambda: float(getattr(lock.plant, "t", float("nan")))  # noqa: E731
    try:
        pending: tuple[bytes, object] | None = None
        while True:
            if pending is not None:
                data, addr = pending
                pending = None
            else:
                try:
                    data, addr = sock.recvfrom(65535)
                except (TimeoutError, BlockingIOError):  # the 0.2 s poll: nothing came
                    now = time.perf_counter()
                    why = should_stop() if should_stop is not None else None
                    if why:
                        return ServeResult(_why(why), now - wall0, plant_t())
                    idle = last_rx is not None and idle_timeout is not None
                    if idle and now - last_rx > idle_timeout:  # type: ignore[operator]
                        return ServeResult("idle", now - wall0, plant_t())
                    continue
            last_rx = time.perf_counter()
            if _is_repeat(lock, data, addr):
                ready, _, _ = select.select([sock], [], [], grace)
                if ready:
                    # something newer (or SITL's next resend) is queued: drop this repeat
                    nxt = sock.recvfrom(65535)
                    if not _is_repeat(lock, nxt[0], nxt[1]):
                        lock.stats.stale += 1
                    pending = nxt
                    continue
            t_frame = time.perf_counter()
            try:
                reply = lock.handle(data, addr)
            except ScenarioEnded as end:
                return ServeResult(str(end), time.perf_counter() - wall0, plant_t())
            if reply is not None:
                sock.sendto(reply, addr)
                if time.perf_counter() - t_frame > SLOW_FRAME_S:  # e.g. a first-run compile
                    pending = _drop_queued_resends(sock, lock)
            if max_frames is not None and lock.stats.frames >= max_frames:
                return ServeResult("frames", time.perf_counter() - wall0, plant_t())
            if should_stop is not None and lock.stats.packets % 256 == 0:
                why = should_stop()
                if why:
                    return ServeResult(_why(why), time.perf_counter() - wall0, plant_t())
    finally:
        sock.close()
