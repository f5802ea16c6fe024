"""Down-facing rangefinder as the ardusub_surftrak SITL harness injects it (SURFTRAK spec §11).

One DISTANCE_SENSOR message per terrain row, every ``interval`` seconds.  For the reading sent
at t_j: z_d = the vehicle's z at t_j − delay (from a :class:`~marinesim.sensors.pipeline.
DelayLine`), then by row value:

* 1.0 (dropout) → nothing is sent (logged rf_cm = −1, signal_quality = −1);
* 2.0 (low signal quality) → 555 cm with signal_quality 10;
* otherwise rf = z_d − terrain + N(0, σ) with signal_quality 100; rf < 0.35 m → 8.888 m at
  quality 50; rf > 50 m → 50 m at quality 60; sent as int(rf·100) cm (truncation).

One normal is drawn per row and vehicle, also for sentinel rows (fixed consumption).
Batched over N vehicles (arrays of shape (N,)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from marinesim.core.params import ParamsBase, field
from marinesim.core.rng import BlockRNG
from marinesim.sensors.pipeline import ChainParams, SensorChain

__all__ = [
    "DownRangefinder",
    "DownRangefinderParams",
    "RangefinderParams",
    "RangefinderReading",
    "inject",
    "inject_values",
    "pick",
]


class RangefinderParams(ParamsBase):
    """Harness rangefinder parameters (defaults: ardusub_surftrak's ``sitl_runner.py``)."""

    delay: float = field(0.3, unit="s", description="reading describes t - delay", ge=0, le=10)
    noise_std: float = field(0.05, unit="m", description="Gaussian noise sigma", ge=0)
    low_cut: float = field(0.35, unit="m", description="below: send the below-min substitute")
    high_cut: float = field(50.0, unit="m", description="above: send the above-max substitute")
    below_substitute: float = field(8.888, unit="m", description="value sent below low_cut")
    below_quality: int = field(50, unit="%", description="quality sent below low_cut")
    above_substitute: float = field(50.0, unit="m", description="value sent above high_cut")
    above_quality: int = field(60, unit="%", description="quality sent above high_cut")
    low_sq_cm: float = field(555.0, unit="cm", description="distance sent for a 2.0 row")
    low_sq_quality: int = field(10, unit="%", description="quality sent for a 2.0 row")
    msg_min_cm: float = field(50.0, unit="cm", description="DISTANCE_SENSOR.min_distance", ge=0)
    msg_max_cm: float = field(5000.0, unit="cm", description="DISTANCE_SENSOR.max_distance", ge=0)
    geometry_source: str = field("truth", description="truth | belief (z used for geometry)")

    @property
    def coefficients(self) -> tuple[float, ...]:
        """``(noise_std, low_cut, high_cut, below_substitute, below_quality, above_substitute,
        above_quality, low_sq_cm, low_sq_quality)`` for :func:`inject_values`."""
        return (
            self.noise_std, self.low_cut, self.high_cut, self.below_substitute,
            float(self.below_quality), self.above_substitute, float(self.above_quality),
            self.low_sq_cm, float(self.low_sq_quality),
        )  # fmt: skip


@dataclass(frozen=True)
class RangefinderReading:
    """One injection for N vehicles (arrays of shape (N,)).

    ``sent`` (bool), ``distance_cm`` (int-valued float; −1 where not sent), ``quality``
    (%, −1 where not sent), ``z_d`` (m, geometry z), ``row`` (terrain row value, m).
    """

    sent: np.ndarray
    distance_cm: np.ndarray
    quality: np.ndarray
    z_d: np.ndarray
    row: np.ndarray


def inject(
    params: RangefinderParams, row: np.ndarray, z_d: np.ndarray, normal: np.ndarray
) -> RangefinderReading:
    """Build the DISTANCE_SENSOR content for one terrain row.

    Parameters
    ----------
    params : RangefinderParams
    row : ndarray (N,)
        Terrain row value (m, z up; 1.0 / 2.0 sentinels).
    z_d : ndarray (N,)
        Vehicle z at t − delay (m, up).
    normal : ndarray (N,)
        Standard normal draws (one per vehicle, always consumed).

    Returns
    -------
    RangefinderReading
    """
    row = np.asarray(row, float)
    z_d = np.asarray(z_d, float)
    sent, cm, q = inject_values(row, z_d, np.asarray(normal, float), params.coefficients)
    return RangefinderReading(sent=sent, distance_cm=cm, quality=q, z_d=z_d, row=row)


def pick(cond: np.ndarray, a: object, b: object) -> np.ndarray:
    """``np.where(cond, a, b)`` (exact selection; replaced by a ternary in compiled code)."""
    return np.where(cond, a, b)


def trunc(x: np.ndarray) -> np.ndarray:
    """``np.trunc`` (replaced by a scalar form in compiled code, which a device compiles)."""
    return np.trunc(x)


def inject_values(
    row: np.ndarray, z_d: np.ndarray, normal: np.ndarray, coef: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arithmetic of :func:`inject` (pure).

    Parameters
    ----------
    row, z_d, normal : ndarray (N,) (or floats in compiled code)
        Terrain row value (m), vehicle z at t − delay (m), standard normal draws.
    coef : tuple
        :attr:`RangefinderParams.coefficients`.

    Returns
    -------
    (sent, distance_cm, quality)
        Sent flag, distance (cm, −1 where not sent), quality (%, −1 where not sent).
    """
    noise_std, low_cut, high_cut, below_sub, below_q, above_sub, above_q, lsq_cm, lsq_q = coef
    dropout = row == 1.0
    low_sq = row == 2.0
    rf = z_d - row + noise_std * normal
    below = rf < low_cut
    above = rf > high_cut
    rf = pick(below, below_sub, pick(above, above_sub, rf))
    q = pick(below, below_q, pick(above, above_q, 100.0))
    cm = trunc(rf * 100.0)
    cm = pick(low_sq, lsq_cm, cm)
    q = pick(low_sq, lsq_q, q)
    cm = pick(dropout, -1.0, cm)
    q = pick(dropout, -1.0, q)
    return dropout ^ True, cm, q


class DownRangefinderParams(ParamsBase):
    """A generic down-facing rangefinder on the sensor chain (for bathymetry runs).

    Noise has no default (engine spec §6.1); the substitutes default to the harness's.
    """

    rate_hz: float = field(10.0, unit="Hz", description="message rate", gt=0)
    delay: float = field(0.0, unit="s", description="reading describes t - delay", ge=0)
    noise_std: float = field(..., unit="m", description="Gaussian noise sigma", ge=0)
    min_range: float = field(0.35, unit="m", description="below: substitute", ge=0)
    max_range: float = field(50.0, unit="m", description="above: substitute", gt=0)
    below_substitute: float = field(8.888, unit="m", description="value sent below min_range")
    above_substitute: float = field(50.0, unit="m", description="value sent above max_range")
    below_quality: int = field(50, unit="%", description="quality sent below min_range")
    above_quality: int = field(60, unit="%", description="quality sent above max_range")
    dropout_probability: float = field(0.0, description="probability a message is lost", ge=0, le=1)


class DownRangefinder:
    """Down-facing rangefinder = :class:`~marinesim.sensors.pipeline.SensorChain` on altitude.

    Truth is the altitude above the seafloor (m), e.g. from
    :meth:`marinesim.environment.terrain.Bathymetry.altitude`; messages carry ``int(d·100)``
    cm and a signal quality (100, or the substitutes' qualities), like DISTANCE_SENSOR.

    Parameters
    ----------
    params : DownRangefinderParams
    n : int
        Vehicles.
    dt : float
        Tick (s); 1/rate must be a multiple.
    rng : BlockRNG
        Per-entity streams (N rows).
    """

    def __init__(self, params: DownRangefinderParams, n: int, dt: float, rng: BlockRNG) -> None:
        self.p = params
        chain = ChainParams(
            rate_hz=params.rate_hz,
            delay=params.delay,
            noise_std=params.noise_std,
            min_value=params.min_range,
            max_value=params.max_range,
            below_substitute=params.below_substitute,
            above_substitute=params.above_substitute,
            dropout_probability=params.dropout_probability,
        )
        self.chain = SensorChain(chain, n, 1, dt, rng)

    def due(self, tick: int) -> bool:
        """True on message ticks."""
        return self.chain.due(tick)

    def push(self, altitude: np.ndarray) -> None:
        """Record the true altitude (N,) of the newest tick (m)."""
        self.chain.push(np.asarray(altitude, float).reshape(-1, 1))

    def sample(self, t: float) -> RangefinderReading:
        """A reading at time ``t`` (s): ``distance_cm`` −1 and quality −1 where dropped."""
        x, delivered, _ = self.chain.sample(t)
        d = x[:, 0]
        q = np.where(
            self.chain.last_below[:, 0],
            self.p.below_quality,
            np.where(self.chain.last_above[:, 0], self.p.above_quality, 100.0),
        )
        cm = np.where(delivered, np.trunc(d * 100.0), -1.0)
        q = np.where(delivered, q, -1.0)
        return RangefinderReading(sent=delivered, distance_cm=cm, quality=q, z_d=d, row=d * np.nan)
