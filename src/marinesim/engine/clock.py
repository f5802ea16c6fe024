"""Simulation clock: integer tick count, fixed dt, physics substeps, time warp (engine spec §4.1, §4.6)."""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field

from marinesim.core.errors import ConfigError

__all__ = ["Clock", "period_ticks"]


def period_ticks(rate_hz: float | None, dt: float, *, name: str = "plugin") -> int:
    """Number of ticks m between runs of a plugin with ``rate_hz`` (engine spec §3.3).

    Parameters
    ----------
    rate_hz : float or None
        Update rate [Hz]; None = every tick.
    dt : float
        Control tick [s].
    name : str
        Plugin name for the error message.

    Returns
    -------
    int
        m ≥ 1 with |1/(rate_hz·dt) − m| < 1e−9.

    Raises
    ------
    ConfigError
        If the period is not an integer multiple of dt; the message names the nearest valid rates.
    """
    if rate_hz is None:
        return 1
    if not (rate_hz > 0 and math.isfinite(rate_hz)):
        raise ConfigError(
            f"rate_hz must be a positive finite number, got {rate_hz!r}", param=f"{name}.rate_hz"
        )
    ratio = 1.0 / (rate_hz * dt)
    m = round(ratio)
    if m >= 1 and abs(ratio - m) < 1e-9:
        return int(m)
    lo = max(1, math.floor(ratio))
    hi = max(1, math.ceil(ratio))
    options = sorted({1.0 / (lo * dt), 1.0 / (hi * dt)}, reverse=True)
    opts = " or ".join(f"{r:.6g} Hz" for r in options)
    raise ConfigError(
        f"rate {rate_hz:g} Hz is not a whole number of ticks of dt = {dt:g} s "
        f"(period/dt = {ratio:.6g}); nearest valid rates: {opts}",
        param=f"{name}.rate_hz",
    )


@dataclass
class Clock:
    """Fixed-step clock; time is ``start + k·dt`` (never accumulated by addition).

    Parameters
    ----------
    dt : float
        Control tick [s], > 0.
    substeps : int
        Physics steps per tick (h = dt / substeps), ≥ 1.
    start : float
        Time of tick 0 [s].
    end : float or None
        End time [s] (the ``time`` end condition), None = no time limit.
    time_warp : float
        0 = as fast as possible; w > 0 = sim time runs at w × wall time (best effort).
    """

    dt: float
    substeps: int = 1
    start: float = 0.0
    end: float | None = None
    time_warp: float = 0.0
    k: int = 0
    _wall0: float | None = field(default=None, repr=False)
    _k0: int = field(default=0, repr=False)
    lag_max: float = 0.0
    lag_ticks: int = 0

    def __post_init__(self) -> None:
        if not (self.dt > 0 and math.isfinite(self.dt)):
            raise ConfigError(
                f"dt must be a positive finite number of seconds, got {self.dt!r}", param="time.dt"
            )
        if int(self.substeps) != self.substeps or self.substeps < 1:
            raise ConfigError(
                f"substeps must be an integer >= 1, got {self.substeps!r}", param="time.substeps"
            )
        if self.end is not None and not self.end > self.start:
            raise ConfigError(
                f"end ({self.end}) must be after start ({self.start})", param="time.end"
            )
        if not (self.time_warp >= 0 and math.isfinite(self.time_warp)):
            raise ConfigError(
                f"time_warp must be >= 0 (0 = as fast as possible), got {self.time_warp!r}",
                param="time.time_warp",
            )

    @property
    def h(self) -> float:
        """Physics substep [s]."""
        return self.dt / self.substeps

    @property
    def t(self) -> float:
        """Current time t_k [s]."""
        return self.time_of(self.k)

    def time_of(self, k: int) -> float:
        """Time of tick ``k`` [s]: start + k·dt."""
        return self.start + k * self.dt

    @property
    def n_ticks(self) -> int | None:
        """Number of ticks to reach ``end`` (None without an end time)."""
        if self.end is None:
            return None
        return max(0, math.ceil((self.end - self.start) / self.dt - 1e-9))

    def due(self, period: int, offset: int, k: int | None = None) -> bool:
        """True when a plugin with ``period`` ticks and ``offset`` runs at tick ``k``."""
        kk = self.k if k is None else k
        return kk >= offset and (kk - offset) % period == 0

    def pace_reset(self) -> None:
        """Restart the wall-clock reference (at the start of run() or after resume)."""
        self._wall0 = None

    def pace(self) -> None:
        """Sleep so that sim time runs at ``time_warp`` × wall time; record lag when behind."""
        if self.time_warp <= 0:
            return
        now = _time.perf_counter()
        if self._wall0 is None:
            self._wall0 = now
            self._k0 = self.k
            return
        target = self._wall0 + (self.k - self._k0) * self.dt / self.time_warp
        ahead = target - now
        if ahead > 0:
            _time.sleep(ahead)
        elif ahead < 0:
            self.lag_ticks += 1
            self.lag_max = max(self.lag_max, -ahead)
