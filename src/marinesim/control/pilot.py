"""Pilot throttle stick → climb rate (ArduSub ``get_pilot_desired_climb_rate``, spec §5.1).

The throttle control input runs 0…1000 with its middle at 500; a dead band of half-width
THR_DZ × joystick gain (clamped to 0…400) around the middle gives 0.  Scripts give either the
stick value or a climb-rate demand (cm/s) that is turned into the equivalent stick value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from marinesim.core.errors import ConfigError

__all__ = [
    "PilotScript",
    "PilotStick",
    "climb_to_stick",
    "parse_pilot_script",
    "pilot_climb_rate",
    "read_pilot_script",
]


@dataclass(frozen=True)
class PilotStick:
    """Stick shaping parameters (ArduSub names in brackets).

    Parameters
    ----------
    speed_up : float
        PILOT_SPEED_UP (cm/s).
    speed_dn : float
        PILOT_SPEED_DN (cm/s); 0 means "use speed_up".
    thr_dz : float
        THR_DZ (PWM µs).
    gain : float
        Current joystick gain (JS_GAIN_DEFAULT, 0.5).
    """

    speed_up: float = 500.0
    speed_dn: float = 0.0
    thr_dz: float = 100.0
    gain: float = 0.5

    @property
    def descent_speed(self) -> float:
        """Effective descent speed (cm/s, > 0)."""
        return self.speed_dn if self.speed_dn > 0 else self.speed_up

    @property
    def band(self) -> tuple[float, float]:
        """(bottom, top) of the dead band on the 0…1000 stick scale."""
        hw = min(max(self.thr_dz * self.gain, 0.0), 400.0)
        return 500.0 - hw, 500.0 + hw


def pilot_climb_rate(stick: np.ndarray | float, p: PilotStick) -> np.ndarray | float:
    """Climb rate (cm/s, up +) for a throttle control input 0…1000.

    Parameters
    ----------
    stick : float or ndarray
        Throttle control input (0…1000), any shape.
    p : PilotStick

    Returns
    -------
    float or ndarray
        Same shape as ``stick``: negative below the band, positive above, 0 inside.
    """
    bottom, top = p.band
    s = np.asarray(stick, dtype=float)
    down = p.descent_speed * (s - bottom) / bottom
    up = p.speed_up * (s - top) / (1000.0 - top)
    out = np.where(s < bottom, down, np.where(s > top, up, 0.0))
    return float(out) if out.ndim == 0 else out


def climb_to_stick(climb: float, p: PilotStick) -> float:
    """Stick value (0…1000, rounded to an integer as ArduSub's control_in) giving ``climb``."""
    bottom, top = p.band
    if climb > 0:
        s = top + climb / p.speed_up * (1000.0 - top)
    elif climb < 0:
        s = bottom + climb / p.descent_speed * bottom
    else:
        s = 500.0
    return float(min(max(round(s), 0), 1000))


@dataclass(frozen=True)
class PilotScript:
    """Piecewise-constant stick timeline: ``times`` (s, ascending) and ``sticks`` (0…1000).

    Before the first time the stick is centred (500).
    """

    times: tuple[float, ...] = ()
    sticks: tuple[float, ...] = ()

    @classmethod
    def from_steps(
        cls, steps: Sequence[tuple[float, str, float]], stick: PilotStick | None = None
    ) -> PilotScript:
        """Build from (t, kind, value) with kind ``throttle`` (0…1000) or ``climb`` (cm/s)."""
        p = stick or PilotStick()
        times, sticks = [], []
        for t, kind, value in steps:
            if kind == "throttle":
                if not 0.0 <= value <= 1000.0:
                    raise ConfigError(f"throttle must be in 0..1000, got {value}", param="pilot")
                sticks.append(float(value))
            elif kind == "climb":
                sticks.append(climb_to_stick(float(value), p))
            else:
                raise ConfigError(f"unknown pilot input kind {kind!r} (throttle, climb)")
            times.append(float(t))
        if any(b < a for a, b in zip(times, times[1:], strict=False)):
            raise ConfigError("pilot script times must be ascending", param="pilot")
        return cls(tuple(times), tuple(sticks))

    def sample(self, t: np.ndarray) -> np.ndarray:
        """Stick value at times ``t`` (s), shape of ``t``."""
        t = np.asarray(t, dtype=float)
        if not self.times:
            return np.full(t.shape, 500.0)
        idx = np.searchsorted(np.asarray(self.times), t + 1e-9, side="right") - 1
        vals = np.concatenate([[500.0], np.asarray(self.sticks)])
        return vals[idx + 1]


def parse_pilot_script(
    text: str, *, file: str | Path | None = None, stick: PilotStick | None = None
) -> PilotScript:
    """Parse a pilot script: one ``TIME KIND VALUE`` per line (``#`` comments, commas ok).

    ``KIND`` is ``throttle`` (stick 0…1000) or ``climb`` (cm/s, converted to the stick value).
    Example::

        # full climb at 2 m/s for 8 s, then stick centred
        2.0  climb  200
        10.0 climb  0

    Raises
    ------
    ConfigError
        Naming ``file:line`` for a malformed line.
    """
    steps: list[tuple[float, str, float]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 3:
            raise ConfigError(
                f"expected 'TIME KIND VALUE', got {raw.strip()!r}", file=file, line=lineno
            )
        try:
            t, value = float(parts[0]), float(parts[2])
        except ValueError:
            raise ConfigError(f"not a number in {raw.strip()!r}", file=file, line=lineno) from None
        if not (math.isfinite(t) and math.isfinite(value)) or t < 0:
            raise ConfigError(f"bad time or value in {raw.strip()!r}", file=file, line=lineno)
        kind = parts[1].lower()
        if kind not in ("throttle", "climb"):
            raise ConfigError(
                f"unknown kind {parts[1]!r} (throttle, climb)", file=file, line=lineno
            )
        if steps and t < steps[-1][0]:
            raise ConfigError("times must be ascending", file=file, line=lineno)
        try:
            PilotScript.from_steps([(t, kind, value)], stick)
        except ConfigError as exc:
            raise ConfigError(exc.message, file=file, line=lineno) from None
        steps.append((t, kind, value))
    return PilotScript.from_steps(steps, stick)


def read_pilot_script(path: str | Path, *, stick: PilotStick | None = None) -> PilotScript:
    """Read a pilot script file (see :func:`parse_pilot_script`); checks path and encoding."""
    from marinesim.core.textio import read_input_text

    p = Path(path)
    return parse_pilot_script(read_input_text(p, what="pilot script"), file=p, stick=stick)
