"""The generic sensor chain: truth → corruptor → delay → update interval → dropout → buffer.

Engine spec §6.1.  Batched over N vehicles; randomness comes from per-entity
:class:`~marinesim.core.rng.BlockRNG` streams with **fixed consumption** (each sample draws one
normal per channel and one uniform for the dropout, used or not), so entity i's values depend
only on its own stream.

* :class:`DelayLine` — ring buffer of past truth at tick times; the value delivered at t
  describes t − delay (linear interpolation between ticks; before the first sample the first
  sample is held).
* :class:`SensorChain` — one sensor: push truth every tick, :meth:`SensorChain.sample` on due
  ticks returns (values, delivered mask, t_stamp) and keeps the last ``buffer_size`` samples.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.core.rng import BlockRNG
from marinesim.sensors.noise import corrupt, limit_with_substitutes, quantise

__all__ = ["ChainParams", "DelayLine", "SensorChain", "delay_position"]


def delay_position(count: int, size: int, back: float) -> tuple[int, float, bool]:
    """Where a :class:`DelayLine` read ``back`` ticks before the newest one falls (pure).

    Parameters
    ----------
    count : int
        Ticks pushed so far (> 0).
    size : int
        Ring-buffer length (ticks).
    back : float
        Delay in ticks (delay / dt).

    Returns
    -------
    (i0, frac, interp)
        Tick index of the earlier sample (use ``i0 % size``), the fraction (0…1) towards the
        next tick, and whether to interpolate (False: take sample ``i0`` as is).
    """
    newest = count - 1
    oldest = max(0, count - size)
    pos = max(newest - back, float(oldest))
    i0 = int(math.floor(pos + 1e-9))
    frac = pos - i0
    return i0, frac, not (frac < 1e-9 or i0 + 1 > newest)


class DelayLine:
    """Past values (N, k) at ticks of period ``dt``; read at any delay up to ``max_delay``.

    Parameters
    ----------
    n, k : int
        Vehicles and channels.
    dt : float
        Tick period (s).
    max_delay : float
        Longest delay that will be read (s); the buffer holds max_delay/dt + 2 ticks.
    """

    def __init__(self, n: int, k: int, dt: float, max_delay: float) -> None:
        if dt <= 0 or max_delay < 0:
            raise ConfigError("delay line needs dt > 0 and max_delay >= 0", param="delay")
        self.dt = float(dt)
        self.size = int(np.ceil(max_delay / dt)) + 2
        self.buf = np.zeros((self.size, n, k))
        self.count = 0  # ticks pushed; the newest is tick count-1

    def push(self, value: np.ndarray | float) -> None:
        """Store the value of the next tick: (N, k), (N,) for k = 1, or a float (broadcast)."""
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value[:, None]
        self.buf[self.count % self.size] = value
        self.count += 1

    def read(self, delay: float) -> np.ndarray:
        """Value (N, k) at (newest tick time − delay), linearly interpolated."""
        if self.count == 0:
            raise ConfigError("delay line read before any value was pushed")
        back = delay / self.dt
        if back > self.size - 2 + 1e-9:
            raise ConfigError(f"delay {delay} s exceeds the buffer", param="delay")
        i0, frac, interp = delay_position(self.count, self.size, back)
        v0 = self.buf[i0 % self.size]
        if not interp:
            return v0.copy()
        v1 = self.buf[(i0 + 1) % self.size]
        return v0 + (v1 - v0) * frac


class ChainParams(ParamsBase):
    """Parameters of one sensor chain (noise levels have no defaults except 0 = off)."""

    rate_hz: float = field(..., unit="Hz", description="update rate", gt=0)
    delay: float = field(0.0, unit="s", description="measurement describes t - delay", ge=0)
    noise_std: float = field(0.0, unit="unit", description="white noise sigma", ge=0)
    bias: float = field(0.0, unit="unit", description="constant bias")
    scale: float = field(1.0, description="scale factor")
    quantum: float = field(0.0, unit="unit", description="quantisation step (0 = off)", ge=0)
    min_value: float | None = field(None, unit="unit", description="lower limit")
    max_value: float | None = field(None, unit="unit", description="upper limit")
    below_substitute: float | None = field(None, unit="unit", description="value sent below min")
    above_substitute: float | None = field(None, unit="unit", description="value sent above max")
    dropout_probability: float = field(0.0, description="probability a sample is lost", ge=0, le=1)
    buffer_size: int = field(1, description="samples kept", ge=1)


class SensorChain:
    """One sensor's chain for N vehicles and k channels.

    Parameters
    ----------
    params : ChainParams
    n, k : int
        Vehicles and channels.
    dt : float
        Engine tick (s); the sensor period must be an integer multiple of it.
    rng : BlockRNG
        Per-entity streams (N rows).
    offset_ticks : int
        Ticks offset of the schedule.
    """

    def __init__(
        self, params: ChainParams, n: int, k: int, dt: float, rng: BlockRNG, offset_ticks: int = 0
    ) -> None:
        m = 1.0 / (params.rate_hz * dt)
        if abs(m - round(m)) > 1e-9 or round(m) < 1:
            raise ConfigError(
                f"sensor period 1/{params.rate_hz} Hz is not a multiple of dt = {dt} s",
                param="rate_hz",
            )
        if rng.n != n:
            raise ConfigError(f"rng has {rng.n} rows for {n} vehicles")
        self.p = params
        self.n, self.k, self.dt = n, k, dt
        self.every = int(round(m))
        self.offset = int(offset_ticks)
        self.rng = rng
        self.line = DelayLine(n, k, dt, params.delay)
        self.buffer: deque[tuple[float, np.ndarray, np.ndarray]] = deque(maxlen=params.buffer_size)
        self.last_below = np.zeros((n, k), dtype=bool)
        self.last_above = np.zeros((n, k), dtype=bool)

    def due(self, tick: int) -> bool:
        """True on ticks where the sensor publishes."""
        return (tick - self.offset) % self.every == 0

    def push(self, truth: np.ndarray) -> None:
        """Record the truth (N, k) of the newest tick."""
        self.line.push(np.asarray(truth, float).reshape(self.n, self.k))

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Produce a sample at time ``t`` (s) from the newest pushed tick.

        Returns
        -------
        values : ndarray (N, k)
            Corrupted, limited, quantised readings.
        delivered : ndarray (N,) of bool
            False where the sample was dropped.
        t_stamp : float
            Time the data describes (t − delay).
        """
        p = self.p
        truth = self.line.read(p.delay)
        normal = self.rng.normal(size=self.k)  # (N, k), always drawn
        u = self.rng.uniform(size=1)[:, 0]  # (N,), always drawn
        x = corrupt(truth, normal, p.noise_std, p.bias, p.scale)
        lo = -np.inf if p.min_value is None else p.min_value
        hi = np.inf if p.max_value is None else p.max_value
        x, self.last_below, self.last_above = limit_with_substitutes(
            x, lo, hi, p.below_substitute, p.above_substitute
        )
        x = quantise(x, p.quantum)
        delivered = u >= p.dropout_probability
        t_stamp = t - p.delay
        self.buffer.append((t_stamp, x, delivered))
        return x, delivered, t_stamp
