"""Frames of the environments: a top-down view of the vehicles with their tracks (NumPy only).

``render_mode="rgb_array"`` returns the frame, an (H, W, 3) ``uint8`` array; ``"human"`` shows
the same frame in a Matplotlib window, refreshed every step.  The view is drawn from the
**truth** (what happened, not what the agent believed):

* top-down (``kind="top"``): north up, east right, equal scale, a grid every 1, 2 or 5 × 10ᵏ m,
  each vehicle's track since the reset, the vehicle as a triangle pointing along its heading,
  its goal (or objects, hollow until found) as rings;
* side (``kind="side"``, :class:`~marinesim.gym.surftrak_altitude.SurftrakAltitudeTask`, whose
  vehicle only moves vertically): time right, height up, the seafloor under the vehicle, the
  vehicle's track and the altitude it is asked to hold.

The picture is rasterised here with array operations (no plotting library in the step loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BACKGROUND", "COLORS", "TrackRenderer", "View"]

F64 = NDArray[np.float64]
U8 = NDArray[np.uint8]

BACKGROUND = (248, 248, 244)
GRID = (222, 222, 216)
COLORS = ((31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14),
          (23, 190, 207), (140, 86, 75), (227, 119, 194))  # fmt: skip
GOAL = (20, 20, 20)
FLOOR = (140, 100, 60)


@dataclass
class View:
    """What one frame shows, in metres.

    Attributes
    ----------
    kind : {"top", "side"}
    pos : ndarray, shape (k, 2)
        Vehicles: (north, east) for ``top``; (time [s], height up [m]) for ``side``.
    heading : ndarray, shape (k,), optional
        Headings [rad] from north, clockwise (``top`` only).
    marks : ndarray, shape (m, 2), optional
        Goals or objects, same axes as ``pos``.
    marks_done : ndarray of bool, shape (m,), optional
        Marks drawn filled (found objects).
    floor : ndarray, shape (k,), optional
        Seafloor height under each vehicle (``side``).
    """

    kind: str
    pos: F64
    heading: F64 | None = None
    marks: F64 | None = None
    marks_done: NDArray[np.bool_] | None = None
    floor: F64 | None = None


@dataclass
class TrackRenderer:
    """Keeps the tracks since the last reset and rasterises frames of a :class:`View`."""

    size: int = 480
    tracks: list[F64] = field(default_factory=list)
    floors: list[F64] = field(default_factory=list)
    _fig: Any = None
    _img: Any = None

    def reset(self) -> None:
        """Forget the tracks (a new episode)."""
        self.tracks.clear()
        self.floors.clear()

    def add(self, view: View) -> None:
        """Append the vehicles' positions (and floor) of ``view`` to their tracks."""
        self.tracks.append(np.array(view.pos, dtype=float, copy=True))
        if view.floor is not None:
            self.floors.append(np.array(view.floor, dtype=float, copy=True))

    # ------------------------------------------------------------------------------------
    def frame(self, view: View) -> U8:
        """The (size, size, 3) uint8 picture of ``view`` with the tracks so far."""
        s = self.size
        img = np.empty((s, s, 3), dtype=np.uint8)
        img[:] = BACKGROUND
        track = np.stack(self.tracks, axis=1) if self.tracks else view.pos[:, None, :]
        pts = [track.reshape(-1, 2), view.pos]
        if view.marks is not None and len(view.marks):
            pts.append(view.marks)
        floor = np.stack(self.floors, axis=1) if self.floors else None
        if view.kind == "side" and floor is not None:
            pts.append(np.stack([track[..., 0], floor], axis=-1).reshape(-1, 2))
        allp = np.concatenate(pts)
        allp = allp[np.all(np.isfinite(allp), axis=1)]
        if allp.size == 0:
            return img
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        span = max(float(np.max(hi - lo)), 10.0) * 1.15
        centre = (lo + hi) / 2.0
        scale = (s - 1) / span  # px per m

        # (a, b) data axes -> pixel (row, col): top: a = north (up), b = east (right);
        # side: a = time (right), b = height (up)
        def px(p: F64) -> tuple[F64, F64]:
            if view.kind == "top":
                up, right = p[..., 0], p[..., 1]
                c_up, c_right = centre[0], centre[1]
            else:
                up, right = p[..., 1], p[..., 0]
                c_up, c_right = centre[1], centre[0]
            return (s / 2.0 - (up - c_up) * scale, s / 2.0 + (right - c_right) * scale)

        self._grid(img, centre, span, view.kind)
        if view.kind == "side" and floor is not None:
            fl = np.stack([track[0, :, 0], floor[0]], axis=-1)
            r, c = px(fl)
            _polyline(img, r, c, FLOOR, 3)
        for i in range(track.shape[0]):
            r, c = px(track[i])
            _polyline(img, r, c, _pale(COLORS[i % len(COLORS)]), 2)
        if view.marks is not None:
            done = view.marks_done if view.marks_done is not None else np.zeros(len(view.marks))
            for j, m in enumerate(view.marks):
                r, c = px(m)
                _ring(img, float(r), float(c), 7.0, 2.0, GOAL, fill=bool(done[j]))
        for i, p in enumerate(view.pos):
            r, c = px(p)
            col = COLORS[i % len(COLORS)]
            if view.kind == "top" and view.heading is not None:
                _triangle(img, float(r), float(c), float(view.heading[i]), 11.0, col)
            else:
                _ring(img, float(r), float(c), 6.0, 6.0, col, fill=True)
        return img

    def _grid(self, img: U8, centre: F64, span: float, kind: str) -> None:
        s = img.shape[0]
        raw = span / 6.0
        k = 10.0 ** np.floor(np.log10(raw))
        step = next(m * k for m in (1.0, 2.0, 5.0, 10.0) if m * k >= raw)
        scale = (s - 1) / span
        for axis in (0, 1):
            c0 = centre[axis]
            first = np.ceil((c0 - span / 2) / step) * step
            for v in np.arange(first, c0 + span / 2, step):
                off = (v - c0) * scale
                up_axis = 0 if kind == "top" else 1
                if axis == up_axis:
                    row = int(round(s / 2.0 - off))
                    if 0 <= row < s:
                        img[row, :] = GRID
                else:
                    col = int(round(s / 2.0 + off))
                    if 0 <= col < s:
                        img[:, col] = GRID

    # human mode ---------------------------------------------------------------------------
    def show(self, frame: U8, title: str, fps: float) -> None:
        """Show ``frame`` in a Matplotlib window (non-interactive backends: drawn only)."""
        import matplotlib
        import matplotlib.pyplot as plt

        if self._fig is None or not plt.fignum_exists(self._fig.number):
            self._fig, ax = plt.subplots(figsize=(5, 5))
            ax.set_axis_off()
            self._img = ax.imshow(frame)
            self._fig.canvas.manager.set_window_title(title) if self._fig.canvas.manager else None
        else:
            self._img.set_data(frame)
        self._fig.canvas.draw_idle()
        if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo", "template"):
            plt.pause(1.0 / max(fps, 1.0))
        else:
            self._fig.canvas.draw()

    def close(self) -> None:
        """Close the human-mode window."""
        if self._fig is not None:
            import matplotlib.pyplot as plt

            plt.close(self._fig)
            self._fig = None
            self._img = None


