"""The uSimMarine model's mail (spec §6): one typed MOOS message applied to some or all
vehicles (:func:`apply_mail`).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError
from marinesim.core.frames import moos_angle360 as _angle360
from marinesim.core.frames import moos_heading_to_radians as _heading_to_radians
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import _DEAD_ALIASES, _DOUBLE_VARS, _STRING_VARS, _V22_ONLY
from marinesim.models.usm.moos_math import _set_boolean_on_string, rel_ang
from marinesim.models.usm.state import _RECORD, UsmState, _evolve
from marinesim.models.usm.thrustmap import (
    is_moos_number,
    moos_atof,
)

# --------------------------------------------------------------------------------------
# mail (§6)
# --------------------------------------------------------------------------------------


def _parse_drift_vector(text: str) -> tuple[float, float] | None:
    """``"ang,mag"`` → (dx, dy) [m/s] as ``setDriftVector`` computes them, or None."""
    left, sep, right = text.partition(",")
    left = left.strip(" \t")
    right = right.strip(" \t") if sep else ""
    if not is_moos_number(left) or not is_moos_number(right):
        return None
    ang = float(_angle360(np.array([moos_atof(left)]))[0])
    mag = moos_atof(right)
    rads = float(_heading_to_radians(ang))
    return math.cos(rads) * mag, math.sin(rads) * mag


def _init_position(text: str) -> tuple[list[tuple[str, float]], bool, list[str]]:
    """``initPosition``: the (key, value) items applied before the first unknown key.

    Values are read like C ``atof`` ("12abc" → 12, junk → 0), as the program does; each value
    that is not a plain number is noted, and a non-finite one ("nan", "inf", which C ``atof``
    would return) is rejected so that it cannot poison the state [ours].  Returns the items,
    whether the whole text was read, and the notes.
    """
    out: list[tuple[str, float]] = []
    notes: list[str] = []
    if text == "":
        return out, True, notes  # MOOS parseString("") has no items
    for i, raw in enumerate(text.split(",")):
        item = raw.strip(" \t").lower()
        param, _sep, value = item.partition("=")
        param = param.strip(" \t")
        value = value.strip(" \t")
        if value == "":
            value = param
            param = ("x", "y", "heading", "speed", "depth")[i] if i < 5 else param
        key = _RESET_KEYS.get(param)
        if key is None:
            return out, False, notes
        if _NON_FINITE_RE.match(value):
            notes.append(f"item {raw.strip()!r}: non-finite value rejected, {key} kept")
            continue
        val = moos_atof(value)
        if not is_moos_number(value):
            notes.append(f"item {raw.strip()!r}: {value!r} is not a number, read as {val:g} (atof)")
        out.append((key, val))
    return out, True, notes


_RESET_KEYS = {
    "x": "x",
    "y": "y",
    "heading": "heading",
    "deg": "heading",
    "hdg": "heading",
    "speed": "speed",
    "spd": "speed",
    "depth": "depth",
    "dep": "depth",
}
_NON_FINITE_RE = re.compile(r"^[+-]?(nan|inf)", re.IGNORECASE)


@lru_cache(maxsize=8)
def _all_rows(n: int) -> NDArray[np.intp]:
    a = np.arange(n)
    a.flags.writeable = False
    return a


def _rows_index(n: int, rows: ArrayLike | None) -> NDArray[np.intp]:
    if rows is None:
        return _all_rows(n)
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n,):
            raise ConfigError(f"row mask must have shape ({n},), got {r.shape}", param="rows")
        return np.flatnonzero(r)
    return r.astype(np.intp).reshape(-1)


def apply_mail(
    config: UsmConfig,
    state: UsmState,
    var: str,
    value: float | str | ArrayLike,
    *,
    moos_time: float,
    rows: ArrayLike | None = None,
    source: str = "",
) -> tuple[UsmState, list[tuple[str, object]], list[str]]:
    """Apply one typed MOOS message (spec §6) to some or all vehicles.

    Parameters
    ----------
    config : UsmConfig
        Effective parameters (``variant`` and ``compat`` select the rules).
    state : UsmState
        Current state.
    var : str
        MOOS variable name (case-sensitive, as MOOS).
    value : float, str or array_like
        A ``str`` is a MOOS *string* message (its numeric value reads −1); a number is a
        *double* message (its string value reads ""); an array (one value per selected row)
        is a batch of double messages.
    moos_time : float
        MOOS time at which the message is handled [s] (the time of the iteration it
        precedes); used by the rudder rate limit, the pause clock and the handshakes.
    rows : array_like of int or bool, optional
        Vehicles that receive the message (default: all).
    source : str
        The sender (``DRIFT_*`` sources; V22 posts a drift summary for each new source).

    Returns
    -------
    (UsmState, posts, warnings)
        ``posts`` are immediate publications ``(name, value)`` — ``USM_RESET_COUNT`` (an
        array (N,), NaN for rows not reset), ``BUOYANCY_REPORT``/``TRIM_REPORT`` (str).
        ``warnings`` are texts naming variable, source and time (wrong message type,
        non-finite value rejected, unsubscribed or dead alias, mode-dependent variable).
    """
    n = state.n
    v22 = config.variant == "usm_v22"
    doc = config.compat == "doc"
    idx = _rows_index(n, rows)
    posts: list[tuple[str, object]] = []
    warns: list[str] = []
    where = f"{var} from {source or '?'} at t={moos_time:.6g} s"
    if idx.size == 0:
        return state, posts, warns

    is_str = isinstance(value, str)
    if is_str:
        sval = str(value)
        dval: Any = -1.0
    else:
        sval = ""
        dval = np.asarray(value, dtype=np.float64)
        if dval.ndim == 0 or (dval.size == 1 and idx.size == 1):
            dval = float(dval.reshape(-1)[0])  # one value: the scalar path
        elif dval.shape != idx.shape:
            if dval.shape == (n,):
                dval = dval[idx]
            else:
                raise ConfigError(
                    f"{var}: value array shape {dval.shape} does not match the rows ({idx.size})",
                    param=var,
                )
        # one reduction: a finite sum means every value is finite (an overflowing sum of
        # finite values falls through to the element check)
        if isinstance(dval, float):
            all_finite = math.isfinite(dval)
        else:
            all_finite = math.isfinite(float(np.sum(dval))) or bool(np.all(np.isfinite(dval)))
        if not all_finite:
            warns.append(f"{where}: non-finite value rejected; previous value kept")
            ok = np.isfinite(dval)
            if np.ndim(dval) == 0:
                return state, posts, warns
            idx = idx[ok]
            dval = dval[ok]
            if idx.size == 0:
                return state, posts, warns

    # aliases and subscriptions
    warned = state.warned
    if var in ("USM_BUOYANCY_RATE", "USM_WATER_DEPTH", "USM_CURRENT_FIELD"):
        if var not in warned:
            warned = warned | {var}
            if doc:
                warns.append(
                    f"{where}: accepted in the documented mode; the real program "
                    "does not subscribe to it (compat='moos' ignores it)"
                )
            else:
                warns.append(f"{where}: not subscribed by the program (compat='moos'); ignored")
        if not doc:
            return _evolve(state, {"warned": warned}), posts, warns
        if var == "USM_BUOYANCY_RATE":
            var = "BUOYANCY_RATE"
        elif var == "USM_WATER_DEPTH":
            var = "WATER_DEPTH"
    if var in _DEAD_ALIASES:
        warns.append(f"{where}: dead alias, not subscribed by the program; ignored")
        return state, posts, warns
    if var in _V22_ONLY and not v22:
        warns.append(f"{where}: not subscribed by uSimMarine (V22 only); ignored")
        return state, posts, warns
    known = var in _DOUBLE_VARS or var in _STRING_VARS or var == "OBSTACLE_HIT"
    if not known:
        warns.append(f"{where}: not a uSimMarine subscription; ignored")
        return state, posts, warns
    if var in _DOUBLE_VARS and is_str:
        warns.append(f"{where}: string message for a double variable (reads -1)")
    elif var in _STRING_VARS and not is_str:
        warns.append(f"{where}: double message for a string variable (reads '')")

    ch: dict[str, Any] = {}
    if warned is not state.warned:
        ch["warned"] = warned

    def get(name: str) -> Any:
        return ch[name] if name in ch else getattr(state, name)

    def put(name: str, rows_: Any, val: Any, *, owned: bool = False) -> None:
        """Set ``name[rows_] = val`` on a copy (state arrays are never written in place).

        ``rows_`` may be ``slice(None)`` (every vehicle): then the new array is ``val``
        itself when the caller ``owned`` it (a fresh array of the right shape and dtype),
        else one copy of it, instead of a copy of the old array plus an assignment.
        """
        old = get(name)
        if isinstance(rows_, slice) and rows_ == slice(None):
            if owned:
                ch[name] = val
            elif np.ndim(val) == 0:
                ch[name] = np.full(old.shape, val, dtype=old.dtype)
            else:
                ch[name] = np.array(np.broadcast_to(val, old.shape), dtype=old.dtype)
            return
        a = np.array(old, copy=True)
        a[rows_] = val
        ch[name] = a

    # every vehicle receives the message (no row selection, no value rejected)
    every = rows is None and idx.size == n

    def sub(mask: Any) -> tuple[Any, Any]:
        m = np.asarray(mask, dtype=bool)
        if every and m.all():
            return slice(None), dval  # every vehicle: a slice is much cheaper than an index
        d = dval[m] if np.ndim(dval) else dval
        return idx[m], d

    t_msg = float(moos_time)

    if var == "DESIRED_THRUST":
        dm = state.diff_mode if v22 else state.diff_flag
        gate = ~(dm if every else dm[idx])
        r, d = sub(gate)
        put("thrust", r, d)
        put("diff_mode", r, False)
    elif var == "DESIRED_RUDDER":
        dm = state.diff_mode if v22 else state.diff_flag
        gate = ~(dm if every else dm[idx])
        r, d = sub(gate)
        prev = state.rudder[r]
        rate = config.max_rudder_degs_per_sec
        if rate > 0:
            maxd = np.subtract(t_msg, state.rudder_tstamp[r])
            maxd *= rate
        else:
            maxd = np.full(np.shape(prev), 100.0)
        new_rudder = _limit_change(np.subtract(d, prev), maxd)
        new_rudder += prev  # prev + change
        # (every vehicle: the old rudder array itself becomes rudder_prev, no copy needed —
        # state arrays are never written in place)
        put("rudder_prev", r, state.rudder if isinstance(r, slice) else prev, owned=True)
        put("rudder", r, new_rudder, owned=np.shape(new_rudder) == (n,))
        put("diff_mode", r, False)
        put("rudder_tstamp", r, t_msg)
    elif var == "DESIRED_ELEVATOR":
        put("elevator", idx, dval)
    elif var in ("DESIRED_THRUST_L", "DESIRED_THRUST_R"):
        gate = (state.diff_mode if v22 else state.diff_flag)[idx]
        r, d = sub(gate)
        if isinstance(r, slice):
            r = idx
        d = np.clip(d, -100.0, 100.0)
        rv = state.reverse[r]
        left = var == "DESIRED_THRUST_L"
        own, other = ("thrust_l", "thrust_r") if left else ("thrust_r", "thrust_l")
        dd = np.broadcast_to(d, r.shape)
        put(own, r[~rv], dd[~rv])
        put(other, r[rv], -dd[rv])
        put("diff_mode", r, True)
    elif var == "THRUST_MODE_DIFFERENTIAL":
        if v22:
            s = sval.lower()
            if s in ("differential", "true"):
                put("diff_mode", idx, True)
            elif s in ("normal", "false"):
                put("diff_mode", idx, False)
        else:
            flags = np.array(
                [_set_boolean_on_string(bool(b), sval) for b in state.diff_flag[idx]], dtype=bool
            )
            put("diff_flag", idx, flags)
            put("diff_mode", idx, flags)
    elif var == "THRUST_MODE_REVERSE":
        s = sval.lower()
        if v22:
            if s in ("reverse", "true"):
                put("reverse", idx, True)
            elif s in ("normal", "false"):
                put("reverse", idx, False)
        else:
            put("reverse", idx, s == "true")
    elif var == "USM_SIM_PAUSED":
        if v22:
            newp = np.array(
                [_set_boolean_on_string(bool(b), sval) for b in state.paused[idx]], dtype=bool
            )
        else:
            newp = np.full(idx.shape, sval.upper() == "TRUE")
        oldp = state.paused[idx]
        start = idx[newp & ~oldp]
        stop = idx[~newp & oldp]
        if start.size:
            put("pause_start", start, t_msg)
        if stop.size:
            ticks = np.rint((t_msg - state.pause_start[stop]) * 100.0).astype(np.int64)
            put("pause_ticks", stop, state.pause_ticks[stop] + ticks)
        put("paused", idx, newp)
    elif var == "BUOYANCY_RATE":
        put("buoyancy_rate", idx, dval)
    elif var == "ROTATE_SPEED":
        put("rotate_speed", idx, dval)
    elif var in ("DRIFT_X", "CURRENT_X", "DRIFT_Y", "CURRENT_Y"):
        put("drift_x" if var.endswith("_X") else "drift_y", idx, dval)
        if v22:
            _v22_source(state, ch, idx, source)
    elif var in ("DRIFT_VECTOR", "DRIFT_VECTOR_ADD"):
        vec = _parse_drift_vector(sval)
        if vec is None:
            warns.append(f"{where}: {sval!r} is not 'ang,mag' with two plain numbers; ignored")
        else:
            if var == "DRIFT_VECTOR_ADD":
                put("drift_x", idx, state.drift_x[idx] + vec[0])
                put("drift_y", idx, state.drift_y[idx] + vec[1])
            else:
                put("drift_x", idx, vec[0])
                put("drift_y", idx, vec[1])
            if v22:
                _v22_source(state, ch, idx, source)
            else:
                put("drift_fresh", idx, True)
    elif var == "DRIFT_VECTOR_MULT":
        dxr = state.drift_x[idx]
        dyr = state.drift_y[idx]
        ang = rel_ang(0.0, 0.0, dxr, dyr)
        mag = np.hypot(dxr, dyr)
        new_mag = mag * dval
        rads = _heading_to_radians(ang)
        put("drift_x", idx, np.cos(rads) * new_mag)
        put("drift_y", idx, np.sin(rads) * new_mag)
        if v22:
            _v22_source(state, ch, idx, source)
        else:
            put("drift_fresh", idx, True)
    elif var == "WATER_DEPTH":
        d = np.broadcast_to(dval, idx.shape)
        ok = d >= 0
        put("water_depth", idx[ok], d[ok])
    elif var == "USM_RESET":
        counts = state.reset_count[idx] + 1
        put("reset_count", idx, counts)
        items, _ok, notes = _init_position(sval)
        warns.extend(f"{where}: {note}" for note in notes)
        for key, val in items:
            put(key, idx, val)
            put("gt_" + key, idx, val)
        out = np.full(n, np.nan)
        out[idx] = counts
        posts.append(("USM_RESET_COUNT", out))
        if not _ok:
            warns.append(f"{where}: {sval!r} has an unknown key; items before it applied")
    elif var == "USM_TURN_RATE":
        put("turn_rate", idx, np.clip(dval, 0.0, 100.0))
    elif var == "USM_ENABLED":
        en = np.array(
            [_set_boolean_on_string(bool(b), sval) for b in state.enabled[idx]], dtype=bool
        )
        put("enabled", idx, en)
    elif var == "OBSTACLE_HIT":
        if v22:
            if sval.lower() == "true":
                put("obstacle_hit", idx, True)
                put("speed", idx, 0.0)
                put("gt_speed", idx, 0.0)
        else:
            hit = np.broadcast_to(np.asarray(dval) != 0, idx.shape)
            put("obstacle_hit", idx[hit], True)
    elif var == "BUOYANCY_CONTROL":
        if sval.lower() == "true":
            put("buoyancy_rate", idx, 0.0)
            put("buoy_req_time", idx, t_msg)
            put("buoy_req", idx, True)
            put("last_report", idx, t_msg)
            posts.append(("BUOYANCY_REPORT", "status=1,error=0,progressing,buoyancy=0.0"))
    elif var == "TRIM_CONTROL":
        if sval.lower() == "true":
            put("trim_req_time", idx, t_msg)
            put("trim_req", idx, True)
            put("last_report", idx, t_msg)
            posts.append(
                ("TRIM_REPORT", "status=1,error=0,progressing,trim_pitch=0.0,trim_roll=0.0")
            )
    elif var == "USM_CURRENT_FIELD":
        act = np.array(
            [_set_boolean_on_string(bool(b), sval) for b in state.current_active[idx]], dtype=bool
        )
        put("current_active", idx, act & (config.current_field is not None))
    elif var in ("NAV_X", "NAV_Y", "NAV_HEADING"):
        off = ~state.enabled[idx]
        r, d = sub(off)
        if isinstance(r, slice):
            r = idx
        key = {"NAV_X": "x", "NAV_Y": "y", "NAV_HEADING": "heading"}[var]
        put(key, r, d)
        put("gt_" + key, r, d)
        put("rudder", r, 0.0)
    elif var == "USM_RESET_NAV":
        for k in _RECORD:
            put(k, idx, getattr(state, "gt_" + k)[idx])
    elif var == "USM_TURN_RADIUS":
        d = np.broadcast_to(dval, idx.shape)
        ok = d >= 0
        put("turn_radius", idx[ok], d[ok])
    return _evolve(state, ch), posts, warns


def _limit_change(change: Any, maxd: Any) -> Any:
    """``setRudder``'s clamp of the requested change to ±maxΔ (as the program branches)."""
    if np.size(maxd) and np.min(maxd) >= 0:
        if isinstance(change, np.ndarray) and change.shape == np.shape(maxd) and change.ndim:
            # identical for maxΔ >= 0; in place on the caller's fresh ``change``
            np.maximum(change, np.negative(maxd), out=change)
            np.minimum(change, maxd, out=change)
            return change
        return np.minimum(np.maximum(change, -maxd), maxd)  # identical for maxΔ >= 0
    return np.where(
        change > 0,
        np.where(change > maxd, maxd, change),
        np.where(-change > maxd, -maxd, change),
    )


def _v22_source(state: UsmState, ch: dict[str, Any], idx: NDArray[np.intp], source: str) -> None:
    """V22 ``setDriftX/Y``: a new non-empty sender makes the drift fresh."""
    if not source:
        return
    srcs = list(ch.get("drift_sources", state.drift_sources))
    fresh = np.array(ch.get("drift_fresh", state.drift_fresh), copy=True)
    for i in idx:
        if source not in srcs[i]:
            srcs[i] = srcs[i] | {source}
            fresh[i] = True
    ch["drift_sources"] = tuple(srcs)
    ch["drift_fresh"] = fresh
