"""Unit constants and conversions (SI inside marinesim)."""

from __future__ import annotations

import math

__all__ = ["DEG", "G0", "KNOT", "RHO_SEAWATER", "deg2rad", "rad2deg"]

DEG = math.pi / 180.0  #: one degree in radians
KNOT = 1852.0 / 3600.0  #: one knot in m/s
G0 = 9.81  #: default gravity [m/s²]
RHO_SEAWATER = 1025.0  #: default sea-water density [kg/m³]


def deg2rad(deg: float) -> float:
    """Degrees → radians."""
    return deg * DEG


def rad2deg(rad: float) -> float:
    """Radians → degrees."""
    return rad / DEG
