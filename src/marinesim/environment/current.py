"""Current fields in MOOS-IvP's ``CurrentField`` format (``.cfd``; spec usimmarine.md §8).

The module is pure: :meth:`CurrentField.parse` reads text that the caller has loaded (file
reading lives in :func:`marinesim.interop.moos.files.load_current_field`).

Format, one line at a time (blank ends stripped, lower-cased; empty and ``//`` lines skipped):

* ``fieldname: NAME`` and ``radius: R`` (the key must be followed by ": "; R must pass
  MOOS ``isNumber``, default 20 m); ``render_hint: ...`` lines are for viewers;
* any other line is a vector, comma-separated ``key=value`` items: ``x``/``xpos`` and
  ``y``/``ypos`` [m] (mandatory numbers), ``mag`` [m/s], ``ang`` [compass deg, towards],
  ``xdot``/``ydot`` [m/s east/north]; other keys are viewer attributes.  A line without a valid
  x or y is bad: it is reported and skipped.  So is a line whose known key has a value that
  is not a finite MOOS number (``mag=nan``, a 400-digit number) or is out of range
  (|x|, |y| ≤ 1e7 m; |mag|, |xdot|, |ydot| ≤ 1000 m/s; |ang| ≤ 1e6 deg) — marinesim warns
  where the program would ignore the key silently.  A radius ≤ 0 (no force anywhere) is kept,
  with a warning; a second ``radius`` line warns too (the last one is used).

Force at a point (``getLocalForce``): over the vectors whose distance d is strictly below R,
Σ (1 − d/R)²·v / n with n the number of vectors in range (not Σ weights); (0, 0) when none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.compile import SERIAL, lazy_kernels
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.frames import moos_heading_to_radians
from marinesim.core.jitable import jit_enabled, register_jitable
from marinesim.core.moostext import is_moos_number, moos_atof
from marinesim.core.textio import split_quoted

__all__ = ["FORCE_COMPILED_MIN", "CurrentField", "force_row", "vector_velocity"]

_DEFAULT_RADIUS = 20.0
#: Largest |x|, |y| [m] and radius of a field.
_MAX_POSITION = 1e7
#: Largest |speed| component [m/s] and |ang| [deg] of one vector.
_MAX_SPEED = 1000.0
_BOUNDS = {
    "x": _MAX_POSITION,
    "xpos": _MAX_POSITION,
    "y": _MAX_POSITION,
    "ypos": _MAX_POSITION,
    "mag": _MAX_SPEED,
    "xdot": _MAX_SPEED,
    "ydot": _MAX_SPEED,
    "ang": 1e6,
}


def _short(value: str, n: int = 40) -> str:
    """``repr`` of a value, cut to ``n`` characters."""
    return repr(value if len(value) <= n else value[:n] + "...")


def vector_velocity(
    ang: float, mag: float, xdot: float = 0.0, ydot: float = 0.0
) -> tuple[float, float]:
    """Velocity (east, north) [m/s] of one field vector.

    θ = ((90 − ang)·π)/180 wrapped once into [−π, π] (ang [deg] is not wrapped first; MOOS-IvP
    ``headingToRadians``, :func:`~marinesim.core.frames.moos_heading_to_radians`), then
    (cos θ·mag + xdot, sin θ·mag + ydot).
    """
    theta = float(moos_heading_to_radians(ang))
    return math.cos(theta) * mag + xdot, math.sin(theta) * mag + ydot


@dataclass(frozen=True)
class CurrentField:
    """A field of current vectors (positions [m] in the local frame, velocities [m/s]).

    Attributes
    ----------
    name : str
        Field name (lower case, from ``fieldname:``).
    radius : float
        Radius of influence R [m]; R ≤ 0 gives no force.
    x, y : ndarray, shape (M,)
        Vector positions [m] (x east, y north).
    vx, vy : ndarray, shape (M,)
        Vector velocities [m/s] (east, north).
    """

    name: str = ""
    radius: float = _DEFAULT_RADIUS
    x: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    y: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    vx: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    vy: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.x.shape[0])

    @classmethod
    def parse(
        cls, text: str, *, file: str | Path | None = None
    ) -> tuple[CurrentField, list[ConfigWarning]]:
        """Parse the text of a ``.cfd`` file.

        Parameters
        ----------
        text : str
            File contents.
        file : str or Path, optional
            Name used in warnings and errors.

        Returns
        -------
        (CurrentField, list of ConfigWarning)
            The field and one warning per bad line (file and line number).

        Raises
        ------
        ConfigError
            When the text has no lines at all (the program fails to load such a file).
        """
        lines = text.splitlines()
        if not lines:
            raise ConfigError("current-field file is empty", file=file)
        name = ""
        radius = _DEFAULT_RADIUS
        radius_line = 0
        xs: list[float] = []
        ys: list[float] = []
        vxs: list[float] = []
        vys: list[float] = []
        warns: list[ConfigWarning] = []

        def bad(lineno: int, why: str) -> None:
            warns.append(
                ConfigWarning(
                    f"problem with line {lineno}: {why}; line skipped", file=file, line=lineno
                )
            )

        for lineno, raw in enumerate(lines, start=1):
            line = raw.strip().lower()
            if not line or line.startswith("//"):
                continue
            if line.startswith("fieldname: "):
                name = line.partition(":")[2].strip()
                continue
            if line.startswith("radius: "):
                if radius_line:
                    warns.append(
                        ConfigWarning(
                            f"radius given again (first on line {radius_line}): the last one "
                            "is used, as the program reads the file top to bottom",
                            file=file,
                            line=lineno,
                            param="radius",
                        )
                    )
                radius_line = radius_line or lineno
                value = line.partition(":")[2].strip()
                r = moos_atof(value) if is_moos_number(value) else math.nan
                if not math.isfinite(r):
                    bad(lineno, f"radius {_short(value)} is not a finite number")
                elif r > _MAX_POSITION:
                    bad(lineno, f"radius {r:g} m is over {_MAX_POSITION:g} m")
                else:
                    radius = r
                    if r <= 0:
                        warns.append(
                            ConfigWarning(
                                f"radius {r:g} m is not positive: the field exerts no force",
                                file=file,
                                line=lineno,
                                param="radius",
                            )
                        )
                continue
            if line.startswith("render_hint: "):
                continue
            vals: dict[str, float] = {}
            problem = None
            for item in split_quoted(line):
                key, _, value = item.partition("=")
                key, value = key.strip(), value.strip()
                if key not in _BOUNDS:
                    continue
                canon = {"xpos": "x", "ypos": "y"}.get(key, key)
                v = moos_atof(value) if is_moos_number(value) else math.nan
                if not math.isfinite(v):
                    problem = f"{key} {_short(value)} is not a finite number"
                    break
                if abs(v) > _BOUNDS[key]:
                    problem = f"{key} {v:g} is beyond ±{_BOUNDS[key]:g}"
                    break
                vals[canon] = v
            if problem is not None:
                bad(lineno, problem)
                continue
            if "x" not in vals or "y" not in vals:
                missing = " and ".join(k for k in ("x", "y") if k not in vals)
                bad(lineno, f"no valid {missing}")
                continue
            vx, vy = vector_velocity(
                vals.get("ang", 0.0),
                vals.get("mag", 0.0),
                vals.get("xdot", 0.0),
                vals.get("ydot", 0.0),
            )
            xs.append(vals["x"])
            ys.append(vals["y"])
            vxs.append(vx)
            vys.append(vy)
        fld = cls(
            name=name,
            radius=radius,
            x=np.array(xs, dtype=np.float64),
            y=np.array(ys, dtype=np.float64),
            vx=np.array(vxs, dtype=np.float64),
            vy=np.array(vys, dtype=np.float64),
        )
        return fld, warns

    def force(self, x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Local current at points (``getLocalForce``), vectorised.

        The sums run over the vectors in file order, as the program's loop does
        (:func:`force_row`); many points (``FORCE_COMPILED_MIN`` point-vector pairs and more)
        go through the compiled loop over the points, fewer through numpy over the vectors.
        Both give the same bits.

        Parameters
        ----------
        x, y : array_like, shape (N,)
            Positions [m] (x east, y north); any broadcastable shape.

        Returns
        -------
        (fx, fy) : ndarrays of the broadcast shape
            Current [m/s] east and north: Σ wᵢ·vᵢ / n over the n vectors with dᵢ < R
            (strict), wᵢ = (1 − dᵢ/R)²; 0 where no vector is in range.
        """
        px = np.asarray(x, dtype=np.float64)
        py = np.asarray(y, dtype=np.float64)
        px, py = np.broadcast_arrays(px, py)
        shape = px.shape
        if len(self) == 0 or self.radius <= 0:
            return np.zeros(shape), np.zeros(shape)
        fx = np.empty(shape)
        fy = np.empty(shape)
        pxf = np.ascontiguousarray(px).reshape(-1)
        pyf = np.ascontiguousarray(py).reshape(-1)
        if pxf.size * len(self) >= FORCE_COMPILED_MIN and _compiled_ok():
            _force_kernels().launch(
                "cpu",
                (
                    pxf,
                    pyf,
                    self.x,
                    self.y,
                    self.vx,
                    self.vy,
                    float(self.radius),
                    fx.reshape(-1),
                    fy.reshape(-1),
                ),
            )
            return fx, fy
        # numpy over every (point, vector) pair; the sums accumulate in file order
        # (``cumsum`` is sequential), like the compiled loop: the same bits (+ 0.0: no −0)
        r = float(self.radius)
        d = np.hypot(pxf[:, None] - self.x, pyf[:, None] - self.y)
        inside = d < r
        pct = 1.0 - d / r
        w = np.where(inside, pct * pct, 0.0)
        cnt = inside.sum(axis=1).astype(np.float64)
        sx = np.cumsum(w * self.vx, axis=1)[:, -1] + 0.0
        sy = np.cumsum(w * self.vy, axis=1)[:, -1] + 0.0
        some = cnt > 0
        safe = np.where(some, cnt, 1.0)
        fx.reshape(-1)[:] = np.where(some, sx / safe, 0.0)
        fy.reshape(-1)[:] = np.where(some, sy / safe, 0.0)
        return fx, fy


