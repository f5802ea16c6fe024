"""One uSimMarine ``Iterate()`` of one vehicle, as the MOOS app runs it (:func:`iterate_one`).

The same iteration as :func:`~marinesim.models.usm.publish.iterate` for N = 1, with its
publications as ``(name, value)`` pairs of Python numbers and strings (the unpublished left
out), in the program's order: what ``marinesim moos`` posts.  The common case — the vehicle
enabled, not paused, not stopped by an obstacle, one record (no ``dual_state``), no current
field, no buoyancy or trim request and (``usm``) no reverse thrust — takes a short path
with few numpy calls: the state is packed into one fresh row matrix, the law
(:func:`~marinesim.models.usm.rows.usm_propagate_map`, the only copy of the physics) runs
over it through memoryviews as Python floats, the new state's fields are rows of that
matrix and the publications are read from it as Python floats.  Every other case runs
:func:`~marinesim.models.usm.publish.iterate` and converts its publications.
``tests/models/test_usm_one.py`` checks that both give the same state and publications,
bit for bit.
"""

from __future__ import annotations

import operator
import threading
from typing import Any

import numpy as np

from marinesim.core.frames import moos_angle360
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.moos_math import drift_summary, snap_speed_1
from marinesim.models.usm.publish import _config_rows, iterate, record_names
from marinesim.models.usm.state import UsmState, _evolve

__all__ = ["iterate_one", "scalar_pubs"]

Pubs = list[tuple[str, float | str]]

_NF = len(R.FIELDS)
#: (field names, columns) of the columns the law writes, per variant.
_WRITTEN = {
    v22: (tuple(R.FIELDS[c] for c in cols), np.array(cols))
    for v22, cols in ((False, R.WRITTEN), (True, R.WRITTEN_V22))
}


def scalar_pubs(pubs: dict[str, Any]) -> Pubs:
    """``(name, value)`` of one vehicle's publications (:func:`iterate`'s dict of arrays):
    the element of each as a Python float or str, the unpublished (None, NaN) left out."""
    out: Pubs = []
    ndarray = np.ndarray
    for name, val in pubs.items():
        x = val[0] if isinstance(val, ndarray) else val
        if x is None:
            continue
        if isinstance(x, str):
            out.append((name, x))
            continue
        f = float(x)
        if f == f:  # not NaN
            out.append((name, f))
    return out


#: The flags and counters an iteration reads (besides the rows' columns).
_AUX_OF = operator.itemgetter(
    "paused", "obstacle_hit", "enabled", "current_active", "reverse", "buoy_req", "trim_req",
    "pause_ticks", "propagated", "drift_fresh", "altitude_set",
)  # fmt: skip


def _short_path(config: UsmConfig, st: UsmState, v22: bool) -> tuple[Any, ...] | None:
    """The Python values of the state's :data:`_AUX_OF` fields when the short path takes this
    iteration (see the module's docstring), else None.  They are read again only when a
    field is no longer the array the last call read (states are not changed in place)."""
    if config.dual_state:
        return None
    arrs = _AUX_OF(st.__dict__)
    last = getattr(_LAST, "aux", None)
    if last is not None and all(map(operator.is_, arrs, last[0])):
        aux = last[1]
    else:
        if any(a.shape != (1,) for a in arrs):
            return None
        aux = tuple(a.tolist()[0] for a in arrs)
        _LAST.aux = (arrs, aux)
    paused, obstacle, enabled, current, reverse, buoy, trim = aux[:7]
    if paused or obstacle or not enabled or current:
        return None
    if not v22 and (reverse or buoy or trim):
        return None
    return aux


