"""MOOS-IvP helpers of uSimMarine, vectorised: angle wrapping as AngleUtils does it,
``relAng``, speed snapping, the drift summary text and the thrust map.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.frames import moos_angle360 as _angle360
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import _PI, F64
from marinesim.models.usm.thrustmap import (
    ThrustMap,
    format_number_x,
)

# --------------------------------------------------------------------------------------
# MOOS-IvP helpers, vectorised
# --------------------------------------------------------------------------------------


def _deg2rad(d: ArrayLike) -> Any:
    return (np.asarray(d) / 180.0) * _PI


def rel_ang(xa: ArrayLike, ya: ArrayLike, xb: ArrayLike, yb: ArrayLike) -> F64:
    """MOOS-IvP ``relAng``: compass bearing [deg] from point A to point B, element-wise.

    Parameters
    ----------
    xa, ya, xb, yb : array_like
        Coordinates [m] (broadcast together).

    Returns
    -------
    ndarray
        Degrees in [0, 360): 0 for identical points, exactly 0/90/180/270 along the axes,
        otherwise angle360(±deg(atan(|Δy|/|Δx|)) + 90 or 270) as the program computes it.
    """
    dx = np.subtract(xb, xa, dtype=np.float64)
    dy = np.subtract(yb, ya, dtype=np.float64)
    with np.errstate(all="ignore"):
        # sign(Δx)·sign(Δy)·deg(atan(|Δy|/|Δx|)) = deg(atan(Δy/Δx)): division, atan (odd),
        # /π and ·180 are all sign-symmetric, and the quotient keeps the sign bit even
        # when it underflows to ±0 (Δy = 0 gives ±0, so ret = w exactly), in place
        aval = np.divide(dy, dx, out=np.empty(np.broadcast_shapes(dx.shape, dy.shape)))
        np.arctan(aval, out=aval)
        np.divide(aval, _PI, out=aval)
        np.multiply(aval, 180.0, out=aval)
    # w = 180 - 90·sign(Δx): 90 east of A, 270 west (Δx = 0 is replaced below)
    ret = np.copysign(90.0, dx, out=np.empty_like(aval))
    np.subtract(180.0, ret, out=ret)
    ret -= aval
    if not dx.all():  # some Δx = 0: straight north (0), south (180) or no move (0)
        ret = np.where(dx == 0.0, np.where(dy < 0.0, 180.0, 0.0), ret)
    if ret.ndim == 0:
        return _angle360(ret[()])
    return _angle360(ret)


def snap_speed(v: ArrayLike) -> F64:
    """MOOS-IvP ``snapToStep(v, 0.01)``: half away from zero, published as n·0.01.

    Parameters
    ----------
    v : array_like
        Speed [m/s].

    Returns
    -------
    ndarray
        Snapped speed [m/s].
    """
    a = np.asarray(v, dtype=np.float64)
    if a.shape == (1,):
        x = float(a[0]) / 0.01
        if math.isfinite(x):
            return np.array([_snap_finite(x)])
    q = a / 0.01
    if q.ndim == 0:
        return np.trunc(q + np.copysign(0.5, q)) * 0.01
    # q ± 0.5 away from zero (copysign: q - 0.5 for q < 0, q + 0.5 otherwise; -0.0 gives
    # -0.5, which truncates to -0.0 instead of 0.0: the same published number)
    h = np.copysign(0.5, q)
    q += h
    np.trunc(q, out=q)
    q *= 0.01
    return q


def _snap_finite(x: float) -> float:
    """:func:`snap_speed` of one finite speed already divided by 0.01: trunc(x ± 0.5) · 0.01
    (a zero keeps the sign of its argument, as ``np.trunc``)."""
    r = float(math.trunc(x + math.copysign(0.5, x))) or math.copysign(0.0, x)
    return r * 0.01


def snap_speed_1(v: float) -> float:
    """:func:`snap_speed` of one speed [m/s], as a Python float (the same bits)."""
    x = v / 0.01
    if math.isfinite(x):
        return _snap_finite(x)
    return float(snap_speed(np.array([v]))[0])


def _set_boolean_on_string(old: bool, text: str) -> bool:
    """MBUtils ``setBooleanOnString`` (case-insensitive); unknown text leaves the value."""
    s = text.lower()
    if s in ("true", "on", "yes"):
        return True
    if s in ("false", "off", "no"):
        return False
    if s == "toggle":
        return not old
    return old


def drift_summary(dx: float, dy: float) -> str:
    """The program's drift summary string (§7): ``"ang=A, mag=M, xmag=X, ymag=Y"``.

    Parameters
    ----------
    dx, dy : float
        Drift [m/s] east and north.

    Returns
    -------
    str
        With 2/2/3/3 decimals, trailing zeros removed and "-0" printed as "0".
    """
    mag = math.sqrt(dx * dx + dy * dy)
    ang = float(rel_ang(0.0, 0.0, dx, dy))
    return (
        f"ang={format_number_x(ang, 2)}, mag={format_number_x(mag, 2)}, "
        f"xmag={format_number_x(dx, 3)}, ymag={format_number_x(dy, 3)}"
    )


@lru_cache(maxsize=8)
def _const_strings(n: int, text: str) -> NDArray[np.object_]:
    a = np.full(n, text, dtype=object)
    a.flags.writeable = False
    return a


_DEFAULT_MAP = ThrustMap(20.0, False).freeze()


def _thrust_map(config: UsmConfig) -> ThrustMap:
    return config.thrust_map if config.thrust_map is not None else _DEFAULT_MAP
