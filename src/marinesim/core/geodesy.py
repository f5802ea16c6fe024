"""MOOS geodesy: local UTM-grid offsets ↔ latitude/longitude (spec usimmarine.md §3.8).

The real uSimMarine (MOOS-IvP built with ``USE_UTM=ON`` and MOOSGeodesy with PROJ) projects
its local ``(x, y)`` [m] — offsets in the **UTM grid** from the datum — with PROJ's ``utm``
projection (Poder/Engsager extended transverse Mercator) on WGS84:

* zone ⌊(lon₀ + 180)/6⌋ + 1, with the Norway (32V) and Svalbard (31/33/35/37X) exceptions,
  and ``+south`` for a southern datum;
* (E₀, N₀) = forward UTM of the datum; ``(lat, lon)`` = inverse UTM of ``(x + E₀, y + N₀)``;
* degrees ↔ radians with the geodesy's truncated ``PI = 3.14159265``.

So +y is grid north, not true north (at the MIT datum a pure +y run drifts about 2.4 % of its
distance in longitude).  :func:`flat_earth_to_latlon` is the ``USE_UTM=OFF`` formula, kept as
a helper; the program's default build does not use it.

pyproj is imported lazily inside :class:`MoosGeodesy`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError

__all__ = [
    "MOOS_PI",
    "MoosGeodesy",
    "flat_earth_to_latlon",
    "utm_zone",
]

#: The truncated π of MOOSGeodesy's degree/radian conversions.
MOOS_PI = 3.14159265
_DEG2RAD = MOOS_PI / 180.0
_RAD2DEG = 180.0 / MOOS_PI


def utm_zone(lat: float, lon: float) -> int:
    """UTM zone number of a datum, with the Norway and Svalbard exceptions.

    Parameters
    ----------
    lat, lon : float
        Datum latitude and longitude [deg].

    Returns
    -------
    int
        Zone 1–60.
    """
    zone = int(math.floor((lon + 180.0) / 6.0)) + 1
    if 56.0 <= lat < 64.0 and 3.0 <= lon < 12.0:
        zone = 32
    if 72.0 <= lat < 84.0:
        if 0.0 <= lon < 9.0:
            zone = 31
        elif 9.0 <= lon < 21.0:
            zone = 33
        elif 21.0 <= lon < 33.0:
            zone = 35
        elif 33.0 <= lon < 42.0:
            zone = 37
    return zone


class MoosGeodesy:
    """The program's UTM geodesy for one datum, vectorised over points.

    Parameters
    ----------
    lat_origin, lon_origin : float
        Datum [deg].  A latitude outside [−80, 84] or a longitude outside [−180, 180] is
        rejected (the program then has no datum).

    Raises
    ------
    ConfigError
        Datum out of range or not finite.
    """

    def __init__(self, lat_origin: float, lon_origin: float) -> None:
        lat0 = float(lat_origin)
        lon0 = float(lon_origin)
        if not (math.isfinite(lat0) and -80.0 <= lat0 <= 84.0):
            raise ConfigError(f"datum latitude {lat_origin!r} outside [-80, 84]", param="LatOrigin")
        if not (math.isfinite(lon0) and -180.0 <= lon0 <= 180.0):
            raise ConfigError(
                f"datum longitude {lon_origin!r} outside [-180, 180]", param="LongOrigin"
            )
        from pyproj import Proj, Transformer  # lazy: pyproj is heavy

        self.lat_origin = lat0
        self.lon_origin = lon0
        self.zone = utm_zone(lat0, lon0)
        self.south = lat0 < 0
        utm = f"+proj=utm +ellps=WGS84 +zone={self.zone}" + (" +south" if self.south else "")
        self.proj_string = utm
        latlong = Proj("+proj=latlong +ellps=WGS84")
        utm_p = Proj(utm)
        self._fwd: Any = Transformer.from_proj(latlong, utm_p, always_xy=True)
        self._inv: Any = Transformer.from_proj(utm_p, latlong, always_xy=True)
        e0, n0 = self._fwd.transform(lon0 * _DEG2RAD, lat0 * _DEG2RAD, radians=True)
        self.origin_easting = float(e0)
        self.origin_northing = float(n0)

    def local_to_latlon(
        self, x: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Project local grid offsets to latitude/longitude (``UTM2LatLong``).

        Parameters
        ----------
        x, y : array_like
            Local offsets [m] east and north in the UTM grid, same shape.

        Returns
        -------
        (lat, lon) : tuple of ndarray
            Degrees, same shape as the inputs.
        """
        xa = np.asarray(x, dtype=np.float64) + self.origin_easting
        ya = np.asarray(y, dtype=np.float64) + self.origin_northing
        lon_r, lat_r = self._inv.transform(xa, ya, radians=True)
        lat = np.asarray(lat_r, dtype=np.float64) * _RAD2DEG
        lon = np.asarray(lon_r, dtype=np.float64) * _RAD2DEG
        return lat, lon

    def local_to_latlon_1(self, x: float, y: float) -> tuple[float, float]:
        """:meth:`local_to_latlon` of one point, without arrays (the same PROJ operation
        and the same bits, ``tests/core/test_geodesy_scalar.py``; about 2 µs instead of 14).
        """
        lon_r, lat_r = self._inv.transform(
            float(x) + self.origin_easting, float(y) + self.origin_northing, radians=True
        )
        return float(lat_r) * _RAD2DEG, float(lon_r) * _RAD2DEG

    def latlon_to_local(
        self, lat: ArrayLike, lon: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Inverse of :meth:`local_to_latlon` (``LatLong2LocalUTM``).

        Parameters
        ----------
        lat, lon : array_like
            Degrees, same shape.

        Returns
        -------
        (x, y) : tuple of ndarray
            Local UTM-grid offsets [m] from the datum.
        """
        la = np.asarray(lat, dtype=np.float64) * _DEG2RAD
        lo = np.asarray(lon, dtype=np.float64) * _DEG2RAD
        e, n = self._fwd.transform(lo, la, radians=True)
        return (
            np.asarray(e, dtype=np.float64) - self.origin_easting,
            np.asarray(n, dtype=np.float64) - self.origin_northing,
        )

    def __repr__(self) -> str:
        return f"MoosGeodesy({self.lat_origin!r}, {self.lon_origin!r}; {self.proj_string})"


def flat_earth_to_latlon(
    x: ArrayLike, y: ArrayLike, lat_origin: float, lon_origin: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """MOOSGeodesy ``LocalGrid2LatLong`` (the ``USE_UTM=OFF`` build; not the default).

    Parameters
    ----------
    x, y : array_like
        Local east/north offsets [m].
    lat_origin, lon_origin : float
        Datum [deg].

    Returns
    -------
    (lat, lon) : tuple of ndarray
        Degrees.
    """
    a = 6378137.0
    b = 6356752.0
    tan2 = math.tan(lat_origin * _DEG2RAD) ** 2
    radius = b * math.sqrt(1 + tan2) / math.sqrt((b**2) / (a**2) + tan2)
    ya = np.arcsin(np.asarray(y, dtype=np.float64) / radius) * _RAD2DEG
    xa = (
        np.arcsin(np.asarray(x, dtype=np.float64) / (radius * math.cos(lat_origin * _DEG2RAD)))
        * _RAD2DEG
    )
    return ya + lat_origin, xa + lon_origin
