"""``sitl_servo`` controller plugin: the engine end of the SIM_JSON backend.

Every tick it publishes ``thrusters/cmd`` (N, k) — the per-motor ESC pulse widths [µs] that
the backend wrote into :attr:`SitlServo.pwm` from the latest servo packet (already mapped
through the ArduSub frame, :class:`~marinesim.interop.sitl.frame.ServoMap`) — for the
``fossen6dof`` motion plugin's thruster plant (ESC, rotor lag, T200 at the battery voltage).
Without a backend (a plain ``marinesim run``) the pulses stay at 1500 µs: thrusters off.

It also keeps the newest ``rangefinder/distance_cm`` and ``rangefinder/signal_quality`` of
its vehicle (from the ``rangefinder`` sensor plugin: delay, dropouts, quality) in
:attr:`SitlServo.reading`, for the backend's ``rng_1``.  A reading published in the sense
phase of tick k reaches this controller at tick k + 1 (one physics frame later).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin

__all__ = ["SitlServo", "SitlServoParams"]


class SitlServoParams(ParamsBase):
    """Number of thrusters driven from SITL's servo outputs."""

    motors: int = field(8, ge=1, le=32, description="thrusters of the vehicle (motor order)")


class SitlServo(Plugin):
    """Holds ArduPilot SITL's motor outputs and the rangefinder's newest reading."""

    kind: ClassVar[str] = "controller"
    Params = SitlServoParams
    publishes: ClassVar[dict[str, str]] = {"thrusters/cmd": "double"}
    subscribes: ClassVar[dict[str, str]] = {
        "rangefinder/distance_cm": "double",
        "rangefinder/signal_quality": "double",
    }

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        super().__init__(name, params)
        k = self.params.motors  # type: ignore[attr-defined]
        #: (k,) ESC pulses [µs] per motor, set by the backend before each tick.
        self.pwm = np.full(k, 1500.0)
        #: (distance [m] or NaN for a dropout, signal quality [%] or −1), newest first-row
        #: reading; None before the first one.
        self.reading: tuple[float, float] | None = None
        #: Readings seen (counts dropouts too).
        self.readings = 0

    def start(self, ctx: Any, rng: Any) -> None:
        """Start with neutral pulses and no reading."""
        self.pwm = np.full(self.params.motors, 1500.0)  # type: ignore[attr-defined]
        self.reading = None
        self.readings = 0

    def control(self, ctx: Any, rng: Any) -> None:
        """Publish the held pulses; keep the newest rangefinder reading."""
        dist, got = ctx.inbox.latest("rangefinder/distance_cm", default=-1.0)
        if got[0]:
            sq, _ = ctx.inbox.latest("rangefinder/signal_quality", default=-1.0)
            d = float(dist[0])
            self.reading = (d / 100.0 if d >= 0 else float("nan"), float(sq[0]))
            self.readings += 1
        ctx.publish("thrusters/cmd", np.broadcast_to(self.pwm, (ctx.n, self.pwm.shape[0])).copy())
        ctx.log("pwm", np.broadcast_to(self.pwm, (ctx.n, self.pwm.shape[0])), "us")

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """Its law in the generated tick (:mod:`marinesim.interop.sitl.laws`)."""
        from marinesim.interop.sitl.laws import servo_laws

        return servo_laws(self, slot, sim)
