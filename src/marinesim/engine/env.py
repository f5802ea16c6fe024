"""Environment given to plugins as ``ctx.env`` (water, current), built by the scenario layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Environment"]


@dataclass(frozen=True)
class Environment:
    """Vectorised environment queries.

    Attributes
    ----------
    density : float
        Water density [kg/m³].
    gravity : float
        Gravitational acceleration [m/s²].
    current_north, current_east : float
        Uniform current [m/s] (the direction the water flows towards).
    current_field : object or None
        A field with ``force(x_east, y_north) -> (xdot_east, ydot_north)`` over (N,) arrays
        (:class:`marinesim.environment.current.CurrentField`), added to the uniform current.
    current_source : str
        Where the field came from (file path), for the manifest and figures.
    origin : (float, float) or None
        Datum (latitude, longitude) [deg] of the local frame (the scenario's ``origin``).
    terrain : float, object or None
        Seafloor: a flat depth [m, positive down], or an object with
        ``depth_at(north, east) -> (N,)`` (:class:`marinesim.environment.terrain.Bathymetry`);
        None = no terrain known (``seafloor_depth`` raises).
    terrain_source : str
        Where the terrain came from (``flat`` or the file path), for the manifest.
    """

    density: float = 1025.0
    gravity: float = 9.81
    current_north: float = 0.0
    current_east: float = 0.0
    current_field: Any = None
    current_source: str = ""
    origin: tuple[float, float] | None = None
    terrain: Any = None
    terrain_source: str = ""

    @property
    def has_terrain(self) -> bool:
        """True when :meth:`seafloor_depth` is available."""
        return self.terrain is not None

    def seafloor_depth(
        self, north: NDArray[np.float64], east: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Seafloor depth under positions.

        Parameters
        ----------
        north, east : ndarray, shape (N,)
            Positions [m].

        Returns
        -------
        ndarray, shape (N,)
            Seafloor depth [m, positive down].

        Raises
        ------
        ConfigError
            When the scenario has no ``environment.terrain``.
        """
        n = np.asarray(north, dtype=float)
        if self.terrain is None:
            from marinesim.core.errors import ConfigError

            raise ConfigError(
                "the environment has no terrain; add environment.terrain "
                "({model: flat, depth: ...} or {model: grid, file: ...})",
                param="environment.terrain",
            )
        if isinstance(self.terrain, (int, float)):
            return np.full(n.shape, float(self.terrain))
        return np.asarray(self.terrain.depth_at(n, np.asarray(east, dtype=float)), dtype=float)

    def current(self, north: NDArray[np.float64], east: NDArray[np.float64]) -> NDArray[np.float64]:
        """Current velocity at positions.

        Parameters
        ----------
        north, east : ndarray, shape (N,)
            Positions [m].

        Returns
        -------
        ndarray, shape (N, 2)
            (north, east) water velocity [m/s].
        """
        n = np.asarray(north, dtype=float)
        e = np.asarray(east, dtype=float)
        out = np.empty((n.shape[0], 2))
        out[:, 0] = self.current_north
        out[:, 1] = self.current_east
        if self.current_field is not None:
            fx, fy = self.current_field.force(e, n)
            out[:, 0] += np.asarray(fy, dtype=float)
            out[:, 1] += np.asarray(fx, dtype=float)
        return out
