"""ArduSub's servo outputs → the simulated thrusters (frame, output channels, motor directions).

ArduSub drives motor *n* on the servo channel whose ``SERVOx_FUNCTION`` is 33 + n − 1
(Motor1…Motor8; by default motor n on SERVOn) with PWM = 1500 + 400·dir_n·out_n, where
``dir_n = MOT_n_DIRECTION``.  In the water the reversed propeller undoes the reversal; in the
simulation :class:`ServoMap` undoes it, so the thruster plant receives the PWM of a motor
whose positive output pushes along the layout's direction d_n (``allocation.md`` §8.2).
A pulse of 0 (no output: start-up, disarmed outputs, an unassigned channel) is "thruster
off", never full reverse.

Frames (``FRAME_CONFIG``): 1 = vectored (6 thrusters), 2 = vectored 6-DOF (8 thrusters, the
BlueROV2 Heavy).  Their factor tables are :func:`vectored_factors` and
:func:`marinesim.allocation.vehicles.ardusub_factors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from marinesim.allocation.vehicles import ardusub_factors
from marinesim.core.errors import ConfigError

__all__ = [
    "FRAMES",
    "MOTOR1_FUNCTION",
    "ServoMap",
    "frame_factors",
    "vectored_factors",
]

#: ``SERVOx_FUNCTION`` value of Motor1 (Motor n = 33 + n − 1).
MOTOR1_FUNCTION = 33
#: FRAME_CONFIG → (name, motors).
FRAMES: dict[int, tuple[str, int]] = {1: ("vectored", 6), 2: ("vectored_6dof", 8)}

_VECTORED = np.array(
    [
        [0, 0, 1, 0, -1, 1],
        [0, 0, -1, 0, -1, -1],
        [0, 0, -1, 0, 1, 1],
        [0, 0, 1, 0, 1, -1],
        [1, 0, 0, -1, 0, 0],
        [-1, 0, 0, -1, 0, 0],
    ],
    dtype=float,
)


def vectored_factors() -> NDArray[np.float64]:
    """ArduSub ``SUB_FRAME_VECTORED`` (FRAME_CONFIG 1) factors, shape (6, 6).

    Columns roll, pitch, yaw, throttle (+ = ascend), forward, lateral; rows motors 1–6.
    """
    return _VECTORED.copy()


def frame_factors(frame_config: int) -> NDArray[np.float64]:
    """Factor table of an ArduSub frame (1 vectored, 2 vectored 6-DOF)."""
    if frame_config == 1:
        return vectored_factors()
    if frame_config == 2:
        return ardusub_factors()
    raise ConfigError(
        f"FRAME_CONFIG {frame_config} is not supported (1 vectored, 2 vectored 6-DOF)",
        param="FRAME_CONFIG",
    )


@dataclass(frozen=True)
class ServoMap:
    """Which servo channel drives which motor, and the motor directions.

    Attributes
    ----------
    channels : tuple of int
        0-based servo channel of motor 1, 2, … (−1: the motor has no output channel).
    directions : tuple of float
        ``MOT_n_DIRECTION`` (+1 or −1) per motor.
    """

    channels: tuple[int, ...]
    directions: tuple[float, ...]

    @classmethod
    def default(cls, motors: int) -> ServoMap:
        """Motor n on SERVOn, all directions +1 (ArduSub's defaults)."""
        return cls(tuple(range(motors)), (1.0,) * motors)

    @classmethod
    def from_params(cls, motors: int, params: Mapping[str, float]) -> ServoMap:
        """From ArduSub parameters: ``SERVOx_FUNCTION`` (33… = Motor1…) and ``MOT_n_DIRECTION``.

        A motor whose function no channel carries keeps its default channel unless that
        channel is assigned another function, in which case it has no output (−1).
        """
        funcs: dict[int, int] = {}
        for name, value in params.items():
            if name.startswith("SERVO") and name.endswith("_FUNCTION"):
                mid = name[5:-9]
                if mid.isdigit():
                    funcs[int(mid) - 1] = int(value)
        channels: list[int] = []
        for m in range(motors):
            want = MOTOR1_FUNCTION + m
            chans = sorted(c for c, f in funcs.items() if f == want)
            if chans:
                channels.append(chans[0])
            elif m in funcs and funcs[m] not in (0, want):
                channels.append(-1)
            else:
                channels.append(m)
        dirs = []
        for m in range(motors):
            d = float(params.get(f"MOT_{m + 1}_DIRECTION", 1.0))
            if d not in (1.0, -1.0):
                raise ConfigError(f"must be 1 or -1, got {d:g}", param=f"MOT_{m + 1}_DIRECTION")
            dirs.append(d)
        return cls(tuple(channels), tuple(dirs))

    def on_heavy(self) -> ServoMap:
        """A 6-motor vectored map (FRAME_CONFIG 1) driving an 8-thruster Heavy: each vertical
        output drives both verticals of its side (SERVO of motor 5 → motors 5 and 7, motor 6 →
        6 and 8), which gives the same roll and heave factors as ArduSub's vectored frame."""
        if self.motors != 6:
            raise ConfigError(f"expected a 6-motor map, got {self.motors}", param="FRAME_CONFIG")
        ch = (*self.channels, self.channels[4], self.channels[5])
        d = (*self.directions, self.directions[4], self.directions[5])
        return ServoMap(ch, d)

    @property
    def motors(self) -> int:
        """Number of motors."""
        return len(self.channels)

    def motor_pwm(self, pwm: Sequence[int] | NDArray[np.generic]) -> NDArray[np.float64]:
        """Servo outputs (16 or 32 channels, µs) → per-motor plant PWM [µs], shape (motors,).

        A 0 µs pulse (or a channel beyond the packet) becomes 1500 µs, the ESC's neutral: no
        thrust.  A reversed motor's pulse is mirrored about 1500 µs.
        """
        p = np.asarray(pwm, dtype=float)
        out = np.full(self.motors, 1500.0)
        for m, (c, d) in enumerate(zip(self.channels, self.directions, strict=True)):
            if 0 <= c < p.shape[0] and p[c] > 0:
                out[m] = 1500.0 + d * (p[c] - 1500.0)
        return out