#: Point-vector pairs from which :meth:`CurrentField.force` runs the compiled loop.
FORCE_COMPILED_MIN = 4096


@register_jitable
def force_row(
    i: int,
    px: NDArray[np.float64],
    py: NDArray[np.float64],
    xs: NDArray[np.float64],
    ys: NDArray[np.float64],
    vxs: NDArray[np.float64],
    vys: NDArray[np.float64],
    radius: float,
    fx: NDArray[np.float64],
    fy: NDArray[np.float64],
) -> None:
    """``getLocalForce`` at point ``i``: writes ``fx[i]``, ``fy[i]`` (the law, one point).

    Over the vectors in file order: d = hypot(Δx, Δy); in range when d < R; w = (1 − d/R)²;
    sums of w·v and the count n; (Σ/n) or 0 when none is in range.  Vectors with
    Δx² + Δy² > R²·(1 + 1e-9) are skipped before ``hypot`` (its cost dominates): their d is
    beyond R whatever the rounding, so the result is the same.
    """
    sx = 0.0
    sy = 0.0
    cnt = 0.0
    far = radius * radius * (1.0 + 1e-9)  # dx² + dy² beyond it: d ≥ R for sure
    for k in range(xs.shape[0]):
        dx = px[i] - xs[k]
        dy = py[i] - ys[k]
        if dx * dx + dy * dy > far:  # cheap rejection; the range test itself is on hypot
            continue
        d = math.hypot(dx, dy)
        if d < radius:
            pct = 1.0 - d / radius
            w = pct * pct
            sx += w * vxs[k]
            sy += w * vys[k]
            cnt += 1.0
    if cnt > 0.0:
        fx[i] = sx / cnt
        fy[i] = sy / cnt
    else:
        fx[i] = 0.0
        fy[i] = 0.0


def _compiled_ok() -> bool:
    """numba is usable and not turned off (``MARINESIM_JIT=0``)."""
    return jit_enabled()


#: The compiled loop over vehicles (rows), cached on disk, built at the first call.
_force_kernels = lazy_kernels(force_row, 0, error_model="numpy", parallel_min=SERIAL)
