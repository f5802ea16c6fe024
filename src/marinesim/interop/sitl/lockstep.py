"""Lockstep bookkeeping of a SIM_JSON backend (no sockets: :meth:`Lockstep.handle` maps one
datagram to one reply or to silence).

SITL counts the replies it has accepted in ``frame_count`` and resends the same packet (same
count) when a reply was lost or unusable.  For each datagram from SITL's address:

* not a servo packet → counted as malformed, no reply (never an exception);
* ``frame_count`` = last + 1 → one physics step with these outputs, reply;
* = last → a repeat: the cached reply again, **no** step;
* > last + 1 → packets went missing: the missed frames are stepped with the previous outputs
  (the time stays n/rate), up to ``max_catchup`` frames; a larger jump is stepped once and
  counted as a resync;
* = 0 after frames were served, or a first packet from a new address with count 0 → SITL
  restarted: the plant starts over (its time restarts too; SITL's clock is new);
* < last otherwise → stale (out of order): counted, no reply — answering it would make SITL
  take that reply for its next frame and run one frame late for good.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from marinesim.interop.sitl.protocol import (
    PacketError,
    SensorReply,
    ServoPacket,
    SitlClock,
    decode_servo,
    encode_reply,
)

__all__ = ["Lockstep", "LockstepStats", "Plant"]


class Plant(Protocol):
    """What the lockstep drives: ``reset()``, ``step(pwm) -> SensorReply``."""

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
    malformed: int = 0
    packets_32: int = 0
    last_error: str = ""
    sitl_rate_hz: int = 0
    addresses: list[Any] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the console."""
        return (
            f"frames {self.frames} repeats {self.repeats} stale {self.stale} missing "
            f"{self.missing} restarts {self.restarts} malformed {self.malformed}"
        )


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
    """

    def __init__(
        self,
        plant: Plant,
        *,
        max_catchup: int = 1200,
        on_frame: Callable[[ServoPacket, SensorReply, int], None] | None = None,
    ) -> None:
        self.plant = plant
        self.max_catchup = int(max_catchup)
        self.on_frame = on_frame
        self.stats = LockstepStats()
        self.clock = SitlClock()
        self.addr: Any = None
        self.last_count: int | None = None
        self.last_reply: bytes | None = None
        self._last_pwm: Any = None
        self._fresh = True  # the plant is at its initial state

    def _restart(self) -> None:
        if not self._fresh:
            self.plant.reset()
            self.stats.restarts += 1
        self._fresh = True
        self.clock = SitlClock()
        self.last_count = None
        self.last_reply = None
        self._last_pwm = None

    def _step(self, pkt: ServoPacket) -> bytes:
        reply = self.plant.step(pkt.pwm)
        self._fresh = False
        self.stats.frames += 1
        data = encode_reply(reply)
        self.last_reply = data
        self.last_count = pkt.frame_count
        self._last_pwm = pkt.pwm
        t_us = self.clock.advance(float(reply.timestamp))
        if self.on_frame is not None:
            self.on_frame(pkt, reply, t_us)
        return data

    def handle(self, data: bytes, addr: Any = None) -> bytes | None:
        """One datagram from SITL → the reply to send back (None: send nothing)."""
        self.stats.packets += 1
        try:
            pkt = decode_servo(data)
        except PacketError as exc:
            self.stats.malformed += 1
            self.stats.last_error = str(exc)
            return None
        if pkt.channels == 32:
            self.stats.packets_32 += 1
        self.stats.sitl_rate_hz = pkt.frame_rate
        count = pkt.frame_count
        new_addr = addr is not None and self.addr is not None and addr != self.addr
        if self.last_count is not None and count == 0 and (self.last_count > 0 or new_addr):
            self._restart()
        elif new_addr and count != 0 and count < (self.last_count or 0):
            self.stats.stale += 1  # another sender's old packet
            return None
        if addr is not None and addr != self.addr:
            self.addr = addr
            self.stats.addresses.append(addr)
        last = self.last_count
        if last is None:
            return self._step(pkt)
        if count == last:
            self.stats.repeats += 1
            return self.last_reply
        if count < last:
            self.stats.stale += 1
            return None
        gap = count - last - 1
        if gap > 0:
            self.stats.missing += gap
            if gap <= self.max_catchup and self._last_pwm is not None:
                held = ServoPacket(pkt.frame_rate, last, self._last_pwm)
                for i in range(gap):
                    self._step(ServoPacket(held.frame_rate, last + 1 + i, held.pwm))
            else:
                self.stats.resyncs += 1
        return self._step(pkt)
