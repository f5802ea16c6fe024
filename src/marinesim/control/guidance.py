"""Waypoint guidance, batched over N vehicles (pure functions used by the waypoint autonomy).

Positions are (north, east) [m]; headings are marine degrees (0 = north, clockwise).
A vehicle steers towards its current waypoint, or, with a positive ``lead`` distance, towards
a point ``lead`` metres ahead of its projection on the track line from the previous waypoint
(MOOS-IvP BHV_Waypoint's lead).  A waypoint is reached when the vehicle is inside
``capture_radius``, or inside ``slip_radius`` while its distance starts growing again.

The law is written once, per vehicle (:func:`waypoint_row`); :func:`waypoint_update` walks it
over the rows through a compiled kernel (:mod:`marinesim.core.compile`), or interpreted under
``MARINESIM_JIT=0``; the compiled tick calls the same function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.compile import SERIAL, lazy_kernels, walk_rows
from marinesim.core.errors import ConfigError
from marinesim.core.frames import angle360, angle360_c
from marinesim.core.jitable import register_jitable

__all__ = [
    "WaypointState",
    "bearing_deg",
    "deg360",
    "lawnmower",
    "split_lanes",
    "waypoint_init",
    "waypoint_row",
    "waypoint_rows",
    "waypoint_update",
]


def bearing_deg(
    from_north: ArrayLike, from_east: ArrayLike, to_north: ArrayLike, to_east: ArrayLike
) -> NDArray[np.float64]:
    """Marine bearing [deg, 0..360) from one point to another (arrays of shape (N,))."""
    dn = np.asarray(to_north, dtype=float) - np.asarray(from_north, dtype=float)
    de = np.asarray(to_east, dtype=float) - np.asarray(from_east, dtype=float)
    return angle360(np.degrees(np.arctan2(de, dn)))  # core.frames: never 360.0


def lawnmower(
    north: float,
    east: float,
    length: float,
    width: float,
    spacing: float,
    heading_deg: float = 0.0,
    first_turn: str = "right",
) -> NDArray[np.float64]:
    """Waypoints of a lawnmower (boustrophedon) pattern.

    Parameters
    ----------
    north, east : float
        Start corner [m].
    length : float
        Lane length along ``heading_deg`` [m], > 0.
    width : float
        Extent across the lanes [m], ≥ 0.
    spacing : float
        Distance between lanes [m], > 0.
    heading_deg : float
        Direction of the first lane (marine degrees).
    first_turn : {"right", "left"}
        Side to which the pattern extends.

    Returns
    -------
    ndarray, shape (P, 2)
        (north, east) of every lane end, P = 2·(⌊width/spacing⌋ + 1).
    """
    if length <= 0 or spacing <= 0 or width < 0:
        raise ConfigError(
            f"lawnmower needs length > 0, spacing > 0 and width >= 0 (got {length}, {spacing}, {width})"
        )
    if first_turn not in ("right", "left"):
        raise ConfigError(f"first_turn must be 'right' or 'left', got {first_turn!r}")
    from marinesim.core.limits import MAX_WAYPOINTS

    ratio = width / spacing
    if not np.isfinite(ratio) or 2 * (ratio + 1) > MAX_WAYPOINTS:
        raise ConfigError(
            f"width {width:g} m at spacing {spacing:g} m makes more than {MAX_WAYPOINTS} "
            "waypoints (MAX_WAYPOINTS); widen the spacing",
            param="lawnmower.spacing",
        )
    lanes = int(np.floor(ratio + 1e-9)) + 1
    h = np.radians(heading_deg)
    along = np.array([np.cos(h), np.sin(h)])  # (north, east) unit vector of the lane
    side = (
        np.array([-np.sin(h), np.cos(h)])
        if first_turn == "right"
        else np.array([np.sin(h), -np.cos(h)])
    )
    pts = []
    for i in range(lanes):
        base = np.array([north, east]) + side * spacing * i
        a, b = base, base + along * length
        pts.extend([a, b] if i % 2 == 0 else [b, a])
    return np.asarray(pts)


def split_lanes(points: NDArray[np.float64], n: int) -> list[NDArray[np.float64]]:
    """Split a lawnmower's lanes (pairs of points) into ``n`` contiguous groups, one per vehicle."""
    lanes = points.reshape(-1, 2, 2)
    groups = np.array_split(np.arange(len(lanes)), n)
    out = []
    for g in groups:
        if len(g) == 0:
            raise ConfigError(
                f"cannot split {len(lanes)} lanes among {n} vehicles: add lanes or set split: false"
            )
        out.append(lanes[g].reshape(-1, 2))
    return out