# rasterising ------------------------------------------------------------------------------
def _pale(col: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(0.55 * c + 0.45 * 255) for c in col)  # type: ignore[return-value]


def _paint(img: U8, rows: F64, cols: F64, col: tuple[int, int, int]) -> None:
    r = np.round(rows).astype(np.intp)
    c = np.round(cols).astype(np.intp)
    ok = (r >= 0) & (r < img.shape[0]) & (c >= 0) & (c < img.shape[1])
    img[r[ok], c[ok]] = col


def _polyline(img: U8, r: F64, c: F64, col: tuple[int, int, int], width: int) -> None:
    """Segments between consecutive finite points, sampled every half pixel, ``width`` px."""
    r = np.asarray(r, dtype=float).reshape(-1)
    c = np.asarray(c, dtype=float).reshape(-1)
    if r.size == 1:
        _paint(img, r, c, col)
        return
    r0, r1, c0, c1 = r[:-1], r[1:], c[:-1], c[1:]
    ok = np.isfinite(r0) & np.isfinite(r1) & np.isfinite(c0) & np.isfinite(c1)
    r0, r1, c0, c1 = r0[ok], r1[ok], c0[ok], c1[ok]
    if r0.size == 0:
        return
    n = np.clip(np.ceil(2 * np.maximum(np.abs(r1 - r0), np.abs(c1 - c0))), 1, 4 * img.shape[0])
    n = n.astype(np.intp)
    seg = np.repeat(np.arange(r0.size), n)
    frac = (np.arange(seg.size) - np.repeat(np.cumsum(n) - n, n)) / np.repeat(n, n)
    rr = r0[seg] + (r1 - r0)[seg] * frac
    cc = c0[seg] + (c1 - c0)[seg] * frac
    half = width / 2.0
    for dr in np.arange(-half + 0.5, half, 1.0):
        for dc in np.arange(-half + 0.5, half, 1.0):
            _paint(img, rr + dr, cc + dc, col)


def _box(img: U8, r: float, c: float, rad: float) -> tuple[F64, F64, slice, slice]:
    s0, s1 = img.shape[:2]
    r_lo, r_hi = max(int(r - rad - 1), 0), min(int(r + rad + 2), s0)
    c_lo, c_hi = max(int(c - rad - 1), 0), min(int(c + rad + 2), s1)
    rr, cc = np.mgrid[r_lo:r_hi, c_lo:c_hi].astype(float)
    return rr, cc, slice(r_lo, r_hi), slice(c_lo, c_hi)


def _ring(
    img: U8, r: float, c: float, rad: float, width: float, col: tuple[int, int, int], fill: bool
) -> None:
    if not (np.isfinite(r) and np.isfinite(c)):
        return
    rr, cc, sr, sc = _box(img, r, c, rad)
    d = np.hypot(rr - r, cc - c)
    mask = d <= rad if fill else (d <= rad) & (d >= rad - width)
    img[sr, sc][mask] = col


def _triangle(
    img: U8, r: float, c: float, heading: float, length: float, col: tuple[int, int, int]
) -> None:
    """A triangle centred at (r, c) pointing along ``heading`` (rad from up, clockwise)."""
    if not (np.isfinite(r) and np.isfinite(c) and np.isfinite(heading)):
        return
    fwd = np.array([-np.cos(heading), np.sin(heading)])  # (row, col) of "ahead"
    side = np.array([fwd[1], -fwd[0]])
    tip = np.array([r, c]) + fwd * length * 0.6
    back = np.array([r, c]) - fwd * length * 0.4
    a, b = back + side * length * 0.35, back - side * length * 0.35
    rr, cc, sr, sc = _box(img, r, c, length)

    def edge(p: Any, q: Any) -> F64:
        return (q[0] - p[0]) * (cc - p[1]) - (q[1] - p[1]) * (rr - p[0])

    e1, e2, e3 = edge(tip, a), edge(a, b), edge(b, tip)
    mask = ((e1 >= 0) & (e2 >= 0) & (e3 >= 0)) | ((e1 <= 0) & (e2 <= 0) & (e3 <= 0))
    img[sr, sc][mask] = col