def iterate_one(config: UsmConfig, state: UsmState, moos_time: float) -> tuple[UsmState, Pubs]:
    """One iteration of one vehicle at MOOS time ``moos_time`` [s].

    Parameters
    ----------
    config : UsmConfig
        Effective parameters.
    state : UsmState
        State of one vehicle (N = 1) after the mail of this iteration.
    moos_time : float
        MOOS time of this iteration [s].

    Returns
    -------
    (UsmState, list of (str, float or str))
        The new state (the same as :func:`~marinesim.models.usm.publish.iterate` gives) and
        the publications, in order, as :func:`scalar_pubs` of its publications.
    """
    v22 = config.variant == "usm_v22"
    t = float(moos_time)
    aux = _short_path(config, state, v22)
    if aux is None:
        new, pubs = iterate(config, state, np.array([t]))
        return new, scalar_pubs(pubs)
    pause_ticks, propagated, drift_fresh, alt_set = aux[7:]
    d = state.__dict__
    buf = _pack(d)
    flat = buf.reshape(R.NU)
    flat[R.PAUSE] = float(pause_ticks // 100)
    flat[R.HOLD] = 0.0
    flat[R.CLK] = t
    it = d["iteration"].copy()
    mv_pc, mv_mp, mv_w = _law_config(config)
    R.usm_propagate_map(
        memoryview(buf.T), memoryview(it), mv_pc, mv_mp,
        memoryview(d["drift_x"]), memoryview(d["drift_y"]), mv_w, 1,
    )  # fmt: skip
    names, cols = _WRITTEN[v22]
    ch: dict[str, Any] = dict(zip(names, buf[cols], strict=True))  # (rows of one copy)
    ch["geo_x"] = ch["x"]
    ch["geo_y"] = ch["y"]
    ch["iteration"] = it
    v = flat.tolist()
    wd = v[R.WD]
    if wd and not alt_set and wd > 0:  # (set once: the same array while it stays set)
        ch["altitude_set"] = np.array([True])
        alt_set = True
    if not propagated:
        ch["propagated"] = np.array([True])
    pubs: Pubs = []
    if not v22 or int(it[0]) % 2 == 0:
        _post_record(config, state.geodesy, pubs, v, alt_set, v22)
    if drift_fresh:
        text = drift_summary(v[R.DRX], v[R.DRY])
        if not v22:
            pubs.append(("USM_FSUMMARY", text))
        pubs.append(("USM_DRIFT_SUMMARY", text))
        ch["drift_fresh"] = np.array([False])
    new = _evolve(state, ch)
    _LAST.pack = (_FIELDS_OF(new.__dict__), buf)
    return new, pubs


#: The state's fields in the order of the rows' columns.
_FIELDS_OF = operator.itemgetter(*R.FIELDS)
_LAST = threading.local()


def _pack(d: dict[str, Any]) -> np.ndarray:
    """The (NU, 1) rows of a state (its ``__dict__`` ``d``), a fresh matrix: a copy of the
    last iteration's rows when the state is (mostly) the one that iteration returned, with
    the fields mail replaced since written again; else all fields packed."""
    fs = _FIELDS_OF(d)
    last = getattr(_LAST, "pack", None)
    if last is not None:
        prev, prev_buf = last
        buf = prev_buf.copy()  # (its rows are the last state's arrays: never written)
        if not all(map(operator.is_, fs, prev)):
            flat = buf.reshape(R.NU)
            for c, (a, b) in enumerate(zip(fs, prev, strict=True)):
                if a is not b:
                    flat[c] = a[0]
        return buf
    buf = np.empty((R.NU, 1))
    np.concatenate(fs, out=buf.reshape(R.NU)[:_NF])
    return buf


def _law_config(config: UsmConfig) -> tuple[memoryview, memoryview, memoryview]:
    """Memoryviews of ``pc``, ``mp`` (:func:`~marinesim.models.usm.publish._config_rows`)
    and of a scratch matrix, kept per thread while the configuration's rows stay."""
    pc, mp = _config_rows(config)
    got = getattr(_LAST, "law", None)
    if got is None or got[0] is not pc or got[1] is not mp:
        got = _LAST.law = (
            pc,
            mp,
            memoryview(pc),
            memoryview(mp),
            memoryview(np.empty((1, R.NSCRATCH))),
        )
    return got[2], got[3], got[4]


def _post_record(
    config: UsmConfig, geodesy: Any, pubs: Pubs, v: list[float], alt_set: bool, v22: bool
) -> None:
    """The NAV record's publications of one vehicle on the short path (the scalar form of
    :func:`marinesim.models.usm.publish._post_record`, one record, every vehicle posting)."""
    x, y, depth = v[R.X], v[R.Y], v[R.DEP]
    geo = geodesy is not None
    vals: list[float | str] = [x, y]
    if geo:
        vals += geodesy.local_to_latlon_1(x, y)  # (V22's geo_x, geo_y: here x, y)
    sp = v[R.SPD]
    if config.compat == "moos":
        sp = snap_speed_1(sp)
    if v22:
        ms = float(config.max_speed)
        if ms < sp or ms != ms:  # np.minimum (NaN passes)
            sp = ms
    hog = v[R.HOG]
    if not 0.0 <= hog < 360.0:
        hog = float(moos_angle360(np.array([hog]))[0])
    vals += [v[R.HDG], sp, depth, "TRUE", -depth, v[R.PIT], v[R.YAW], x, y, hog, v[R.SOG]]
    if alt_set:
        vals.append(v[R.ALT])
    names = record_names(config.prefix, geo, alt_set)
    pubs += [kv for kv in zip(names, vals, strict=True) if kv[1] == kv[1]]  # NaN: not posted