@dataclass(frozen=True)
class WaypointState:
    """Progress of N vehicles along their waypoint lists.

    Attributes
    ----------
    index : ndarray of int, shape (N,)
        Current waypoint index.
    loops : ndarray of int, shape (N,)
        Completed passes over the list.
    min_dist : ndarray, shape (N,)
        Smallest distance to the current waypoint so far [m] (for the slip radius).
    done : ndarray of bool, shape (N,)
    prev_point : ndarray, shape (N, 2)
        Start of the current track line (the previous waypoint or the start position).
    """

    index: NDArray[np.int64]
    loops: NDArray[np.int64]
    min_dist: NDArray[np.float64]
    done: NDArray[np.bool_]
    prev_point: NDArray[np.float64]


def waypoint_init(start_ne: ArrayLike) -> WaypointState:
    """Initial progress: first waypoint, track line from the start positions (N, 2)."""
    p = np.asarray(start_ne, dtype=float)
    n = p.shape[0]
    return WaypointState(
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.full(n, np.inf),
        np.zeros(n, dtype=bool),
        p.copy(),
    )


def waypoint_update(
    state: WaypointState,
    pos_ne: ArrayLike,
    points: NDArray[np.float64],
    npoints: NDArray[np.int64],
    *,
    capture_radius: float,
    slip_radius: float = 0.0,
    lead: float = 0.0,
    repeat: int = 0,
) -> tuple[WaypointState, NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Advance waypoint indices and compute the desired heading.

    Parameters
    ----------
    state : WaypointState
    pos_ne : array_like, shape (N, 2)
        Current (north, east) [m].
    points : ndarray, shape (N, P, 2)
        Waypoints per vehicle (rows padded beyond ``npoints``).
    npoints : ndarray of int, shape (N,)
        Number of valid waypoints per vehicle (≥ 1).
    capture_radius : float
        Reached when closer than this [m].
    slip_radius : float
        Also reached when closer than this and the distance grows again [m] (0 = off).
    lead : float
        Lead distance along the track line [m] (0 = steer straight at the waypoint).
    repeat : int
        Extra passes over the list after the first (−1 = forever).

    Returns
    -------
    state : WaypointState
    heading_deg : ndarray, shape (N,)
        Desired marine heading [deg] (NaN where done).
    target_ne : ndarray, shape (N, 2)
        Current waypoint (north, east) [m].
    reached : ndarray of bool, shape (N,)
        A waypoint was reached in this update.
    """
    pos = np.ascontiguousarray(pos_ne, dtype=float)
    n = pos.shape[0]
    idx = np.array(state.index, dtype=np.int64)  # copies, updated in place by the row law
    loops = np.array(state.loops, dtype=np.int64)
    min_dist = np.array(state.min_dist, dtype=float)
    done = np.array(state.done, dtype=np.bool_)
    prev_pt = np.array(state.prev_point, dtype=float)
    out = np.empty((n, 3))
    code = np.empty(n, dtype=np.int64)
    args = (
        pos, np.ascontiguousarray(points, dtype=float), np.ascontiguousarray(npoints, np.int64),
        idx, loops, min_dist, done, prev_pt, float(capture_radius), float(slip_radius),
        float(lead), int(repeat), out, code,
    )  # fmt: skip
    walk_rows(_kernels, n, args)
    state = WaypointState(idx, loops, min_dist, done, prev_pt)
    return state, out[:, 0], out[:, 1:], code > 0


@register_jitable
def deg360(deg: float) -> float:
    """:func:`~marinesim.core.frames.angle360_c` of one float, an angle already within
    (−360, 360) without its ``%`` (numba calls a C ``fmod`` helper for it, about a tenth of the
    survey block's compiled tick): there ``fmod(deg, 360)`` is ``deg`` itself, so the floor
    modulo is ``deg`` (positive) or ``deg + 360`` (negative; then the same 360 → 0 step) —
    the same bits.  Zero, NaN and the other angles go through ``angle360_c``."""
    if 0.0 < deg < 360.0:
        return deg
    if -360.0 < deg < 0.0:
        m = deg + 360.0
        return m - 360.0 * (m >= 360.0)
    return angle360_c(deg)


@register_jitable
def waypoint_row(
    i: int, n_pt: float, e_pt: float, points: Any, npoints: Any, index: Any, loops: Any,
    min_dist: Any, done: Any, prev_point: Any, capture_radius: float, slip_radius: float,
    lead: float, repeat: int, out: Any,
) -> int:
    """The waypoint law of row ``i`` (:func:`waypoint_update` walks it), in place.

    Updates ``index[i]``, ``loops[i]``, ``min_dist[i]``, ``done[i]``, ``prev_point[i]`` and
    writes ``out[i]`` = (heading [deg] or NaN when done, target north, target east).
    Returns 0 (no waypoint reached), 1 (reached: the next index) or 2 (reached the last
    point of the last pass: done).  (``np.hypot``, not ``math.hypot``: CPython's own
    ``math.hypot`` rounds differently from the C library's, which numpy and numba call.)
    """
    j = min(index[i], npoints[i] - 1)
    tn = points[i, j, 0]
    te = points[i, j, 1]
    dist = np.hypot(tn - n_pt, te - e_pt)
    slipping = slip_radius > 0 and dist < slip_radius and dist > min_dist[i] + 1e-9
    reached = not done[i] and (dist < capture_radius or slipping)
    code = 0
    if reached:
        prev_point[i, 0] = tn
        prev_point[i, 1] = te
        nxt = index[i] + 1
        wrap = nxt >= npoints[i]
        more = repeat < 0 or loops[i] < repeat
        if wrap:
            loops[i] += 1
        if wrap and not more:
            done[i] = True
            code = 2
        else:
            code = 1
        nxt = 0 if (wrap and more) else min(nxt, npoints[i] - 1)
        index[i] = nxt
        tn = points[i, nxt, 0]
        te = points[i, nxt, 1]
        min_dist[i] = np.hypot(tn - n_pt, te - e_pt)
    else:
        md = min_dist[i]
        min_dist[i] = dist if (dist < md or dist != dist) else md  # np.minimum (NaN passes)
    an, ae = tn, te
    if lead > 0:
        pn, pe = prev_point[i, 0], prev_point[i, 1]
        sn, se = tn - pn, te - pe
        seg_len = np.hypot(sn, se)
        safe = seg_len if seg_len > 0 else 1.0
        un, ue = sn / safe, se / safe
        s = ((n_pt - pn) * un + (e_pt - pe) * ue) + lead
        if seg_len > 0 and s < seg_len:
            sc = s if (s > 0.0 or s != s) else 0.0
            an, ae = pn + un * sc, pe + ue * sc
    if done[i]:
        out[i, 0] = math.nan
    else:
        out[i, 0] = deg360(math.atan2(ae - e_pt, an - n_pt) * (180.0 / math.pi))  # np.degrees
    out[i, 1] = tn
    out[i, 2] = te
    return code


@register_jitable
def waypoint_rows(
    i: int, pos: Any, points: Any, npoints: Any, index: Any, loops: Any, min_dist: Any,
    done: Any, prev_point: Any, capture_radius: float, slip_radius: float, lead: float,
    repeat: int, out: Any, code: Any,
) -> int:
    """:func:`waypoint_row` of vehicle ``i`` at ``pos[i]``, its code in ``code[i]``."""
    code[i] = waypoint_row(
        i, pos[i, 0], pos[i, 1], points, npoints, index, loops, min_dist, done, prev_point,
        capture_radius, slip_radius, lead, repeat, out,
    )  # fmt: skip
    return 0


#: The compiled loop over vehicles (rows), cached on disk, built at the first call.
_kernels = lazy_kernels(waypoint_rows, 0, error_model="numpy", parallel_min=SERIAL)
