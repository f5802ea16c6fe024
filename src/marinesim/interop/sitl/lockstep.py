"""Lockstep bookkeeping of a SIM_JSON backend (no sockets: :meth:`Lockstep.handle` maps one
datagram to one reply or to silence).

SITL's own rules (``libraries/SITL/SIM_JSON.cpp``): one SITL process sends every servo packet
from one UDP socket (one source address for its whole life); its ``frame_count`` starts at 0
when the process starts, rises by one per accepted reply and never goes back; a packet whose
reply was lost or unusable is resent with the same count (after ~1.1 s when nothing came
back); the ``frame_rate`` field is its physics rate (never 0).  So the backend follows
*one* SITL — the address it is serving — and, for each datagram:

* not a servo packet, or a frame rate of 0 Hz → counted as malformed, no reply;
* from the SITL being served:

  - ``frame_count`` = last + 1 → one physics step with these outputs, reply;
  - = last → a repeat: the cached reply again, **no** step;
  - > last + 1 → packets went missing: the missed frames are stepped with the previous
    outputs (the time stays n/rate), up to ``max_catchup`` frames; a larger jump is stepped
    once and counted as a resync;
  - < last → stale (out of order): counted, no reply — answering it would make SITL take
    that reply for its next frame and run one frame late for good;

* from another address (or a count of 0 from the same one): a **new SITL** only when its
  count is 0 *and* the SITL being served has sent nothing for ``takeover_s`` (1 s; a SITL
  that is alive sends within milliseconds of each reply, and resends every ~1.1 s when it
  waits).  Then the plant starts over (its time restarts too: SITL's clock is new) and the
  new address is followed.  Anything else from elsewhere is a **stray** datagram: counted,
  never answered, never touching the physics.  A real SITL restarted while the old one was
  still sending is therefore answered at its first resend, ~1.1 s later.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from marinesim.interop.sitl.protocol import (
    _HEAD,
    _SIZES,
    PacketError,
    SensorReply,
    ServoPacket,
    SitlClock,
    decode_servo,
    encode_reply,
)

__all__ = ["Lockstep", "LockstepStats", "Plant"]


class Plant(Protocol):
    """What the lockstep drives: ``reset()``, ``step(pwm) -> SensorReply``.

    A plant that also has ``t`` and ``reply()`` and ``step_raw(datagram) -> bytes`` (the
    validated servo datagram itself) or ``step_bytes(pwm) -> bytes`` is stepped through that
    instead (no :class:`SensorReply` per frame)."""

    def reset(self) -> None: ...

    def step(self, pwm: Any) -> SensorReply: ...


@dataclass
class LockstepStats:
    """Counters of one backend."""

    packets: int = 0
    frames: int = 0
    repeats: int = 0
    stale: int = 0
    missing: int = 0
    resyncs: int = 0
    restarts: int = 0
    strays: int = 0
    malformed: int = 0
    packets_32: int = 0
    last_error: str = ""
    sitl_rate_hz: int = 0
    addresses: list[Any] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the console."""
        return (
            f"frames {self.frames} repeats {self.repeats} stale {self.stale} missing "
            f"{self.missing} restarts {self.restarts} strays {self.strays} malformed "
            f"{self.malformed}"
        )


class _ReplyView:
    """The reply of a ``step_bytes`` plant for ``on_frame`` hooks, built only when read."""

    __slots__ = ("_plant", "_reply", "timestamp")

    def __init__(self, plant: Any) -> None:
        self._plant = plant
        self._reply: SensorReply | None = None
        self.timestamp = float(plant.t)

    def __getattr__(self, name: str) -> Any:
        if self._reply is None:
            self._reply = self._plant.reply()
        return getattr(self._reply, name)


