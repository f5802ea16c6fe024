"""Closed-loop judging: a mission log against recorded runs of the same mission.

The metrics of ``reference/moos_live/README.md`` §2.3 (on NAV_X / NAV_Y between DEPLOY=true
and MISSION=complete): the largest and RMS distance at equal along-track distance (both
tracks resampled every 0.5 m), the symmetric Hausdorff distance (any NAV sample of one run to
the polyline of the other), the largest distance at equal time since motion start (first
NAV_SPEED > 0 after DEPLOY; 0.1 s grid), the path-length difference; plus the mission's
timing (complete − motion start, WPT_INDEX changes after motion start).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from marinesim.core.alog import Alog, read_alog
from marinesim.core.errors import DataError

__all__ = ["MissionTrack", "compare_tracks", "mission_track"]


@dataclass(frozen=True)
class MissionTrack:
    """One run's track and timing (log times [s], positions [m]).

    Attributes
    ----------
    t, x, y : ndarray
        NAV samples from DEPLOY=true to MISSION=complete.
    t_deploy, t_motion, t_complete : float
        Log times of DEPLOY=true, the first NAV_SPEED > 0 after it, and MISSION=complete.
    wpt_changes : list of (float, float)
        (time after motion start [s], new WPT_INDEX) for every change after DEPLOY.
    path_length : float
    """

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    t_deploy: float
    t_motion: float
    t_complete: float
    wpt_changes: list[tuple[float, float]]
    path_length: float

    @property
    def duration_from_motion(self) -> float:
        """complete − motion start [s]."""
        return self.t_complete - self.t_motion


def mission_track(log: Alog | str | Path, *, prefix: str = "NAV") -> MissionTrack:
    """The judged part of a mission log.

    Raises
    ------
    DataError
        No DEPLOY=true, no MISSION=complete after it, or no motion.
    """
    alog = log if isinstance(log, Alog) else read_alog(log)
    recs = sorted(alog.records, key=lambda r: r.t)
    try:
        t_dep = next(r.t for r in recs if r.var == "DEPLOY" and str(r.value).lower() == "true")
    except StopIteration:
        raise DataError("no DEPLOY=true in the log", file=alog.path) from None
    done = [r.t for r in recs if r.var == "MISSION" and r.value == "complete" and r.t >= t_dep]
    if not done:
        raise DataError("the mission never posted MISSION=complete", file=alog.path)
    t_done = done[0]
    ts, sp = alog.numeric(f"{prefix}_SPEED")
    moving = np.flatnonzero((ts >= t_dep) & (sp > 0))
    if moving.size == 0:
        raise DataError("the vehicle never moved after DEPLOY", file=alog.path)
    t_mot = float(ts[moving[0]])
    tx, x = alog.numeric(f"{prefix}_X")
    _ty, y = alog.numeric(f"{prefix}_Y")
    n = min(len(x), len(y))
    tx, x, y = tx[:n], x[:n], y[:n]
    keep = (tx >= t_dep) & (tx <= t_done)
    tx, x, y = tx[keep], x[keep], y[keep]
    wt, wv = alog.numeric("WPT_INDEX")
    changes: list[tuple[float, float]] = []
    last = None
    for t, v in zip(wt, wv, strict=True):
        if t >= t_dep and v != last:
            changes.append((float(t - t_mot), float(v)))
        last = v
    length = float(np.sum(np.hypot(np.diff(x), np.diff(y))))
    return MissionTrack(tx, x, y, t_dep, t_mot, t_done, changes, length)


def _resample_along(tr: MissionTrack, s_grid: np.ndarray) -> np.ndarray:
    s = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(tr.x), np.diff(tr.y)))])
    s, idx = np.unique(s, return_index=True)
    return np.stack([np.interp(s_grid, s, tr.x[idx]), np.interp(s_grid, s, tr.y[idx])], axis=1)


def _point_to_polyline(px: np.ndarray, py: np.ndarray, qx: np.ndarray, qy: np.ndarray) -> float:
    """Largest over points p of the distance from p to the polyline q (chunked)."""
    ax, ay, bx, by = qx[:-1], qy[:-1], qx[1:], qy[1:]
    dx, dy = bx - ax, by - ay
    den = np.where(dx * dx + dy * dy > 0, dx * dx + dy * dy, 1.0)
    worst = 0.0
    for a in range(0, len(px), 256):
        x = px[a : a + 256, None]
        y = py[a : a + 256, None]
        u = np.clip(((x - ax) * dx + (y - ay) * dy) / den, 0.0, 1.0)
        d = np.hypot(x - (ax + u * dx), y - (ay + u * dy)).min(axis=1)
        worst = max(worst, float(d.max()))
    return worst


def compare_tracks(a: MissionTrack, b: MissionTrack) -> dict[str, float]:
    """README §2.3 metrics between two runs (metres and seconds)."""
    s_end = min(a.path_length, b.path_length)
    s_grid = np.arange(0.0, s_end, 0.5)
    pa, pb = _resample_along(a, s_grid), _resample_along(b, s_grid)
    d_s = np.hypot(*(pa - pb).T)
    span = min(a.t_complete - a.t_motion, b.t_complete - b.t_motion)
    g = np.arange(0.0, span + 1e-9, 0.1)

    def at(tr: MissionTrack) -> np.ndarray:
        return np.stack(
            [np.interp(g, tr.t - tr.t_motion, tr.x), np.interp(g, tr.t - tr.t_motion, tr.y)],
            axis=1,
        )

    d_t = np.hypot(*(at(a) - at(b)).T)
    haus = max(_point_to_polyline(a.x, a.y, b.x, b.y), _point_to_polyline(b.x, b.y, a.x, a.y))
    return {
        "max_dist_equal_along_track_m": float(d_s.max()),
        "rms_dist_equal_along_track_m": float(np.sqrt(np.mean(d_s**2))),
        "hausdorff_m": haus,
        "max_dist_equal_time_from_motion_start_m": float(d_t.max()),
        "path_length_diff_m": abs(a.path_length - b.path_length),
        "duration_from_motion_diff_s": abs(a.duration_from_motion - b.duration_from_motion),
    }
