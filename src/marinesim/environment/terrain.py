"""Seafloor: SURFTRAK terrain profiles and gridded bathymetry (SURFTRAK spec §12).

* :class:`TerrainProfile` — the ardusub_surftrak profile files (line 1: message interval in s;
  then one seafloor z per line, m, z up, 0 = surface; sentinels 1.0 = dropout, 2.0 = low signal
  quality).  Parsed from text (this layer reads no user files); the six shipped profiles come
  from package data (:func:`builtin_profile`).  Replayed in a loop along time, or laid along the
  track distance.
* :class:`Bathymetry` — a regular grid (x north, y east, m) of seafloor depth (m, positive
  down) with bilinear lookup, for 2-D runs; altitude = seafloor depth − vehicle depth.
  :func:`parse_bathymetry` reads the grid CSV text; :func:`profile_along_track` samples the grid
  under a straight constant-speed track into a profile that the SURFTRAK harness replays
  (the seafloor under the vehicle at each reading's time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from marinesim.core.errors import ConfigError, DataError, UnknownNameError
from marinesim.core.limits import (
    MAX_ABS_COORDINATE,
    MAX_SAMPLES,
    MAX_SEAFLOOR_DEPTH,
    MIN_TERRAIN_INTERVAL,
)
from marinesim.core.textio import read_input_text

__all__ = [
    "BUILTIN_PROFILES",
    "DROPOUT",
    "LOW_SQ",
    "Bathymetry",
    "TerrainProfile",
    "builtin_profile",
    "builtin_profile_text",
    "parse_bathymetry",
    "parse_profile",
    "profile_along_track",
    "read_bathymetry",
    "read_profile",
]

#: Names of the profiles shipped with the package.
BUILTIN_PROFILES = ("zeros", "trapezoid", "sawtooth", "square", "stress", "test_signal_quality")
#: Sentinel row values.
DROPOUT = 1.0
LOW_SQ = 2.0


@dataclass(frozen=True)
class TerrainProfile:
    """A terrain profile: ``interval`` (s) and ``rows`` (m, z up, with sentinels).

    Attributes
    ----------
    name : str
        Profile name (file stem).
    interval : float
        Time between rangefinder messages (s); also the row spacing in time.
    rows : ndarray (R,)
        Row values as in the file.
    heights : ndarray (R,)
        Rows with sentinels replaced by the previous real height (cyclically, since the
        profile is replayed in a loop; leading sentinels take the last real height of the file).
    """

    name: str
    interval: float
    rows: np.ndarray
    heights: np.ndarray

    @property
    def period(self) -> float:
        """Duration of one pass (s)."""
        return self.interval * len(self.rows)

    def row_index(self, j: np.ndarray | int) -> np.ndarray:
        """Row used by message j (0-based), with the loop: j mod R."""
        return np.asarray(j) % len(self.rows)

    def height_at(self, tau: np.ndarray | float, start: float = 0.0) -> np.ndarray:
        """True seafloor z (m, up) at time ``tau`` (s); row j covers [start + j·Δ, +Δ)."""
        j = np.floor((np.asarray(tau, dtype=float) - start) / self.interval + 1e-9).astype(int)
        j = np.maximum(j, 0)
        return self.heights[j % len(self.rows)]

    def height_along_track(self, s: np.ndarray | float, spacing: float) -> np.ndarray:
        """Seafloor z (m) at track distance ``s`` (m) with rows laid ``spacing`` m apart."""
        if spacing <= 0:
            raise ConfigError("terrain row spacing must be > 0", param="spacing")
        j = np.floor(np.asarray(s, dtype=float) / spacing + 1e-9).astype(int)
        return self.heights[np.maximum(j, 0) % len(self.rows)]


def parse_profile(
    text: str, *, name: str = "terrain", file: str | Path | None = None
) -> TerrainProfile:
    """Parse a profile file's text.

    Parameters
    ----------
    text : str
        File contents.
    name : str
        Profile name.
    file : str or Path, optional
        For error messages.

    Raises
    ------
    DataError
        ``file:line`` for non-numeric text, a non-positive interval, a positive value other
        than the sentinels 1.0 / 2.0, or a file with no height row.
    """
    values: list[float] = []
    interval = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        try:
            v = float(s)
        except ValueError:
            raise DataError(f"not a number: {s!r}", file=file, line=lineno) from None
        if not math.isfinite(v):
            raise DataError(f"not a finite number: {s!r}", file=file, line=lineno)
        if interval is None:
            if v < MIN_TERRAIN_INTERVAL:
                raise DataError(
                    f"line 1 must be the message interval in s (>= {MIN_TERRAIN_INTERVAL:g}), "
                    f"got {v:g}",
                    file=file,
                    line=lineno,
                    param="interval",
                )
            interval = v
            continue
        if v < -MAX_SEAFLOOR_DEPTH:
            raise DataError(
                f"seafloor height {v:g} m is deeper than {MAX_SEAFLOOR_DEPTH:g} m",
                file=file,
                line=lineno,
            )
        if len(values) >= MAX_SAMPLES:
            raise DataError(f"more than {MAX_SAMPLES} rows (MAX_SAMPLES)", file=file, line=lineno)
        if v > 0 and v not in (DROPOUT, LOW_SQ):
            raise DataError(
                f"positive seafloor height {v} (only the sentinels 1.0 = dropout and 2.0 = low "
                "signal quality may be positive; z is up, 0 = surface)",
                file=file,
                line=lineno,
            )
        values.append(v)
    if interval is None or not values:
        raise DataError(
            "terrain file needs an interval line and at least one row", file=file, line=1
        )
    rows = np.asarray(values)
    real = rows <= 0
    if not real.any():
        raise DataError("terrain file has no real height (only sentinels)", file=file, line=2)
    heights = rows.copy()
    last = rows[real][-1]
    for i in range(len(rows)):  # once per file, not a hot path
        if real[i]:
            last = rows[i]
        else:
            heights[i] = last
    return TerrainProfile(name=name, interval=interval, rows=rows, heights=heights)


def builtin_profile_text(name: str) -> str:
    """Text of a shipped profile (package data)."""
    if name not in BUILTIN_PROFILES:
        raise UnknownNameError("terrain profile", name, BUILTIN_PROFILES)
    ref = resources.files("marinesim.environment").joinpath("data", "surftrak", f"{name}.csv")
    return ref.read_text(encoding="utf-8")


def builtin_profile(name: str) -> TerrainProfile:
    """One of the six shipped profiles (MIT, ardusub_surftrak; licence in the package data)."""
    return parse_profile(builtin_profile_text(name), name=name, file=f"<builtin>/{name}.csv")


@dataclass(frozen=True)
class Bathymetry:
    """Gridded seafloor depth with bilinear interpolation.

    Parameters
    ----------
    x : ndarray (nx,)
        Grid north coordinates (m), strictly increasing.
    y : ndarray (ny,)
        Grid east coordinates (m), strictly increasing.
    depth : ndarray (nx, ny)
        Seafloor depth (m, positive down).

    Outside the grid the edge values are held.
    """

    x: np.ndarray
    y: np.ndarray
    depth: np.ndarray

    def __post_init__(self) -> None:
        x, y, d = (
            np.asarray(self.x, float),
            np.asarray(self.y, float),
            np.asarray(self.depth, float),
        )
        if x.ndim != 1 or y.ndim != 1 or len(x) < 2 or len(y) < 2:
            raise ConfigError("bathymetry x and y must be 1-D with >= 2 points", param="bathymetry")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
            raise ConfigError("bathymetry x and y must be strictly increasing", param="bathymetry")
        if d.shape != (len(x), len(y)):
            raise ConfigError(
                f"bathymetry depth must have shape ({len(x)}, {len(y)}), got {d.shape}",
                param="bathymetry.depth",
            )
        if not np.all(np.isfinite(d)):
            raise ConfigError("bathymetry depth must be finite", param="bathymetry.depth")
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "depth", d)

    @classmethod
    def from_profile(
        cls, profile: TerrainProfile, spacing: float, width: float = 100.0
    ) -> Bathymetry:
        """A grid with the profile laid along x (``spacing`` m per row), uniform across y."""
        x = np.arange(len(profile.rows)) * spacing
        y = np.array([-width / 2, width / 2])
        d = -np.repeat(profile.heights[:, None], 2, axis=1)
        return cls(x, y, d)

    def depth_at(self, north: np.ndarray | float, east: np.ndarray | float) -> np.ndarray:
        """Seafloor depth (m, down +) at the given positions (any broadcastable shapes)."""
        n = np.clip(np.asarray(north, float), self.x[0], self.x[-1])
        e = np.clip(np.asarray(east, float), self.y[0], self.y[-1])
        i = np.clip(np.searchsorted(self.x, n, side="right") - 1, 0, len(self.x) - 2)
        j = np.clip(np.searchsorted(self.y, e, side="right") - 1, 0, len(self.y) - 2)
        tx = (n - self.x[i]) / (self.x[i + 1] - self.x[i])
        ty = (e - self.y[j]) / (self.y[j + 1] - self.y[j])
        d = self.depth
        return (
            d[i, j] * (1 - tx) * (1 - ty)
            + d[i + 1, j] * tx * (1 - ty)
            + d[i, j + 1] * (1 - tx) * ty
            + d[i + 1, j + 1] * tx * ty
        )

    def altitude(self, north: np.ndarray, east: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """Height above the seafloor (m) of vehicles at ``depth`` (m, down +), shape (N,)."""
        return self.depth_at(north, east) - np.asarray(depth, float)


def parse_bathymetry(text: str, *, file: str | Path | None = None) -> Bathymetry:
    """Parse a gridded bathymetry CSV.

    Format: the first row is a label cell (any text, e.g. ``north\\east``) followed by the east
    coordinates y (m, strictly increasing); every later row is a north coordinate x (m, strictly
    increasing down the file) followed by the seafloor depths (m, positive down) at (x, y).
    Empty lines and lines starting with ``#`` are skipped.

    Parameters
    ----------
    text : str
        File contents.
    file : str or Path, optional
        For error messages.

    Returns
    -------
    Bathymetry

    Raises
    ------
    DataError
        ``file:line`` for non-numeric or non-finite cells, ragged rows, negative depths,
        non-increasing coordinates or fewer than 2 × 2 grid points.
    """
    rows: list[tuple[int, list[str]]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        rows.append((lineno, [c.strip() for c in s.split(",")]))
    if len(rows) < 3:
        raise DataError(
            "bathymetry needs a header row of east coordinates and >= 2 rows of depths",
            file=file,
            line=rows[0][0] if rows else 1,
        )

    def num(cell: str, lineno: int, col: int) -> float:
        try:
            v = float(cell)
        except ValueError:
            raise DataError(f"not a number: {cell!r}", file=file, line=lineno, column=col) from None
        if not math.isfinite(v):
            raise DataError(f"not a finite number: {cell!r}", file=file, line=lineno, column=col)
        return v

    def coord(cell: str, lineno: int, col: int) -> float:
        v = num(cell, lineno, col)
        if abs(v) > MAX_ABS_COORDINATE:
            raise DataError(
                f"coordinate {v:g} m is beyond ±{MAX_ABS_COORDINATE:g} m",
                file=file, line=lineno, column=col,
            )  # fmt: skip
        return v

    head_line, head = rows[0]
    y = [coord(c, head_line, i + 1) for i, c in enumerate(head[1:], start=1)]
    if len(y) < 2:
        raise DataError("header needs >= 2 east coordinates", file=file, line=head_line)
    if any(b <= a for a, b in zip(y, y[1:], strict=False)):
        raise DataError("east coordinates must be strictly increasing", file=file, line=head_line)
    x: list[float] = []
    depth: list[list[float]] = []
    for lineno, cells in rows[1:]:
        if len(cells) != len(y) + 1:
            raise DataError(
                f"expected {len(y) + 1} cells (north, then {len(y)} depths), got {len(cells)}",
                file=file,
                line=lineno,
            )
        vals = [coord(cells[0], lineno, 1)] + [
            num(c, lineno, i + 1) for i, c in enumerate(cells[1:], start=1)
        ]
        if x and vals[0] <= x[-1]:
            raise DataError(
                f"north coordinate {vals[0]} is not above the previous row's {x[-1]}",
                file=file,
                line=lineno,
                column=1,
            )
        for i, d in enumerate(vals[1:], start=2):
            if d < 0 or d > MAX_SEAFLOOR_DEPTH:
                raise DataError(
                    f"seafloor depth {d:g} m is outside [0, {MAX_SEAFLOOR_DEPTH:g}] m "
                    "(depths are positive down)",
                    file=file,
                    line=lineno,
                    column=i,
                )
        x.append(vals[0])
        depth.append(vals[1:])
    return Bathymetry(np.asarray(x), np.asarray(y), np.asarray(depth))


def profile_along_track(
    bathy: Bathymetry,
    *,
    north0: float,
    east0: float,
    heading_deg: float,
    speed: float,
    duration: float,
    interval: float = 0.1,
    name: str = "bathymetry",
) -> TerrainProfile:
    """Sample a bathymetry under a straight, constant-speed track into a terrain profile.

    Row j is the seafloor under the vehicle at τ_j = j·interval (s), position
    (north0 + speed·cos h·τ_j, east0 + speed·sin h·τ_j) with marine heading h (deg, 0 = north,
    clockwise).  Rows are seafloor heights z (m, up) = −depth; enough rows are made to cover
    ``duration`` without the profile's loop wrapping.

    Parameters
    ----------
    bathy : Bathymetry
    north0, east0 : float
        Track start (m).
    heading_deg : float
        Track course (deg, marine).
    speed : float
        Ground speed (m/s, >= 0).
    duration : float
        Time to cover (s, > 0); add the rangefinder delay if readings describe earlier times.
    interval : float
        Time between rows = rangefinder message interval (s, > 0).
    name : str
        Profile name.

    Returns
    -------
    TerrainProfile
    """
    for label, v in (("north0", north0), ("east0", east0), ("heading_deg", heading_deg)):
        if not math.isfinite(v):
            raise ConfigError(f"track {label} must be finite, got {v}", param=f"track.{label}")
    if not (math.isfinite(speed) and speed >= 0):
        raise ConfigError(f"track speed must be finite and >= 0, got {speed}", param="track.speed")
    if not (math.isfinite(duration) and duration > 0):
        raise ConfigError(f"duration must be > 0, got {duration}", param="duration")
    if not (math.isfinite(interval) and interval > 0):
        raise ConfigError(f"interval must be > 0, got {interval}", param="interval")
    if interval < MIN_TERRAIN_INTERVAL:
        raise ConfigError(
            f"interval must be >= {MIN_TERRAIN_INTERVAL:g} s, got {interval}", param="interval"
        )
    for label, v in (("north0", north0), ("east0", east0)):
        if abs(v) > MAX_ABS_COORDINATE:
            raise ConfigError(
                f"track {label} {v:g} m is beyond ±{MAX_ABS_COORDINATE:g} m", param=f"track.{label}"
            )
    if speed > 1000.0:
        raise ConfigError(f"track speed {speed:g} m/s is over 1000 m/s", param="track.speed")
    if duration / interval > MAX_SAMPLES:
        raise ConfigError(
            f"{duration:g} s at {interval:g} s per row is over {MAX_SAMPLES} rows (MAX_SAMPLES)",
            param="duration",
        )
    nrow = int(math.ceil(duration / interval)) + 2
    tau = np.arange(nrow) * interval
    h = math.radians(heading_deg)
    north = north0 + speed * math.cos(h) * tau
    east = east0 + speed * math.sin(h) * tau
    heights = -np.asarray(bathy.depth_at(north, east), float)
    heights = np.minimum(heights, 0.0)  # never a sentinel value: the floor is at or below 0
    return TerrainProfile(name=name, interval=float(interval), rows=heights, heights=heights.copy())


def read_profile(path: str | Path, *, name: str | None = None) -> TerrainProfile:
    """Read a terrain profile file (see :func:`parse_profile`); checks the path and encoding."""
    p = Path(path)
    text = read_input_text(p, what="terrain file", error=DataError)
    return parse_profile(text, name=name or p.stem, file=p)


def read_bathymetry(path: str | Path) -> Bathymetry:
    """Read a gridded bathymetry CSV (see :func:`parse_bathymetry`); checks path and encoding."""
    p = Path(path)
    text = read_input_text(p, what="bathymetry file", error=DataError)
    return parse_bathymetry(text, file=p)