class Lockstep:
    """Frame bookkeeping between SITL and a plant.

    Parameters
    ----------
    plant : Plant
        Physics (e.g. :class:`~marinesim.interop.sitl.plant.EnginePlant`).
    max_catchup : int
        Largest gap of missing frames that is stepped through.
    on_frame : callable, optional
        ``on_frame(packet, reply, sitl_time_us)`` after every new physics frame (logging).
    takeover_s : float
        A frame-0 packet from a new sender is a SITL restart only when the SITL being served
        has been silent this long [s wall]; otherwise it is a stray datagram.
    hook_period : float
        Call ``on_frame`` only on the frames whose physics time reaches the next multiple of
        this period [s] (and on the first frame after a restart); 0 = every frame.  A logger
        that keeps one row per period loses nothing, and the other frames cost no Python.
    """

    def __init__(
        self,
        plant: Plant,
        *,
        max_catchup: int = 1200,
        on_frame: Callable[[ServoPacket, SensorReply, int], None] | None = None,
        takeover_s: float = 1.0,
        hook_period: float = 0.0,
    ) -> None:
        self.plant = plant
        self.max_catchup = int(max_catchup)
        self.on_frame = on_frame
        self.stats = LockstepStats()
        self.clock = SitlClock()
        self.takeover_s = float(takeover_s)
        self.addr: Any = None
        self.last_rx: float | None = None  # wall time of the served SITL's latest packet
        self.last_count: int | None = None
        self.last_reply: bytes | None = None
        self._last_pwm: Any = None
        self._fresh = True  # the plant is at its initial state
        #: a compiled plant's ``step_bytes(pwm) -> reply bytes`` (no SensorReply per frame)
        self._fast: Callable[[Any], bytes] | None = getattr(plant, "step_bytes", None)
        #: ... or ``step_raw(datagram) -> reply bytes`` (the pulses decoded in compiled code)
        self._raw: Callable[[bytes], bytes] | None = getattr(plant, "step_raw", None)
        self.hook_period = float(hook_period)
        self._next_hook = 0.0
        self._last_data: bytes | None = None

    def _restart(self) -> None:
        if not self._fresh:
            self.plant.reset()
            self.stats.restarts += 1
        self._fresh = True
        self.clock = SitlClock()
        self.last_count = None
        self.last_reply = None
        self._last_pwm = None
        self._last_data = None
        self._next_hook = 0.0

    def _hook(self, ts: float) -> bool:
        """Whether ``on_frame`` is due at physics time ``ts`` (advances the schedule)."""
        per = self.hook_period
        if per <= 0.0:
            return True
        if ts + 1e-9 < self._next_hook:
            return False
        self._next_hook = (int(ts / per + 1e-9) + 1) * per
        return True

    def _step_raw(self, data: bytes, rate: int, count: int) -> bytes:
        assert self._raw is not None
        out = self._raw(data)
        plant: Any = self.plant
        ts = float(plant.t)
        self._fresh = False
        self.stats.frames += 1
        self.last_reply = out
        self.last_count = count
        self._last_data = data
        t_us = self.clock.advance(ts)
        if self.on_frame is not None and self._hook(ts):
            self.on_frame(ServoPacket(rate, count, decode_servo(data).pwm), _ReplyView(plant), t_us)
        return out

    def _step(self, pkt: ServoPacket) -> bytes:
        if self._fast is not None:
            data = self._fast(pkt.pwm)
            ts = float(self.plant.t)  # type: ignore[attr-defined]
            reply: Any = _ReplyView(self.plant) if self.on_frame is not None else None
        else:
            reply = self.plant.step(pkt.pwm)
            data = encode_reply(reply)
            ts = float(reply.timestamp)
        self._fresh = False
        self.stats.frames += 1
        self.last_reply = data
        self.last_count = pkt.frame_count
        self._last_pwm = pkt.pwm
        t_us = self.clock.advance(ts)
        if self.on_frame is not None and self._hook(ts):
            self.on_frame(pkt, reply, t_us)
        return data

    def handle(self, data: bytes, addr: Any = None, now: float | None = None) -> bytes | None:
        """One datagram from ``addr`` → the reply to send back (None: send nothing).

        ``now`` is the wall time of arrival [s] (default ``time.monotonic()``); replays pass
        their own clock.
        """
        self.stats.packets += 1
        nch = 0
        if len(data) >= 8:
            magic, rate, count = _HEAD.unpack_from(data, 0)
            nch = _SIZES.get(magic, 0)
        if nch == 0 or rate == 0 or len(data) != 8 + 2 * nch:
            try:
                decode_servo(data)  # raises with the message naming the byte offset
                raise PacketError("unreadable servo packet")  # pragma: no cover
            except PacketError as exc:
                self.stats.malformed += 1
                self.stats.last_error = str(exc)
                return None
        if now is None:
            now = time.monotonic()
        if self.last_count is not None and (addr != self.addr or count < self.last_count):
            quiet = self.last_rx is None or now - self.last_rx >= self.takeover_s
            if count == 0 and quiet:
                self._restart()
            elif addr != self.addr:
                self.stats.strays += 1  # another program's datagram, or a SITL not yet ours
                return None
        if self.last_count is None and addr != self.addr:
            self.addr = addr
            self.stats.addresses.append(addr)
        self.last_rx = now
        if nch == 32:
            self.stats.packets_32 += 1
        self.stats.sitl_rate_hz = rate
        last = self.last_count
        if last is not None and count == last:
            self.stats.repeats += 1
            return self.last_reply
        if last is not None and count < last:
            self.stats.stale += 1
            return None
        raw = self._raw is not None  # a ``step_raw`` plant: no packet object per frame
        pkt = None if raw else decode_servo(data)
        gap = 0 if last is None else count - last - 1
        if gap > 0:
            assert last is not None
            self.stats.missing += gap
            held = self._last_data if raw else self._last_pwm
            if gap <= self.max_catchup and held is not None:
                for c in range(last + 1, count):  # the previous pulses, renumbered
                    if raw:
                        self._step_raw(held, rate, c)
                    else:
                        assert pkt is not None
                        self._step(ServoPacket(pkt.frame_rate, c, held))
            else:
                self.stats.resyncs += 1
        if raw:
            return self._step_raw(data, rate, count)
        assert pkt is not None
        return self._step(pkt)
