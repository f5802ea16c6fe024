"""Corruptors of the sensor chain (engine spec §6.1): noise, bias, scale, quantisation, limits.

Every function is pure and batched over a leading vehicle axis N; random values are passed in
(drawn by the caller from per-entity :class:`~marinesim.core.rng.BlockRNG` streams), so the
consumption of random numbers never depends on outcomes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bias_random_walk", "corrupt", "limit_with_substitutes", "quantise"]


def corrupt(
    truth: np.ndarray,
    normal: np.ndarray,
    sigma: float | np.ndarray = 0.0,
    bias: float | np.ndarray = 0.0,
    scale: float | np.ndarray = 1.0,
) -> np.ndarray:
    """``scale·truth + bias + sigma·normal`` (units of ``truth``), shape (N, ...)."""
    return np.asarray(truth) * scale + bias + np.asarray(normal) * sigma


def bias_random_walk(
    bias: np.ndarray, normal: np.ndarray, sigma_per_sqrt_s: float, dt: float
) -> np.ndarray:
    """Advance a random-walk bias by ``dt`` s: b + σ·√dt·n (σ in units per √s)."""
    return np.asarray(bias) + sigma_per_sqrt_s * np.sqrt(dt) * np.asarray(normal)


def quantise(x: np.ndarray, step: float) -> np.ndarray:
    """Truncate towards zero to a multiple of ``step`` (0 = off)."""
    if step <= 0:
        return np.asarray(x, dtype=float)
    return np.trunc(np.asarray(x) / step) * step


def limit_with_substitutes(
    x: np.ndarray,
    lo: float,
    hi: float,
    below: float | None = None,
    above: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replace readings outside [lo, hi] by substitute values.

    Parameters
    ----------
    x : ndarray (N,)
        Readings.
    lo, hi : float
        Valid range.
    below, above : float, optional
        Substitute for x < lo / x > hi (None: clamp to the limit).

    Returns
    -------
    (values, is_below, is_above)
        Substituted readings and the masks.
    """
    x = np.asarray(x, dtype=float)
    is_below = x < lo
    is_above = x > hi
    out = np.where(is_below, lo if below is None else below, x)
    out = np.where(is_above, hi if above is None else above, out)
    return out, is_below, is_above
